import Foundation

/// The stores whose container was released without `close()` and that are closing in the
/// background (final snapshot, journal removed, lock released). Opening one of them waits for
/// that close, so a container released and opened again in the same process finds its data and
/// no held lock.
package enum StoreClosings {
    private static let closing = ClosingSet()

    /// Marks the store at `path` (a standardized file path) as closing.
    package static func begin(_ path: String) {
        closing.insert(path)
    }

    /// The store at `path` has finished closing.
    package static func end(_ path: String) {
        closing.remove(path)
    }

    /// Waits until no background close of the store at `path` is running, at most `timeout`;
    /// returns at once when none is.
    package static func waitUntilClosed(_ path: String, timeout: Duration = .seconds(60)) {
        closing.wait(for: path, timeout: timeout)
    }

    /// Waits until no background close of a store inside `directory` (a standardized path) is
    /// running, at most `timeout`: for removing a directory without a close writing into it.
    package static func waitUntilClosed(under directory: String, timeout: Duration = .seconds(60)) {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        closing.wait(timeout: timeout) { $0.hasPrefix(prefix) }
    }
}

private final class ClosingSet: @unchecked Sendable {
    // @unchecked Sendable: `paths` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var paths: [String: Int] = [:]

    func insert(_ path: String) {
        condition.lock()
        paths[path, default: 0] += 1
        condition.unlock()
    }

    func remove(_ path: String) {
        condition.lock()
        paths[path] = (paths[path] ?? 1) > 1 ? paths[path]! - 1 : nil
        condition.broadcast()
        condition.unlock()
    }

    func wait(for path: String, timeout: Duration) {
        wait(timeout: timeout) { $0 == path }
    }

    /// Waits until no closing path satisfies `matches`, at most `timeout`.
    func wait(timeout: Duration, for matches: (String) -> Bool) {
        let (seconds, attoseconds) = timeout.components
        let deadline = Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18)
        condition.lock()
        while paths.keys.contains(where: matches), condition.wait(until: deadline) {}
        condition.unlock()
    }
}

/// The executor background closes run on: a queue of its own, off the cooperative thread pool.
/// An open that waits for a close may be blocking a pool thread (`GraphContainer.init` is
/// synchronous), and with a close queued behind it on the same pool, neither would move.
final class StoreClosingExecutor: TaskExecutor {
    static let shared = StoreClosingExecutor()
    private let queue = DispatchQueue(label: "GraphStore.closing", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
