import Foundation

/// The clock the snapshot writer schedules its writes by. Production uses the monotonic
/// system clock; tests advance a manual clock (in the test support target) instead of sleeping.
/// Package access, so that the fake stays out of the library.
package protocol WriterClock: Sendable {
    /// Monotonic time since an arbitrary origin.
    var now: Duration { get }
    /// Runs `action` once the clock reaches `deadline` (at once when it already has), on
    /// some thread other than the caller's.
    func schedule(at deadline: Duration, _ action: @escaping @Sendable () -> Void)
}

/// The monotonic system clock, with timers on a global dispatch queue.
package struct SystemWriterClock: WriterClock {
    private static let origin = ContinuousClock.now

    package init() {}

    package var now: Duration {
        ContinuousClock.now - Self.origin
    }

    package func schedule(at deadline: Duration, _ action: @escaping @Sendable () -> Void) {
        let delay = max(.zero, deadline - now)
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: action)
    }
}
