import Foundation
import GraphStore

/// A clock that moves only when told to: timers fire inside ``advance(by:)``.
package final class ManualWriterClock: WriterClock {
    private struct Timer {
        let deadline: Duration
        let action: @Sendable () -> Void
    }

    private struct State {
        var now: Duration = .zero
        var timers: [Timer] = []
    }

    private let state = Guarded(State())

    package init() {}

    package var now: Duration {
        state.withLock { $0.now }
    }

    /// The number of timers waiting to fire.
    package var pendingTimers: Int {
        state.withLock { $0.timers.count }
    }

    package func schedule(at deadline: Duration, _ action: @escaping @Sendable () -> Void) {
        let due: Bool = state.withLock { state in
            if deadline <= state.now { return true }
            state.timers.append(Timer(deadline: deadline, action: action))
            return false
        }
        if due { DispatchQueue.global().async(execute: action) }
    }

    /// Moves the clock forward and runs every timer that is now due, in deadline order, on the
    /// caller's thread.
    package func advance(by duration: Duration) {
        let due: [Timer] = state.withLock { state in
            state.now += duration
            let now = state.now
            let due = state.timers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.timers.removeAll { $0.deadline <= now }
            return due
        }
        for timer in due { timer.action() }
    }
}
