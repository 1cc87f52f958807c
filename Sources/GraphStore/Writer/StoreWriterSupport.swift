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
/// - Returns: the flush's outcome, for the writer to throw after its own last steps.
package func closeStoreWriter(
    flush: () async throws -> Void, stop: () -> Void, queue: DispatchQueue, events: Broadcaster<StoreEvent>
) async -> Result<Void, any Error> {
    let flushed: Result<Void, any Error>
    do {
        try await flush()
        flushed = .success(())
    } catch {
        flushed = .failure(error)
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
