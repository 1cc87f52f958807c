import Foundation

/// A value behind a lock (a pthread mutex, which the thread sanitizer sees), shareable between tasks: logs, flags and counters for the
/// concurrency tests.
///
/// ```swift
/// let log = Locked<[Int]>([])
/// log.withLock { $0.append(1) }
/// #expect(log.value == [1])
/// ```
public final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `storage` is touched only while `lock` is held.
    private var storage: Value
    private let lock = NSLock()

    public init(_ value: Value) {
        storage = value
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&storage)
    }

    /// A copy of the current value.
    public var value: Value {
        withLock { $0 }
    }
}
