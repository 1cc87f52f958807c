import Foundation
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
    private static let reclaimer = DispatchQueue(label: "GraphStore.reclaimer", qos: .background)

    private struct CommitState {
        var isClosed = false
        var nextSubscriber = 0
        var subscribers: [Int: AsyncStream<GraphChange>.Continuation] = [:]
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

    /// Commits `changes` atomically and returns what changed, or `nil` when there was nothing
    /// to write. Subscribers and the backend hear of the commit after it is visible.
    ///
    /// The commit is planned (conflicts, unique constraints, delete rules, new indexes) on the
    /// latest version without any lock; the commit lock is taken only to check that no other
    /// commit came in between and to swap the new version in. If one did, the plan is made
    /// again on the newer version; after a few such retries it is made under the lock, so a
    /// large commit cannot be starved by a stream of small ones. A small save therefore never
    /// waits for a large import's planning.
    ///
    /// - Throws: see ``CommitPlan/commit(_:onto:schema:policy:contextName:)``, and
    ///   `containerClosed`.
    /// - Complexity: O(changed objects + their references); O(1) under the commit lock in the
    ///   common case.
    func commit(_ changes: ChangeSet, policy: MergePolicy, contextName: String?) throws -> GraphChange? {
        for _ in 0..<3 {
            let base = currentVersion
            let planned: (GraphVersion, GraphChange)
            do {
                planned = try CommitPlan.commit(changes, onto: base, schema: schema, policy: policy, contextName: contextName)
            } catch {
                // The error holds for `base`; a newer version may not have it.
                if currentVersion.number == base.number { throw error }
                continue
            }
            if case .published(let change) = try publish(planned, ifBasedOn: base.number) { return change }
        }
        return try commits.withLock { state in
            let base = currentVersion
            let planned = try CommitPlan.commit(changes, onto: base, schema: schema, policy: policy, contextName: contextName)
            return try publishLocked(planned, state: &state)
        }
    }

    private enum PublishOutcome {
        /// The plan was swapped in (`nil`: it changed nothing).
        case published(GraphChange?)
        /// Another commit came first; the plan must be made again.
        case stale
    }

    /// Swaps `planned` in if the latest version is still `baseNumber`.
    private func publish(_ planned: (GraphVersion, GraphChange), ifBasedOn baseNumber: UInt64) throws -> PublishOutcome {
        try commits.withLock { state in
            guard currentVersion.number == baseNumber else { return .stale }
            return .published(try publishLocked(planned, state: &state))
        }
    }

    /// Makes `planned` the latest version and tells the backend and subscribers. Called with
    /// the commit lock held; nothing here blocks.
    private func publishLocked(_ planned: (GraphVersion, GraphChange), state: inout CommitState) throws -> GraphChange? {
        guard !state.isClosed else { throw GraphStoreError.containerClosed }
        let (next, change) = planned
        guard change.insertedCount + change.updatedCount + change.deletedCount > 0 else { return nil }
        let replaced = latest.withLock { current in
            defer {
                current = next
                latestNumber.store(next.number, ordering: .releasing)
            }
            return current
        }
        // Objects only the replaced version held (say, a deleted table) are freed on a
        // background queue, not on the saving thread.
        Self.reclaimer.async { withExtendedLifetime(replaced) {} }
        // Under the commit lock, so that both hear of commits in commit order.
        backend.didCommit(next, change: change)
        for continuation in state.subscribers.values { continuation.yield(change) }
        return change
    }

    /// Drops `value` on a background queue: for the last reference to something large (a
    /// committed change set holding a dropped table), whose freeing should not delay a save.
    func releaseInBackground<T: Sendable>(_ value: consuming T) {
        let box = [value]
        Self.reclaimer.async { withExtendedLifetime(box) {} }
    }

    /// A new stream of every commit from now on, in commit order.
    func subscribe() -> AsyncStream<GraphChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: GraphChange.self, bufferingPolicy: .unbounded)
        let id: Int? = commits.withLock { state in
            guard !state.isClosed else { return nil }
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.commits.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Refuses further commits and ends every change stream.
    func close() {
        let subscribers = commits.withLock { state -> [AsyncStream<GraphChange>.Continuation] in
            state.isClosed = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }

    var isClosed: Bool {
        commits.withLock { $0.isClosed }
    }
}

extension GraphCore {
    /// The version of the stored object `key`, or `nil` when there is none.
    ///
    /// - Complexity: O(log n), under the version lock.
    func storedVersion(entity: Int, key: ObjectKey) -> UInt64? {
        latest.withLock { $0.tables[entity][key]?.version }
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
}
