import Foundation
import GRDB
import GraphStore
import Logging

/// The background writer of a SQLite store: writes each commit's changed rows in commit
/// order, on its own serial queue, in one transaction per write.
///
/// A commit starts a write at once unless one is running; the commits made while a write runs
/// are grouped into the next one. `flush()` waits for a write that covers every commit before
/// it. A failed write keeps its error (``status``, ``events()``, the log), rolls back, and is
/// retried with back-off with the same commits and any newer ones; the graph in memory is
/// never dropped.
///
/// With a journal, a write that commits drops the journal records it covers (when the writer
/// has caught up, or every few writes while commits keep coming). A write that fails because
/// an object no longer fits its table (``GraphStoreError/codingFailed(path:entity:id:reason:)``:
/// a field's type changed) cannot succeed by retrying: the timer does not retry it, the
/// journal refuses further appends so that saves throw the error, and `flush()` and `close()`
/// try once more and throw it. So is a write a constraint or trigger another program added to
/// the database refuses (``refusedRows(_:path:tableOfIndex:)``).
final class SQLiteWriter: Sendable {
    private let database: DatabaseQueue
    private let path: String
    private let schema: Schema
    private let modelVersion: String
    private let clock: any WriterClock
    private let beforeTransaction: (@Sendable (Database) throws -> Void)?
    /// The journal beside the database, whose covered records a write drops.
    private let journal: StoreJournal?
    private let queue = DispatchQueue(label: "GraphStoreSQLite.SQLiteWriter", qos: .utility)
    private let state: Guarded<StoreWriterState<Own>>
    /// The tables as they are on disk. Read and replaced only by writes on `queue`, so the
    /// lock is never contended; it makes the sharing visible to the compiler.
    private let layout: Guarded<StoreLayout>
    /// The version the database holds, whose objects' ids are spelled as its rows' ids are
    /// (see ``SQLiteWritePlan``). Read and replaced only by writes on `queue`, as `layout`.
    private let written: Guarded<GraphVersion>
    private let broadcaster = Broadcaster<StoreEvent>()
    private let logger = Logger(label: "GraphStoreSQLite.SQLiteWriter")

    /// Commits waiting for a write, over the newest version.
    private struct Batch: Sendable {
        let version: GraphVersion
        let changes: [GraphChange]
    }

    /// What this writer keeps under its lock beside every writer's state; the timer is the
    /// retry after a failed write.
    private struct Own: Sendable {
        /// The changes of the commits after the last successful write, not being written now.
        var pending: [GraphChange] = []
        /// When the journal last dropped its covered records (`nil`: not yet).
        var lastDrop: Duration?
        /// A write error that retrying cannot fix: the timer stops retrying.
        var permanentError: GraphStoreError?
    }

    private typealias State = StoreWriterState<Own>

    /// The least time between two drops of the journal's covered records: each drop rewrites
    /// the journal's newer records into a new file and fsyncs it, so a stream of small saves,
    /// each its own SQLite write, must not pay for one per save. The journal holds about this
    /// much of saves beyond what the database holds.
    private let dropInterval: Duration

    init(
        database: DatabaseQueue, path: String, schema: Schema, opened: GraphVersion, layout: StoreLayout, options: SQLiteStoreOptions,
        journal: StoreJournal?
    ) {
        self.database = database
        self.journal = journal
        dropInterval = options.journalSyncInterval
        self.path = path
        self.schema = schema
        modelVersion = schema.model.label(option: options.modelVersion)
        clock = options.clock
        beforeTransaction = options.beforeTransaction
        state = Guarded(State(opened: opened, own: Own()))
        self.layout = Guarded(layout)
        written = Guarded(opened)
    }

    // MARK: - Events from the store

    /// A commit happened: queue its changes and start a write unless one is running or a
    /// retry is waiting. Never blocks.
    ///
    /// - Complexity: O(1) amortized.
    func didCommit(_ version: GraphVersion, change: GraphChange) {
        state.withLock { state in
            guard !state.isClosed, version.number > state.newest.number else { return }
            state.newest = version
            state.own.pending.append(change)
            if !state.isWriting && !state.timer.isArmed && state.own.permanentError == nil { startWrite(&state) }
        }
    }

    /// Returns when every version committed before the call is written; starts a write at once
    /// if one is needed (also instead of waiting for a retry).
    ///
    /// - Throws: the error of the write that was meant to cover this flush.
    func flush() async throws {
        try await flushStoreWriter(state) { startWrite(&$0) }
    }

    /// Flushes, stops writing, ends the event streams, runs `beforeReleasing` with the flush's
    /// outcome (while the database is still locked) and closes the database, which releases its
    /// lock.
    ///
    /// - Throws: the flush's error (the unwritten commits are not in the database), the error
    ///   of `beforeReleasing`, or the error closing the database.
    func close(beforeReleasing: (Result<Void, any Error>) throws -> Void = { _ in }) async throws {
        let flushed = await closeStoreWriter(
            flush: flush,
            stop: { state.withLock { $0.close() } }, queue: queue, events: broadcaster)
        let finished = Result { try beforeReleasing(flushed) }
        do {
            try database.close()
        } catch {
            if case .success = flushed, case .success = finished {
                throw GraphStoreError.sqlite(error, path: path, operation: "close the database")
            }
        }
        try flushed.get()
        try finished.get()
    }

    var status: StoreStatus {
        state.withLock { $0.status }
    }

    /// The write error retrying cannot fix, if a write met one (see the type's description).
    var permanentError: GraphStoreError? {
        state.withLock { $0.own.permanentError }
    }

    func events() -> AsyncStream<StoreEvent> {
        broadcaster.stream()
    }

    // MARK: - Scheduling (called with the state locked)

    private func startWrite(_ state: inout State) {
        state.beginWrite()
        let batch = Batch(version: state.newest, changes: state.own.pending)
        state.own.pending = []
        queue.async { [self] in write(batch) }
    }

    private func armRetry(_ state: inout State, after delay: Duration) {
        let generation = state.timer.arm()
        clock.schedule(at: clock.now + delay) { [weak self] in self?.retryFired(generation) }
    }

    private func retryFired(_ generation: Int) {
        state.withLock { state in
            guard state.timer.fire(generation) else { return }
            if !state.isWriting && !state.isClosed && state.own.permanentError == nil && state.newest.number > state.status.durableVersion {
                startWrite(&state)
            }
        }
    }

    // MARK: - Writing (on the writer's queue)

    private func write(_ batch: Batch) {
        let started = ContinuousClock.now
        let result = Result { () throws(GraphStoreError) -> Int in try apply(batch) }
        let duration = ContinuousClock.now - started
        var dropThrough: UInt64?
        let (event, finished, failure) = state.withLock { state -> (StoreEvent, [CheckedContinuation<Void, any Error>], GraphStoreError?) in
            switch result {
            case .success(let bytes):
                let finished = state.recordWrite(of: batch.version.number, bytes: bytes, duration: duration)
                state.own.permanentError = nil
                if !state.own.pending.isEmpty && !state.isClosed && !state.timer.isArmed { startWrite(&state) }
                let now = clock.now
                if state.own.lastDrop.map({ now - $0 >= dropInterval }) ?? true {
                    state.own.lastDrop = now
                    dropThrough = batch.version.number
                }
                return (.wrote(version: batch.version.number, bytes: bytes, duration: duration), finished, nil)
            case .failure(let error):
                let finished = state.recordFailure(error)
                // The failed commits go back in front of the newer ones, in order.
                state.own.pending = batch.changes + state.own.pending
                if case .codingFailed = error {
                    // Retrying writes the same objects again: only a new model can fix it.
                    state.own.permanentError = error
                    return (.writeFailed(error, retryIn: .zero), finished, error)
                }
                let delay = storeWriteRetryDelay(afterFailures: state.consecutiveFailures, minimum: .zero)
                if !state.isClosed { armRetry(&state, after: delay) }
                return (.writeFailed(error, retryIn: delay), finished, error)
            }
        }
        // Before the flushes resume: a journal whose fsync failed counts on this transaction.
        if let dropThrough { journal?.storeIsDurable(through: dropThrough) }
        // Before the event: once it is seen, saves throw an error no write can get past.
        if let failure, case .codingFailed = failure { journal?.refuseAppends(failure) }
        // Announce before resuming the flushes this write covers: once `flush()` returns, the
        // event is in every stream.
        broadcaster.broadcast(event)
        if let failure {
            if case .codingFailed = failure {
                logger.critical("SQLite write failed because an object no longer fits its table (see the error); saves now throw this error until the store is reopened with a model that fits", metadata: [
                    "path": "\(path)", "error": "\(failure)",
                ])
            } else {
                logger.error("SQLite write failed; the graph stays in memory and the write will be retried", metadata: [
                    "path": "\(path)", "error": "\(failure)",
                ])
            }
            for waiter in finished { waiter.resume(throwing: failure) }
        } else {
            for waiter in finished { waiter.resume() }
        }
        if let dropThrough, let journal {
            // The transaction is committed with synchronous = FULL: its records are redundant.
            do {
                try journal.dropRecords(through: dropThrough)
            } catch {
                logger.warning("Could not drop the journal records a SQLite write covers; the journal keeps them and stays correct", metadata: [
                    "path": "\(journal.path)", "error": "\(error)",
                ])
            }
        }
    }

    /// Encodes the batch's rows and writes them in one transaction; returns the bytes of row
    /// data written.
    private func apply(_ batch: Batch) throws(GraphStoreError) -> Int {
        let current = layout.withLock { $0 }
        let previous = written.withLock { $0 }
        do {
            let (plan, next) = try SQLiteWritePlan.make(
                version: batch.version, changes: batch.changes, written: previous, schema: schema, layout: current, modelVersion: modelVersion,
                path: path)
            try database.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    try beforeTransaction?(db)
                    try plan.execute(in: db)
                    return .commit
                }
            }
            layout.withLock { $0 = next }
            written.withLock { $0 = batch.version }
            return plan.byteCount
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw Self.refusedRows(error, path: path) { index in
                try? database.read { db in
                    try String.fetchOne(db, sql: "SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [index])
                }
            }
        } catch {
            throw GraphStoreError.sqlite(error, path: path, operation: "write changed rows")
        }
    }

    /// The error of a write a constraint or trigger of the database refused (one another
    /// program added: a unique index, a `CHECK`, a trigger that raises): writing the same rows
    /// again meets it again, so it is ``GraphStoreError/codingFailed(path:entity:id:reason:)``,
    /// which the writer does not retry and saves then throw. The entity is the table SQLite
    /// names (`UNIQUE constraint failed: Tag.name`), or the table of the index it names
    /// (`index 'name'`, looked up through `tableOfIndex`); otherwise "the changed rows".
    static func refusedRows(_ error: DatabaseError, path: String, tableOfIndex: (String) -> String?) -> GraphStoreError {
        let message = error.message ?? "a constraint failed"
        var table = "the changed rows"
        if let named = message.range(of: "constraint failed: ") {
            let rest = message[named.upperBound...]
            if rest.hasPrefix("index '"), let index = rest.dropFirst(7).split(separator: "'").first, let owner = tableOfIndex(String(index)) {
                table = owner
            } else if let column = rest.split(separator: ",").first, column.split(separator: ".").count == 2, !column.contains(" ") {
                table = String(column.split(separator: ".")[0])
            }
        }
        return .codingFailed(
            path: path, entity: table, id: nil,
            reason: "SQLite refused the rows of a save: \(message) (SQLite code \(error.extendedResultCode.rawValue)); a constraint or trigger of the database, which GraphStore did not make, refuses them, and writing them again cannot succeed. The saves that returned are in the journal; remove the constraint or trigger and open the store again")
    }
}
