import Foundation

extension GraphContext {
    // MARK: - Serial work

    /// Runs `block` on this context's serial queue, off the caller's thread, and returns its result.
    ///
    /// Blocks passed to `perform` and `performAndWait` on one context run one at a time, in the
    /// order they were submitted, as in Core Data. A context is safe to use from any thread
    /// without them; they are for grouping work that must not interleave.
    ///
    /// - Throws: whatever `block` throws.
    public func perform<T: Sendable, Failure: Error>(
        _ block: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        // The block (and what it holds: for `performBackgroundTask`, the context, and so the
        // store) is let go before the caller resumes: otherwise the queue's thread may still
        // hold it while the caller releases its container and opens the store again, which a
        // store not yet closing refuses as locked.
        let held = PerformedBlock(block)
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: held.run())
            }
        }
        return try result.get()
    }

    /// Runs `block` on this context's serial queue and waits for it; runs it in place when
    /// called from a block already on that queue (reentrant).
    ///
    /// - Throws: whatever `block` throws.
    public func performAndWait<T, Failure: Error>(_ block: () throws(Failure) -> T) throws(Failure) -> T {
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) {
            return try block()
        }
        let result: Result<T, Failure> = queue.sync { Result { () throws(Failure) -> T in try block() } }
        return try result.get()
    }
}

/// A block `perform` runs once on its context's queue and lets go of before it returns the
/// result.
///
/// `@unchecked Sendable`: `block` is written once, in ``run()``, on the context's serial queue,
/// after `init` on the submitting thread; the queue's `async` orders the two.
private final class PerformedBlock<T: Sendable, Failure: Error>: @unchecked Sendable {
    private var block: (@Sendable () throws(Failure) -> T)?

    init(_ block: @escaping @Sendable () throws(Failure) -> T) {
        self.block = block
    }

    /// Runs the block and lets it go.
    func run() -> Result<T, Failure> {
        guard let block else { preconditionFailure("GraphStore: a perform block ran twice") }
        self.block = nil
        return Result { () throws(Failure) -> T in try block() }
    }
}
