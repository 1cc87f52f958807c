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
/// snapshot it replaced (now `<file>.previous`) holds, so after this run's first write the
/// journal reaches back to the previous snapshot: recovering from it loses nothing either.
/// Before that write the journal starts at the snapshot the store opened, newer than
/// `<file>.previous` (kept by an earlier run), and recovery from it is refused, changing nothing.
final class SnapshotWriter: Sendable {
    let target: SnapshotTarget
    private let interval: Duration
    private let clock: any WriterClock
    private let beforeWrite: (@Sendable () -> Void)?
    /// The serial queue every write runs on. Internal so that tests can wait for it to drain.
    let queue = DispatchQueue(label: "GraphStore.SnapshotWriter", qos: .utility)
    private let state: Guarded<StoreWriterState<Own>>
    private let logger = Logger(label: "GraphStore.SnapshotWriter")
    private let broadcaster = Broadcaster<StoreEvent>()

    /// What this writer keeps under its lock beside every writer's state; the timer is the
    /// coalescing delay before the next write.
    private struct Own: Sendable {
        var lastWriteStart: Duration?
        /// The store's lineage, written into every snapshot header.
        var lineage: UUID?
        var journal: StoreJournal?
        /// The file holds the snapshot ``writeFirstSnapshot()`` wrote: the next write does not
        /// keep it as the previous snapshot (see there).
        var holdsFirstSnapshot = false
    }

    private typealias State = StoreWriterState<Own>

    init(target: SnapshotTarget, opened: GraphVersion, interval: Duration, clock: any WriterClock, beforeWrite: (@Sendable () -> Void)?) {
        self.target = target
        self.interval = interval
        self.clock = clock
        self.beforeWrite = beforeWrite
        state = Guarded(State(opened: opened, own: Own()))
    }

    /// Sets the version the store opened with (before any commit), the version its snapshot
    /// file holds (older when a journal was replayed), whether that file is the first snapshot
    /// written for a journal (empty, version 0; the next write does not keep it as previous,
    /// see ``writeFirstSnapshot()``), the store's lineage and its journal.
    func reset(to opened: GraphVersion, snapshotVersion: UInt64, snapshotIsFirst: Bool, lineage: UUID, journal: StoreJournal?) {
        state.withLock { state in
            state.newest = opened
            state.status.durableVersion = snapshotVersion
            state.own.holdsFirstSnapshot = snapshotIsFirst
            state.own.lineage = lineage
            state.own.journal = journal
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
            if !state.isWriting && !state.timer.isArmed && !state.isClosed {
                arm(&state, at: clock.now + interval)
            }
        }
    }

    /// Returns when every version committed before the call is on disk; starts a write at once
    /// if one is needed.
    ///
    /// - Throws: the error of the write that was meant to cover this flush.
    func flush() async throws {
        try await flushStoreWriter(state) { startWrite(&$0) }
    }

    /// Flushes, then stops scheduling writes and ends the event streams.
    ///
    /// - Throws: the flush's error.
    func close() async throws {
        let flushed = await closeStoreWriter(
            flush: flush,
            stop: { state.withLock { $0.close() } }, queue: queue, events: broadcaster)
        try flushed.get()
    }

    var status: StoreStatus {
        state.withLock { $0.status }
    }

    /// Writes the newest version as the store's first snapshot, at once and durably, unless a
    /// snapshot file is there already: for the journal's first record, which must continue a
    /// file that names the model version and the lineage (opening a store migrates or refuses
    /// by the snapshot's model version; a journal alone has none). Called under the commit
    /// lock before that record is appended, so the newest version is the one it continues.
    /// Runs on the writer's queue, after any write in flight; it is not a coalesced write and
    /// sends no event. The next write replaces it without keeping it as `<file>.previous`: the
    /// previous snapshot stays one the app's saves wrote, as before journals needed this one
    /// (recovery never rolls a damaged store back to the empty store it started as).
    ///
    /// - Throws: as ``SnapshotTarget/write(_:lineage:keepsPrevious:)``.
    /// - Complexity: O(objects) to encode (none, for a new store), plus the write's two fsyncs.
    func writeFirstSnapshot() throws(GraphStoreError) {
        let written: Result<Void, GraphStoreError> = queue.sync {
            guard !FileManager.default.fileExists(atPath: target.url.path) else { return .success(()) }
            let (version, lineage) = state.withLock { ($0.newest, $0.own.lineage) }
            do {
                _ = try target.write(version, lineage: lineage, keepsPrevious: false)
                state.withLock { $0.own.holdsFirstSnapshot = true }
                return .success(())
            } catch {
                return .failure(
                    error as? GraphStoreError
                        ?? .fileOperationFailed(path: target.url.path, operation: "write the first snapshot", reason: "\(error)"))
            }
        }
        try written.get()
    }

    func events() -> AsyncStream<StoreEvent> {
        broadcaster.stream()
    }

    // MARK: - Scheduling (called with the state locked)

    private func arm(_ state: inout State, at deadline: Duration) {
        let generation = state.timer.arm()
        clock.schedule(at: deadline) { [weak self] in self?.timerFired(generation) }
    }

    private func timerFired(_ generation: Int) {
        state.withLock { state in
            guard state.timer.fire(generation) else { return }
            if !state.isWriting && state.newest.number > state.status.durableVersion {
                startWrite(&state)
            }
        }
    }

    private func startWrite(_ state: inout State) {
        state.beginWrite()
        state.own.lastWriteStart = clock.now
        let version = state.newest
        let lineage = state.own.lineage
        queue.async { [self] in write(version, lineage: lineage) }
    }

    // MARK: - Writing (on the writer's queue)

    private func write(_ version: GraphVersion, lineage: UUID?) {
        beforeWrite?()
        // Read here, on the queue: the first snapshot is written on it too.
        let keepsPrevious = state.withLock { !$0.own.holdsFirstSnapshot }
        let started = ContinuousClock.now
        let result = Result { try target.write(version, lineage: lineage, keepsPrevious: keepsPrevious) }
        let duration = ContinuousClock.now - started
        let (event, finished, failedError, journalCut) = state.withLock { state in
            var event: StoreEvent
            var journalCut: (journal: StoreJournal, previous: UInt64)?
            var finished: [CheckedContinuation<Void, any Error>]
            var failedError: GraphStoreError?
            switch result {
            case .success(let bytes):
                state.own.holdsFirstSnapshot = false
                if let journal = state.own.journal { journalCut = (journal, state.status.durableVersion) }
                finished = state.recordWrite(of: version.number, bytes: bytes, duration: duration)
                event = .wrote(version: version.number, bytes: bytes, duration: duration)
                if state.newest.number > version.number && !state.isClosed {
                    if state.waiters.isEmpty {
                        arm(&state, at: max(clock.now, (state.own.lastWriteStart ?? clock.now) + interval))
                    } else {
                        startWrite(&state)
                    }
                }
            case .failure(let error):
                let error = error as? GraphStoreError ?? .fileOperationFailed(path: target.url.path, operation: "write snapshot", reason: "\(error)")
                finished = state.recordFailure(error)
                failedError = error
                let delay = storeWriteRetryDelay(afterFailures: state.consecutiveFailures, minimum: interval)
                event = .writeFailed(error, retryIn: delay)
                if !state.isClosed { arm(&state, at: clock.now + delay) }
            }
            return (event, finished, failedError, journalCut)
        }
        if let (journal, previous) = journalCut {
            // Before the flushes resume: a journal whose fsync failed counts on this snapshot.
            journal.storeIsDurable(through: version.number)
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
