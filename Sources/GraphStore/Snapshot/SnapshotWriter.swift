import Foundation
import Logging

/// The coalescing background writer of a snapshot-file store.
///
/// After a commit it waits `interval`, then writes the newest version; at most one write is
/// in flight and at most one starts per interval. A write encodes, compresses and replaces the
/// file on the writer's own queue, off every caller's thread. `flush()` starts a write at once
/// and waits for one that covers every commit made before it. A failed write keeps its error,
/// reports it, and is retried with back-off; the graph in memory is never dropped.
///
/// With a journal, a successful write of version N drops the journal records that the
/// snapshot it replaced (now `<file>.previous`) holds, so the journal always reaches back to
/// the previous snapshot: recovering from it loses nothing either.
final class SnapshotWriter: Sendable {
    let target: SnapshotTarget
    private let interval: Duration
    private let clock: any WriterClock
    private let beforeWrite: (@Sendable () -> Void)?
    /// The serial queue every write runs on. Internal so that tests can wait for it to drain.
    let queue = DispatchQueue(label: "GraphStore.SnapshotWriter", qos: .utility)
    private let state: Guarded<State>
    private let logger = Logger(label: "GraphStore.SnapshotWriter")
    private let broadcaster = Broadcaster<StoreEvent>()

    private struct State {
        var newest: GraphVersion
        var isWriting = false
        var timerArmed = false
        var timerGeneration = 0
        var lastWriteStart: Duration?
        var consecutiveFailures = 0
        var waiters = FlushWaiters()
        var status = StoreStatus()
        var isClosed = false
        /// The store's lineage, written into every snapshot header.
        var lineage: UUID?
        var journal: StoreJournal?
    }

    init(target: SnapshotTarget, opened: GraphVersion, interval: Duration, clock: any WriterClock, beforeWrite: (@Sendable () -> Void)?) {
        self.target = target
        self.interval = interval
        self.clock = clock
        self.beforeWrite = beforeWrite
        var initial = State(newest: opened)
        initial.status.durableVersion = opened.number
        state = Guarded(initial)
    }

    /// Sets the version the store opened with (before any commit), the version its snapshot
    /// file holds (older when a journal was replayed), the store's lineage and its journal.
    func reset(to opened: GraphVersion, snapshotVersion: UInt64, lineage: UUID, journal: StoreJournal?) {
        state.withLock { state in
            state.newest = opened
            state.status.durableVersion = snapshotVersion
            state.lineage = lineage
            state.journal = journal
        }
        // The replayed records are not in the snapshot yet: write one soon.
        if opened.number > snapshotVersion { didCommit(opened, force: true) }
    }

    // MARK: - Events from the store

    /// A commit happened: remember the newest version and arm the timer. Never blocks.
    ///
    /// - Complexity: O(1).
    func didCommit(_ version: GraphVersion, force: Bool = false) {
        state.withLock { state in
            guard version.number > state.newest.number || (force && version.number > state.status.durableVersion) else { return }
            state.newest = version
            if !state.isWriting && !state.timerArmed && !state.isClosed {
                arm(&state, at: clock.now + interval)
            }
        }
    }

    /// Returns when every version committed before the call is on disk; starts a write at once
    /// if one is needed.
    ///
    /// - Throws: the error of the write that was meant to cover this flush.
    func flush() async throws {
        try await awaitFlush { continuation in
            state.withLock { state in
                let decision = state.waiters.admit(
                    continuation, newest: state.newest.number, durable: state.status.durableVersion, isClosed: state.isClosed)
                if case .waiting = decision, !state.isWriting { startWrite(&state) }
                return decision
            }
        }
    }

    /// Flushes, then stops scheduling writes and ends the event streams.
    ///
    /// - Throws: the flush's error.
    func close() async throws {
        let flushed = await closeStoreWriter(
            flush: flush,
            stop: {
                state.withLock { state in
                    state.isClosed = true
                    state.timerArmed = false
                    state.timerGeneration += 1
                }
            },
            queue: queue, events: broadcaster)
        try flushed.get()
    }

    var status: StoreStatus {
        state.withLock { $0.status }
    }

    func events() -> AsyncStream<StoreEvent> {
        broadcaster.stream()
    }

    // MARK: - Scheduling (called with the state locked)

    private func arm(_ state: inout State, at deadline: Duration) {
        state.timerArmed = true
        state.timerGeneration += 1
        let generation = state.timerGeneration
        clock.schedule(at: deadline) { [weak self] in self?.timerFired(generation) }
    }

    private func timerFired(_ generation: Int) {
        state.withLock { state in
            guard state.timerArmed, state.timerGeneration == generation else { return }
            state.timerArmed = false
            if !state.isWriting && state.newest.number > state.status.durableVersion {
                startWrite(&state)
            }
        }
    }

    private func startWrite(_ state: inout State) {
        state.isWriting = true
        state.timerArmed = false
        state.timerGeneration += 1
        state.lastWriteStart = clock.now
        let version = state.newest
        let lineage = state.lineage
        queue.async { [self] in write(version, lineage: lineage) }
    }

    // MARK: - Writing (on the writer's queue)

    private func write(_ version: GraphVersion, lineage: UUID?) {
        beforeWrite?()
        let started = ContinuousClock.now
        let result = Result { try target.write(version, lineage: lineage) }
        let duration = ContinuousClock.now - started
        let (event, finished, failedError, journalCut) = state.withLock { state in
            var event: StoreEvent
            var journalCut: (StoreJournal, UInt64)?
            var finished: [CheckedContinuation<Void, any Error>]
            var failedError: GraphStoreError?
            state.isWriting = false
            switch result {
            case .success(let bytes):
                state.consecutiveFailures = 0
                if let journal = state.journal { journalCut = (journal, state.status.durableVersion) }
                state.status.writesCompleted += 1
                state.status.lastWriteDuration = duration
                state.status.lastWriteBytes = bytes
                state.status.durableVersion = version.number
                state.status.lastError = nil
                finished = state.waiters.takeCovered(by: version.number)
                event = .wrote(version: version.number, bytes: bytes, duration: duration)
                if state.newest.number > version.number && !state.isClosed {
                    if state.waiters.isEmpty {
                        arm(&state, at: max(clock.now, (state.lastWriteStart ?? clock.now) + interval))
                    } else {
                        startWrite(&state)
                    }
                }
            case .failure(let error):
                let error = error as? GraphStoreError ?? .fileOperationFailed(path: target.url.path, operation: "write snapshot", reason: "\(error)")
                state.consecutiveFailures += 1
                state.status.failedWrites += 1
                state.status.lastError = error
                finished = state.waiters.takeAll()
                failedError = error
                let delay = storeWriteRetryDelay(afterFailures: state.consecutiveFailures, minimum: interval)
                event = .writeFailed(error, retryIn: delay)
                if !state.isClosed { arm(&state, at: clock.now + delay) }
            }
            return (event, finished, failedError, journalCut)
        }
        if let (journal, previous) = journalCut {
            do {
                try journal.dropRecords(through: previous)
            } catch {
                logger.warning("Could not drop the journal records the snapshots cover; the journal keeps them", metadata: ["error": "\(error)"])
            }
        }
        // Announce before resuming the flushes this write covers: once `flush()` returns, the
        // event is in every stream (and `close()` cannot end a stream before it).
        broadcaster.broadcast(event)
        if let failedError {
            logger.error("Snapshot write failed; the graph stays in memory and the write will be retried", metadata: ["error": "\(failedError)"])
            for waiter in finished { waiter.resume(throwing: failedError) }
        } else {
            for waiter in finished { waiter.resume() }
        }
    }
}
