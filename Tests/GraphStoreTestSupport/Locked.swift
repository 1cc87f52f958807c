import Synchronization

/// A value behind a `Mutex`, shareable between tasks: logs, flags and counters for the
/// concurrency tests.
///
/// ```swift
/// let log = Locked<[Int]>([])
/// log.withLock { $0.append(1) }
/// #expect(log.value == [1])
/// ```
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { value in try body(&value) }
    }

    /// A copy of the current value.
    public var value: Value {
        mutex.withLock { $0 }
    }
}
