import Foundation

/// A value behind a lock: the one lock type GraphStore uses.
///
/// Built on `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`: on Linux a
/// contended `Mutex` hands over in the kernel where the thread sanitizer cannot see it, so every
/// access it protects would be reported as a race. A pthread mutex is intercepted by the
/// sanitizer, so `swift test --sanitize=thread` checks GraphStore's real locking.
///
/// ```swift
/// let counter = Guarded(0)
/// counter.withLock { $0 += 1 }
/// ```
///
/// - Complexity: one uncontended lock and unlock per call.
package final class Guarded<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `value` is read and written only inside `withLock`, which holds `lock`.
    private var value: Value
    private let lock = NSLock()

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. `body` must not call back into this lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
