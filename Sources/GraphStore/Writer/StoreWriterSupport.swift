import Foundation

// The bookkeeping every background store writer shares, beside `Broadcaster` for `events()`:
// who waits in `flush()`, how a writer closes, and how long to wait before retrying a failed
// write. Package access so that the stores in other GraphStore modules (SQLite) report and close
// exactly like the snapshot-file store.

// MARK: - FlushWaiters

/// The `flush()` calls waiting for a store version to become durable. A value kept inside the
/// writer's own lock; the continuations it hands back are resumed after the lock is released.
package struct FlushWaiters: Sendable {
    private var waiters: [(version: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []

    package init() {}

    package var isEmpty: Bool { waiters.isEmpty }

    /// Adds a flush that returns once `version` is durable.
    package mutating func add(_ continuation: CheckedContinuation<Void, any Error>, until version: UInt64) {
        waiters.append((version, continuation))
    }

    /// Removes and returns the flushes covered by a write that made `version` durable.
    ///
    /// - Complexity: O(waiters).
    package mutating func takeCovered(by version: UInt64) -> [CheckedContinuation<Void, any Error>] {
        let covered = waiters.filter { $0.version <= version }.map(\.continuation)
        waiters.removeAll { $0.version <= version }
        return covered
    }

    /// Removes and returns every waiting flush (a write failed: each of them throws).
    package mutating func takeAll() -> [CheckedContinuation<Void, any Error>] {
        defer { waiters = [] }
        return waiters.map(\.continuation)
    }
}

extension FlushWaiters {
    /// Decides, under the writer's lock, about a `flush()` that just arrived: it returns at
    /// once when `newest` is already durable, fails with ``GraphStoreError/containerClosed``
    /// once the writer is closed (its lock on the store is released: writing now could clobber
    /// another process's store), and otherwise waits here for a write that covers `newest`.
    /// On ``FlushDecision/waiting`` the writer starts that write unless one is running.
    ///
    /// - Complexity: O(1) amortized.
    package mutating func admit(
        _ continuation: CheckedContinuation<Void, any Error>, newest: UInt64, durable: UInt64, isClosed: Bool
    ) -> FlushDecision {
        if durable >= newest { return .durable }
        if isClosed { return .failed(.containerClosed) }
        add(continuation, until: newest)
        return .waiting
    }
}

// MARK: - Waiting for a flush

/// What a writer decides, under its lock, about a `flush()` that just arrived.
package enum FlushDecision: Sendable {
    /// Everything committed is already durable: return at once.
    case durable
    /// The flush's continuation was added to the writer's ``FlushWaiters``: a write resumes it.
    case waiting
    /// The flush fails at once, for example because the store is closed.
    case failed(GraphStoreError)
}

/// Suspends a `flush()` until the writer resumes it: `decide` runs with the continuation (under
/// the writer's lock, where it either keeps the continuation in its ``FlushWaiters`` or says
/// why not), and the continuation is resumed here, after the lock is released, when it was
/// not kept.
///
/// - Throws: the error `decide` returns, or the one the writer resumes the flush with.
package func awaitFlush(_ decide: (CheckedContinuation<Void, any Error>) -> FlushDecision) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        switch decide(continuation) {
        case .durable: continuation.resume()
        case .waiting: break
        case .failed(let error): continuation.resume(throwing: error)
        }
    }
}

// MARK: - Closing

/// Closes a background store writer in the order every store needs: flush (keeping the
/// outcome), `stop` (under the writer's lock: mark it closed and cancel its timer), let a write
/// already on `queue` finish and announce itself (one a timer started, whose version a
/// concurrent flush already saw as durable), and only then end the event streams, so that no
/// stream ends before the last write's event is in it.
///
/// A flush that fails is made once more before the writer stops: one that arrived while a
/// write ran took that write's failure, and the commits after it had no attempt of their own
/// (under ``Durability/coalesced`` nothing else holds them once the container is gone).
///
/// - Returns: the flush's outcome, for the writer to throw after its own last steps.
package func closeStoreWriter(
    flush: () async throws -> Void, stop: () -> Void, queue: DispatchQueue, events: Broadcaster<StoreEvent>
) async -> Result<Void, any Error> {
    var flushed: Result<Void, any Error> = .success(())
    for _ in 0..<2 {
        do {
            try await flush()
            flushed = .success(())
            break
        } catch {
            flushed = .failure(error)
        }
    }
    stop()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.async { continuation.resume() }
    }
    events.finish()
    return flushed
}

// MARK: - Retry

/// How long a writer waits before retrying after `failures` consecutive failed writes: `minimum`
/// (at least 250 ms), doubled per failure, at most 60 s.
///
/// - Complexity: O(1).
package func storeWriteRetryDelay(afterFailures failures: Int, minimum: Duration) -> Duration {
    let base = max(minimum, .milliseconds(250))
    let factor = 1 << min(max(failures - 1, 0), 8)
    return min(base * factor, .seconds(60))
}

// MARK: - Writer state

/// What every background store writer keeps under its lock: the newest version, whether a write
/// runs, the one timer that may start the next write (the snapshot writer's coalescing delay, the
/// SQLite writer's retry), the `flush()` calls waiting, and the status; beside it, in `own`, what
/// only that writer needs.
package struct StoreWriterState<Own: Sendable>: Sendable {
    package var newest: GraphVersion
    package var isWriting = false
    package var isClosed = false
    package var timer = WriterTimer()
    package var consecutiveFailures = 0
    package var waiters = FlushWaiters()
    package var status = StoreStatus()
    /// What only this writer keeps.
    package var own: Own

    /// A writer whose store opened at `opened`, which is durable.
    package init(opened: GraphVersion, own: Own) {
        newest = opened
        status.durableVersion = opened.number
        self.own = own
    }

    /// Marks the writer closed and cancels its timer: `stop` for ``closeStoreWriter(flush:stop:queue:events:)``.
    package mutating func close() {
        isClosed = true
        timer.cancel()
    }

    /// Marks a write as running and cancels the timer (the write covers what it was for).
    package mutating func beginWrite() {
        isWriting = true
        timer.cancel()
    }

    /// Records a write that made `version` durable; returns the flushes it covers.
    package mutating func recordWrite(of version: UInt64, bytes: Int, duration: Duration) -> [CheckedContinuation<Void, any Error>] {
        isWriting = false
        consecutiveFailures = 0
        status.writesCompleted += 1
        status.lastWriteDuration = duration
        status.lastWriteBytes = bytes
        status.durableVersion = version
        status.lastError = nil
        return waiters.takeCovered(by: version)
    }

    /// Records a failed write; returns every waiting flush, each to throw `error`.
    package mutating func recordFailure(_ error: GraphStoreError) -> [CheckedContinuation<Void, any Error>] {
        isWriting = false
        consecutiveFailures += 1
        status.failedWrites += 1
        status.lastError = error
        return waiters.takeAll()
    }
}

/// A writer's one pending timer: whether it is armed, and a generation that tells the armed
/// timer's firing from a stale one (of a timer since cancelled or armed again).
package struct WriterTimer: Sendable {
    package private(set) var isArmed = false
    private var generation = 0

    package init() {}

    /// Arms the timer, replacing any armed one; returns the generation its firing presents.
    package mutating func arm() -> Int {
        isArmed = true
        generation += 1
        return generation
    }

    /// Disarms the timer: a firing already scheduled is ignored.
    package mutating func cancel() {
        isArmed = false
        generation += 1
    }

    /// Whether a firing of `generation` is the armed timer's; disarms it if so.
    package mutating func fire(_ generation: Int) -> Bool {
        guard isArmed, generation == self.generation else { return false }
        isArmed = false
        return true
    }
}

/// `flush()` of a writer whose state `state` guards: returns when every version committed
/// before the call is durable, and starts a write at once (`startWrite`, under the lock) if one
/// is needed and none runs.
///
/// - Throws: ``GraphStoreError/containerClosed`` once the writer is closed; the error of the
///   write that was meant to cover this flush.
package func flushStoreWriter<Own>(
    _ state: Guarded<StoreWriterState<Own>>, startWrite: (inout StoreWriterState<Own>) -> Void
) async throws {
    try await awaitFlush { continuation in
        state.withLock { state in
            let decision = state.waiters.admit(
                continuation, newest: state.newest.number, durable: state.status.durableVersion, isClosed: state.isClosed)
            if case .waiting = decision, !state.isWriting { startWrite(&state) }
            return decision
        }
    }
}
