import Foundation
internal import GraphStoreCoding
import HashTreeCollections
import Synchronization

/// The versioned in-memory graph shared by a container's contexts.
///
/// Readers take the latest version under a lock held only to copy a few references, so they
/// never wait on a commit's work. Commits are serialized by a second lock that covers only
/// in-memory work proportional to the change set; no user closure, fetch or I/O runs under
/// either lock.
package final class GraphCore: Sendable {
    package let schema: Schema
    let backend: any StoreBackend
    private let latest: Guarded<GraphVersion>
    /// The latest version's number, readable without the lock. It is stored while the lock
    /// is held, so a thread that has seen a version through the lock reads at least its number.
    private let latestNumber: Atomic<UInt64>
    private let commits: Guarded<CommitState>
    /// Every commit, in commit order: broadcast under the commit lock. Feeds ``subscribe()``
    /// and ``signals(entity:)``.
    private let committed = Broadcaster<GraphChange>()

    private struct CommitState {
        var isClosed = false
    }

    init(schema: Schema, backend: any StoreBackend, initial: GraphVersion) {
        self.schema = schema
        self.backend = backend
        latest = Guarded(initial)
        latestNumber = Atomic(initial.number)
        commits = Guarded(CommitState())
    }

    /// The latest committed version.
    ///
    /// - Complexity: O(number of entities): a copy of a few persistent-map references.
    package var currentVersion: GraphVersion {
        latest.withLock { $0 }
    }

    /// Commits `changes` atomically and returns what changed (``Committed/change`` is `nil` when
    /// there was nothing to write). Subscribers and the backend hear of the commit after it is
    /// visible.
    ///
    /// The commit is planned (conflicts, unique constraints, delete rules, new indexes) on the
    /// latest version without any lock, and its journal record is encoded; the commit lock is
    /// taken only to check that no other commit came in between, append the record to the
    /// journal (one `write(2)`) and swap the new version in. If another commit came first, the
    /// plan is made again on the newer version; after a few such retries it is made under the
    /// lock, so a large commit cannot be starved by a stream of small ones. A small save
    /// therefore never waits for a large import's planning.
    ///
    /// - Throws: see ``CommitPlan/commit(_:onto:schema:policy:contextName:)``,
    ///   `containerClosed`, ``GraphStoreError/codingFailed(path:entity:id:reason:)`` for an
    ///   object the journal cannot encode and ``GraphStoreError/fileOperationFailed(path:operation:reason:)``
    ///   for a failed append (nothing is committed in all these cases); ``CommittedButNotDurable``
    ///   when a ``Durability/synchronous`` fsync fails after the commit.
    /// - Complexity: O(changed objects + their references); O(1) plus one `write(2)` under the
    ///   commit lock in the common case.
    func commit(_ changes: ChangeSet, policy: MergePolicy, contextName: String?) throws -> Committed {
        let journal = backend.journal
        for _ in 0..<3 {
            let base = currentVersion
            let planned: (GraphVersion, GraphChange)
            let record: FastJSONBuffer?
            do {
                planned = try CommitPlan.commit(changes, onto: base, schema: schema, policy: policy, contextName: contextName)
                record = try journal.flatMap { try journalRecord(planned, journal: $0) }
            } catch {
                // The error holds for `base`; a newer version may not have it.
                if currentVersion.number == base.number { throw error }
                continue
            }
            if case .published(let change, let mark) = try publish(planned, record: record, to: journal, ifBasedOn: base.number) {
                let committed = Committed(change: change, base: base, made: planned.0)
                try waitUntilDurable(committed, mark: mark, journal: journal)
                return committed
            }
        }
        var replaced: GraphVersion?
        let (committed, mark) = try commits.withLock { state in
            let base = currentVersion
            let planned = try CommitPlan.commit(changes, onto: base, schema: schema, policy: policy, contextName: contextName)
            let record = try journal.flatMap { try journalRecord(planned, journal: $0) }
            let (change, mark) = try publishLocked(planned, record: record, to: journal, state: &state, replaced: &replaced)
            return (Committed(change: change, base: base, made: planned.0), mark)
        }
        // The replaced version, if it is freed here, is freed after the commit lock is let go.
        replaced = nil
        try waitUntilDurable(committed, mark: mark, journal: journal)
        return committed
    }

    /// What a commit did, for the context that saved it: what changed (`nil`: nothing was
    /// written), each entity table's stamp (``GraphVersion/tableStamps``) in the version it was
    /// made on and in the one it made, which differ where it changed the table, and the tables
    /// of the version it made.
    struct Committed {
        let change: GraphChange?
        /// The number of the version the commit was made on: any object this commit wrote has
        /// a newer version, any other object stored then an older or equal one.
        let baseNumber: UInt64
        let previousStamps: [UInt64]
        let stamps: [UInt64]
        let tables: [TreeDictionary<ObjectKey, StoredObject>]
        /// The tables of the version the commit was made on: what a delete rule of the commit
        /// rewrote.
        let baseTables: [TreeDictionary<ObjectKey, StoredObject>]

        /// A commit planned on `base` as `made`: when it wrote nothing (`change` is `nil`),
        /// `made` was never published, and the store stays at `base`.
        init(change: GraphChange?, base: GraphVersion, made: GraphVersion) {
            let after = change == nil ? base : made
            self.change = change
            baseNumber = base.number
            previousStamps = base.tableStamps
            stamps = after.tableStamps
            tables = after.tables
            baseTables = base.tables
        }
    }

    /// A commit that is visible (and journaled) but whose ``Durability/synchronous`` fsync
    /// failed: the saving context treats its changes as committed and throws `error`.
    struct CommittedButNotDurable: Error {
        let committed: Committed
        let error: GraphStoreError
    }

    private enum PublishOutcome {
        /// The plan was swapped in (`nil`: it changed nothing), and where its record ended.
        case published(GraphChange?, StoreJournal.Mark?)
        /// Another commit came first; the plan must be made again.
        case stale
    }

    /// The framed journal record of a planned commit, or `nil` when it changes nothing.
    private func journalRecord(_ planned: (GraphVersion, GraphChange), journal: StoreJournal) throws -> FastJSONBuffer? {
        let (next, change) = planned
        guard change.insertedCount + change.updatedCount + change.deletedCount > 0 else { return nil }
        return try JournalRecord(next, change: change, schema: schema).framed(schema: schema, path: journal.path)
    }

    private func waitUntilDurable(_ committed: Committed, mark: StoreJournal.Mark?, journal: StoreJournal?) throws {
        guard let mark, let journal, journal.durability == .synchronous else { return }
        do {
            try journal.waitUntilDurable(mark)
        } catch {
            throw CommittedButNotDurable(committed: committed, error: error)
        }
    }

    /// Swaps `planned` in if the latest version is still `baseNumber`.
    private func publish(
        _ planned: (GraphVersion, GraphChange), record: FastJSONBuffer?, to journal: StoreJournal?, ifBasedOn baseNumber: UInt64
    ) throws -> PublishOutcome {
        var replaced: GraphVersion?
        let outcome = try commits.withLock { state -> PublishOutcome in
            guard currentVersion.number == baseNumber else { return .stale }
            let (change, mark) = try publishLocked(planned, record: record, to: journal, state: &state, replaced: &replaced)
            return .published(change, mark)
        }
        // The replaced version, if it is freed here, is freed after the commit lock is let go.
        replaced = nil
        return outcome
    }

    /// Appends `record` to `journal`, makes `planned` the latest version and tells the
    /// backend and subscribers. Called with the commit lock held; nothing here blocks but the
    /// append's `write(2)`. When the append fails, nothing is published.
    ///
    /// The version it replaced is handed to the background queue when freeing it is big work;
    /// otherwise it is left in `replaced`, for the caller to free once the lock is let go.
    private func publishLocked(
        _ planned: (GraphVersion, GraphChange), record: FastJSONBuffer?, to journal: StoreJournal?, state: inout CommitState,
        replaced replacedOut: inout GraphVersion?
    ) throws -> (GraphChange?, StoreJournal.Mark?) {
        guard !state.isClosed else { throw GraphStoreError.containerClosed }
        let (next, change) = planned
        guard change.insertedCount + change.updatedCount + change.deletedCount > 0 else { return (nil, nil) }
        var mark: StoreJournal.Mark?
        if let record, let journal {
            mark = try record.withUnsafeBytes { bytes throws(GraphStoreError) in try journal.append(bytes, version: next.number) }
        }
        let replaced = latest.withLock { current in
            defer {
                current = next
                latestNumber.store(next.number, ordering: .releasing)
            }
            return current
        }
        // Objects and nodes only the replaced version held (say, a deleted table, the old values
        // of many updated objects, or the paths many inserts copied) are freed on a background
        // queue, not on the saving thread. A small commit's replaced version holds only its few
        // old objects and path nodes: the caller frees them after the commit lock, which costs
        // less than waking the queue's thread would.
        let changed = change.insertedCount + change.updatedCount + change.deletedCount
        if !change.dropped.isEmpty || changed >= BackgroundRelease.objectCount {
            BackgroundRelease.drop(consume replaced)
        } else {
            replacedOut = consume replaced
        }
        // Under the commit lock, so that both hear of commits in commit order.
        backend.didCommit(next, change: change)
        committed.broadcast(change)
        return (change, mark)
    }

    /// A new stream of every commit from now on, in commit order.
    func subscribe() -> AsyncStream<GraphChange> {
        committed.stream(bufferingPolicy: .unbounded)
    }

    /// A core released without ``GraphContainer/close()``: the store closes in the background
    /// (final snapshot or write, journal removed, lock released); opening the same file waits
    /// for it.
    deinit {
        guard !isClosed else { return }
        close()
        // A store in memory has nothing to write or release: no task for it.
        guard !(backend is InMemoryBackend) else { return }
        let backend = backend
        let path = backend.storePath
        if let path { StoreClosings.begin(path) }
        Task.detached(executorPreference: StoreClosingExecutor.shared) {
            try? await backend.close()
            if let path { StoreClosings.end(path) }
        }
    }

    /// A new stream of the versions of the commits that change `entity` from now on; when
    /// the reader falls behind, only the newest waits (a burst coalesces). Ends when the
    /// container closes.
    func signals(entity: String) -> AsyncStream<UInt64> {
        committed.stream(of: UInt64.self, bufferingPolicy: .bufferingNewest(1)) { change in
            change.touches(entity: entity) ? change.version : nil
        }
    }

    /// Refuses further commits and ends every change stream.
    func close() {
        commits.withLock { $0.isClosed = true }
        // No commit is published after this: the streams end after the last one.
        committed.finish()
    }

    var isClosed: Bool {
        commits.withLock { $0.isClosed }
    }

    /// How many change streams are open (``signals(entity:)`` and ``subscribe()`` together):
    /// observers not yet ended. For tests.
    var openSignalCount: Int {
        committed.subscriberCount
    }
}

extension GraphCore {
    /// The stored object `key` in the latest version, or `nil` when there is none.
    ///
    /// - Complexity: O(log n), under the version lock.
    func storedObject(entity: Int, key: ObjectKey) -> StoredObject? {
        latest.withLock { $0.tables[entity][key] }
    }

    /// The latest version's number, without taking the lock.
    ///
    /// - Complexity: O(1), one atomic load.
    var currentNumber: UInt64 {
        latestNumber.load(ordering: .acquiring)
    }

    /// One entity's table in the latest version, with its stamp and the version's number.
    ///
    /// - Complexity: O(1), under the version lock.
    func latestTable(entity: Int) -> ChangeSet.LatestTable {
        latest.withLock { ($0.tables[entity], $0.tableStamps[entity], $0.number) }
    }

    /// One entity's table and one of its sorted indexes, from the same (latest) version.
    ///
    /// - Complexity: O(1), under the version lock.
    func latestIndex(entity: Int, index: Int) -> (table: TreeDictionary<ObjectKey, StoredObject>, tree: IndexTree, number: UInt64) {
        latest.withLock { ($0.tables[entity], $0.sorted[entity][index], $0.number) }
    }
}
