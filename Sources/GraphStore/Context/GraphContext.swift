import Foundation
import HashTreeCollections
import OrderedCollections
import Synchronization

/// A scratch pad of changes over the store's latest committed version: insert, delete, fetch,
/// then `save()` to commit them atomically.
///
/// A context is `Sendable` and safe to use from any thread or task. Values it returns are
/// plain structs, so nothing is bound to a thread. It reads the latest committed version
/// overlaid with its own pending changes (and its parents', for a child context); each fetch
/// sees one consistent version.
///
/// ```swift
/// let context = container.newBackgroundContext()
/// context.insert(Tag(name: "swift"))
/// try context.save()
/// ```
///
/// Delete rules are applied when the top-level context saves; until then the context's own
/// fetches still show references to objects it deleted.
public final class GraphContext: Sendable {
    /// The context changes are saved into, for a child context; `nil` for a top-level one.
    public let parent: GraphContext?
    let core: GraphCore
    private let state: Guarded<State>
    /// Serializes `save()` calls on this context.
    private let saving = NSLock()
    /// The children of this context that exist: while there are none, saves and rollbacks
    /// record nothing for them (and free what they had). Atomic, not under the state lock: a
    /// child may be freed while this context's lock is held (a rollback dropping an `onCommit`
    /// action that captured it), and its deinit must not wait for that lock.
    private let liveChildren = Atomic<Int>(0)
    /// The serial queue of ``perform(_:)`` and ``performAndWait(_:)``, made on first use:
    /// most contexts never use one (an observer makes a context for every fetch), and making a
    /// dispatch queue costs more than the rest of a context.
    private let madeQueue = Guarded<DispatchQueue?>(nil)
    private let queueLabel: String
    /// The thread running a block of this context's queue, if one is (see ``QueueHolder``).
    let queueHolder = QueueHolder()
    /// An empty change set for this schema, shared by every reset of `pending`: a save or a
    /// rollback then allocates nothing, and a later change copies only the per-entity array it
    /// touches.
    let emptyChanges: ChangeSet
    static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    struct State {
        var pending: ChangeSet
        var name: String?
        var mergePolicy: MergePolicy
        var commitActions: [@Sendable () -> Void] = []
        /// Increases with every ``rollback()``: a save in flight then leaves `commitActions`
        /// (actions registered since) alone, the rollback having dropped the ones it took.
        var commitActionsEpoch: UInt64 = 0
        /// Fetches of this context that have read a table and not yet recorded what they read:
        /// while any runs, a save settles every id it wrote (read before or not) and keeps those
        /// records through pruning, so that the fetch's older reading cannot replace them; and
        /// a fetch of every object that records meanwhile keeps them where its table holds what
        /// the save left (see ``EntityReads/readAll(_:number:othersInFlight:throughChanges:)``).
        var fetchesInFlight = 0
        /// Per entity index, what this context last read: the bases of its later changes.
        var reads: [EntityReads]
        /// Increases with every change to `pending`, so a save can tell whether anything was
        /// changed while it committed.
        var generation: UInt64 = 0
        /// Per entity index, while the context has children (empty otherwise): what this
        /// context's saves wrote and its rollbacks (and `.storeWins`, of a save's conflicting
        /// changes) dropped the bases of. A child that read an
        /// object through one of this context's pending changes bases its later changes on
        /// it (see ``inheritedBase(entity:key:)``); this context's own bases do not change.
        var childBases: [ChildBases] = []
    }

    init(core: GraphCore, parent: GraphContext?, name: String?, mergePolicy: MergePolicy = .error) {
        self.core = core
        self.parent = parent
        let entityCount = core.schema.entities.count
        emptyChanges = ChangeSet(entityCount: entityCount)
        state = Guarded(State(
            pending: emptyChanges, name: name, mergePolicy: mergePolicy,
            reads: Array(repeating: EntityReads(), count: entityCount)))
        queueLabel = "GraphStore.context.\(name ?? "unnamed")"
    }

    /// This context's serial queue (see `madeQueue`).
    var queue: DispatchQueue {
        madeQueue.withLock { made in
            if let made { return made }
            let queue = DispatchQueue(label: queueLabel)
            queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
            made = queue
            return queue
        }
    }

    // MARK: - Properties

    /// A name for this context, reported in ``GraphChange/contextName``.
    public var name: String? {
        get { state.withLock { $0.name } }
        set { state.withLock { $0.name = newValue } }
    }

    /// How a save resolves conflicts and unique collisions; ``MergePolicy/error`` by default.
    public var mergePolicy: MergePolicy {
        get { state.withLock { $0.mergePolicy } }
        set { state.withLock { $0.mergePolicy = newValue } }
    }

    /// Whether the context holds changes that are not saved.
    ///
    /// - Complexity: O(number of entities).
    public var hasChanges: Bool {
        state.withLock { !$0.pending.isEmpty }
    }

    // MARK: - Changing objects

    /// Inserts `object`, or replaces the object with the same id (insert-or-replace).
    ///
    /// The change is visible to this context (and its children) at once, and to everyone else
    /// after `save()`.
    ///
    /// The change is based on the object as this context last read it (through
    /// ``model(_:id:)`` or ``fetch(_:)``) or as its own last save of it left it, or for an id
    /// it neither read nor saved, as stored now: if another save changed the object since,
    /// saving is a conflict (see ``MergePolicy``).
    ///
    /// - Complexity: O(1) amortized for a top-level context that has not read this entity
    ///   (and, once it saved objects of it, while no other context's save changed the entity
    ///   since): the change is appended to the context's log, and the stored object it is based
    ///   on is read (O(log n)) when the context saves or first looks the id up. Otherwise the
    ///   base is looked up at once, O(log n).
    public func insert<E: Entity>(_ object: E) {
        record(.upsert(object), entity: core.schema.index(of: E.self), key: ObjectKey(object.id))
    }

    /// Inserts every object of `objects`, each replacing the object with the same id: the
    /// same as calling ``insert(_:)`` for each, in one step.
    ///
    /// ```swift
    /// context.insert(contentsOf: page.posts)
    /// ```
    ///
    /// - Complexity: O(k) for k objects, with the context's lock taken once; bases are read as
    ///   for ``insert(_:)``.
    public func insert<S: Sequence>(contentsOf objects: S) where S.Element: Entity {
        let entries = objects.map { PendingLog.Entry(key: ObjectKey($0.id), kind: .upsert($0), sequence: nextPendingSequence()) }
        recordAll(entries, entity: core.schema.index(of: S.Element.self))
    }

    /// Deletes `object` (by its id) when the context is saved.
    public func delete<E: Entity>(_ object: E) {
        delete(E.self, id: object.id)
    }

    /// Deletes the object of `type` with `id` when the context is saved; nothing happens for an
    /// id that names no object.
    ///
    /// - Complexity: O(1) amortized, as ``insert(_:)``; delete rules run at save.
    public func delete<E: Entity>(_ type: E.Type, id: E.ID) {
        record(.delete, entity: core.schema.index(of: E.self), key: ObjectKey(id))
    }

    /// Discards every unsaved change and pending `onCommit` action.
    public func rollback() {
        let latest = core.currentVersion
        // The dropped changes and actions are freed after the lock is let go: an action may
        // hold the last reference to anything, a context included.
        let dropped = state.withLock { state -> (ChangeSet, [@Sendable () -> Void]) in
            if recordsForChildren(&state) {
                // A child that read an object through a change dropped here bases its own
                // changes as the dropped change was based, so a save made in between by
                // another context is a conflict, not overwritten.
                for entity in state.pending.entities.indices where state.pending.hasChanges(entity: entity) {
                    state.pending.fold(entity)
                    // With the ancestor's change a dropped change's base came through, if it
                    // did: once that ancestor saves it, what it wrote is the base. A child that
                    // read an object as gone through a `delete(model:)` keeps the version it
                    // marked (the marker spelled out: O(n) for the n objects it marked, and only
                    // for a context that has made children).
                    state.childBases[entity].settleRolledBack(state.pending.expanded(entity: entity), continuing: true, table: latest.tables[entity])
                }
            }
            defer {
                state.pending = emptyChanges
                state.commitActions = []
                state.commitActionsEpoch += 1
                state.generation += 1
            }
            return (state.pending, state.commitActions)
        }
        withExtendedLifetime(dropped) {}
    }

    /// Registers `action` to run once after the next successful save of this context has
    /// committed to the store: the place to publish domain events.
    ///
    /// The action runs on the saving thread, after the commit is visible to every context and
    /// before `save()` returns. For a child context it runs when the changes reach the store
    /// (the top-level ancestor's save). It never runs for a failed save; `rollback()` drops it.
    public func onCommit(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.commitActions.append(action) }
    }

    /// A new context whose saves go into this one, not to the store.
    ///
    /// Use it as a scratch pad: discard it (or `rollback()`) to drop its changes, or `save()`
    /// to push them into this context.
    public func newChildContext() -> GraphContext {
        liveChildren.add(1, ordering: .sequentiallyConsistent)
        return GraphContext(core: core, parent: self, name: nil, mergePolicy: mergePolicy)
    }

    deinit {
        parent?.liveChildren.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// Whether saves and rollbacks record what they leave for children (allocating the
    /// records for the first child); with none left, what was recorded is freed. Called with
    /// the state lock held.
    func recordsForChildren(_ state: inout State) -> Bool {
        guard liveChildren.load(ordering: .sequentiallyConsistent) > 0 else {
            if !state.childBases.isEmpty { state.childBases = [] }
            return false
        }
        if state.childBases.isEmpty { state.childBases = Array(repeating: ChildBases(), count: core.schema.entities.count) }
        return true
    }

    // MARK: - Internal

    private func record(_ kind: PendingChange.Kind, entity: Int, key: ObjectKey) {
        let sequence = nextPendingSequence()
        let latestNumber = core.currentNumber
        state.withLock { state in
            state.generation += 1
            if logsChanges(entity: entity, state: state) {
                // A top-level context logs the change: one append, no lookup (see PendingLog).
                let entry = PendingLog.Entry(key: key, kind: kind, sequence: sequence)
                if state.pending.logs[entity].isCurrent(latestNumber) {
                    state.pending.log(entry, entity: entity, latestNumber: latestNumber) { core.latestTable(entity: entity) }
                    return
                }
                // A new segment: on a table that still holds what this context's saves left.
                let latest = core.latestTable(entity: entity)
                if state.reads[entity].admitsLogging(stamp: latest.stamp) {
                    state.pending.log(entry, entity: entity, latestNumber: latestNumber) { latest }
                    return
                }
            }
            recordOwn(kind, key: key, entity: entity, sequence: sequence, table: nil, state: &state)
        }
    }

    /// Records this context's own change of `key` (not logged), based on `table` when given
    /// (see ``firstBase(entity:key:marker:reads:table:)``). A change over a child's value this
    /// context has not read is made on a copy from before it (see ``PendingChange/fromChild``):
    /// a child of this context that read the id through that value never saw what replaces it,
    /// and keeps that value's base, as after a rollback of it.
    ///
    /// Called with the state lock held.
    private func recordOwn(
        _ kind: PendingChange.Kind, key: ObjectKey, entity: Int, sequence: UInt64, table: TreeDictionary<ObjectKey, StoredObject>?,
        state: inout State
    ) {
        let marker = state.pending.cleared[entity], reads = state.reads[entity]
        var replaced: PendingChange?
        if state.pending.hasChildChanges {
            state.pending.fold(entity)
            if let change = state.pending.entities[entity][key], change.fromChild, change.madeThrough == nil { replaced = change }
        }
        state.pending.record(kind, key: key, entity: entity, sequence: sequence) {
            firstBase(entity: entity, key: key, marker: marker, reads: reads, table: table)
        } known: {
            knownBase(entity: entity, key: key, marker: marker, reads: reads)
        }
        if let replaced, recordsForChildren(&state) {
            state.childBases[entity].settleRolledBack(CollectionOfOne((key, replaced)), continuing: false, table: core.latestTable(entity: entity).table)
        }
    }

    /// Whether this context may log its changes of `entity` (see ``PendingLog``): a top-level
    /// context does, without a clear marker of the entity, until it has read the entity (a base
    /// may then be an older version than the log's tables hold), and while no child's change is
    /// pending here or unread since it saved one (a change over it is based on what the context
    /// knew, looked up: see ``PendingChange/fromChild``). A new segment of the log must
    /// also be on a table that holds what the context's own saves left (see
    /// ``EntityReads/admitsLogging(stamp:)``); the current one was checked when it started.
    ///
    /// Called with the state lock held.
    private func logsChanges(entity: Int, state: borrowing State) -> Bool {
        parent == nil && state.pending.cleared[entity] == nil && !state.reads[entity].hasRead
            && state.reads[entity].unreadChildValues.isEmpty && !state.pending.hasChildChanges
    }

    /// Records many changes, in order, under one lock: logged by a top-level context, else
    /// recorded with the stored versions read from one snapshot.
    func recordAll(_ entries: [PendingLog.Entry], entity: Int) {
        guard !entries.isEmpty else { return }
        if parent == nil {
            let latestNumber = core.currentNumber
            let logged = state.withLock { state -> Bool in
                guard logsChanges(entity: entity, state: state) else { return false }
                if state.pending.logs[entity].isCurrent(latestNumber) {
                    state.pending.log(contentsOf: entries, entity: entity, latestNumber: latestNumber) { core.latestTable(entity: entity) }
                } else {
                    // A new segment: on a table that still holds what this context's saves left.
                    let latest = core.latestTable(entity: entity)
                    guard state.reads[entity].admitsLogging(stamp: latest.stamp) else { return false }
                    state.pending.log(contentsOf: entries, entity: entity, latestNumber: latestNumber) { latest }
                }
                state.generation += 1
                return true
            }
            if logged { return }
        }
        // A top-level context's bases all come from one version, read before the lock.
        let table = parent == nil ? core.currentVersion.tables[entity] : nil
        state.withLock { state in
            state.generation += 1
            for entry in entries {
                recordOwn(entry.kind, key: entry.key, entity: entity, sequence: entry.sequence, table: table, state: &state)
            }
        }
    }

    /// The base of this context's first entry for `key`: the object its clear marker saw, else
    /// the one it last read, else (for a child) what its parent bases the id on, else the
    /// stored object (read from `table` when given).
    private func firstBase(
        entity: Int, key: ObjectKey, marker: ClearMarker?, reads: EntityReads, table: TreeDictionary<ObjectKey, StoredObject>?
    ) -> InheritedBase {
        if let known = knownBase(entity: entity, key: key, marker: marker, reads: reads) { return known }
        if let parent { return parent.inheritedBase(entity: entity, key: key, seen: nil) }
        if let table { return InheritedBase(table[key]) }
        return InheritedBase(core.storedObject(entity: entity, key: key))
    }

    /// What this context knows of `key` (its clear marker's version, what it read or saved, or
    /// what it read through an ancestor's change), or `nil` when it knows nothing of it: the
    /// base of a change made over a child's value it has not read (see
    /// ``PendingChange/fromChild``).
    private func knownBase(entity: Int, key: ObjectKey, marker: ClearMarker?, reads: EntityReads) -> InheritedBase? {
        if let marked = marker?.table[key] { return InheritedBase(marked) }
        guard let record = reads.ownRecord(for: key) else { return nil }
        if let object = record.storedObject { return InheritedBase(object) }
        if let parent, let seen = record.inheritedSequence { return parent.inheritedBase(entity: entity, key: key, seen: seen) }
        return nil
    }

    /// What a child's first change of `key` is based on, when the child itself never read it
    /// from the store (`seen`: the sequence of the ancestor's change it read the id through, if
    /// it did): this context's pending change's base (inherited through that change), unless
    /// the child read through an earlier change this context has since saved or dropped and the
    /// pending one was not made on what that left (it was made on another context's save this
    /// context read since, which the child's copy never saw); else, for a child that read
    /// through a change this context has since saved or dropped, what that save wrote or the
    /// dropped change's base, else its own parent's answer for the change the child saw, else
    /// what this context last read, else its own parent's answer, else the stored object.
    func inheritedBase(entity: Int, key: ObjectKey, seen: UInt64?) -> InheritedBase {
        let (change, record, settled) = state.withLock { state in
            state.pending.fold(entity)
            return (
                state.pending.change(entity: entity, key: key), state.reads[entity].record(for: key),
                seen.flatMap { state.childBases.isEmpty ? nil : state.childBases[entity].base(for: key, seen: $0) })
        }
        if let change {
            let pending = InheritedBase(change.base, through: change.sequence, isTraced: true)
            guard let settled else { return pending }
            // Made on what the save or rollback the child saw left: this context's own saves
            // in between are no conflict for the child. A value another child's save put here
            // is not this context's own: the child never saw it.
            let saw = inheritedBase(entity: entity, key: key, seen: seen, settled: settled, record: nil)
            return !change.holdsChildValue && saw.base?.version == change.base?.version ? pending : saw
        }
        return inheritedBase(entity: entity, key: key, seen: seen, settled: settled, record: record)
    }

    /// ``inheritedBase(entity:key:seen:)`` past this context's pending changes, from what its
    /// saves and rollbacks left for children (`settled`) and what it read (`record`).
    private func inheritedBase(
        entity: Int, key: ObjectKey, seen: UInt64?, settled: (base: StoredObject?, through: UInt64?)?, record: EntityReads.Record?
    ) -> InheritedBase {
        // What the child saw, as this context's save or rollback left it, before what this
        // context read since: a newer read of its own must not rebase the child's older copy.
        if let settled {
            // A dropped change based on an ancestor's pending change: what that ancestor's
            // change left, once it saved it.
            if let through = settled.through, let parent {
                let above = parent.inheritedBase(entity: entity, key: key, seen: through)
                if above.isTraced { return above }
            }
            return InheritedBase(settled.base, through: settled.through, isTraced: true)
        }
        // The change the child saw is an ancestor's (or was pushed there): asked for by its
        // sequence, past what this context read of the id since.
        if let seen, let parent { return parent.inheritedBase(entity: entity, key: key, seen: seen) }
        if let object = record?.storedObject { return InheritedBase(object) }
        if let parent { return parent.inheritedBase(entity: entity, key: key, seen: record?.inheritedSequence) }
        return InheritedBase(core.storedObject(entity: entity, key: key))
    }

    /// The base a child's change of `key`, made over the ancestor's pending change of sequence
    /// `through`, takes when the child's save pushes it into this context, which holds no change
    /// of the id: what that change left if it was saved or dropped since, the base of the
    /// ancestor's change if it is still pending, or `nil` when nothing is known of it (the
    /// change keeps its base).
    ///
    /// Called with this context's state lock held, with its `childBases`; it asks the
    /// ancestors, whose locks it takes in turn. (What this context read is not asked: it
    /// tells nothing of the ancestor's change.)
    func rebasedPush(entity: Int, key: ObjectKey, through: UInt64, childBases: [ChildBases]) -> InheritedBase? {
        let settled = childBases.isEmpty ? nil : childBases[entity].base(for: key, seen: through)
        let found = inheritedBase(entity: entity, key: key, seen: through, settled: settled, record: nil)
        return found.isTraced ? found : nil
    }

    /// This context's pending change for `key`, or its nearest ancestor's.
    func pendingChange(entity: Int, key: ObjectKey) -> PendingChange? {
        let change = state.withLock { state in
            state.pending.fold(entity)
            return state.pending.change(entity: entity, key: key)
        }
        if let change { return change }
        return parent?.pendingChange(entity: entity, key: key)
    }

    /// Pending changes of one entity as seen from this context: ancestors' overlaid by its own.
    func overlay(entity: Int) -> EntityChanges {
        let mine = state.withLock { state in
            // Folded in place, so that the next read does not fold the same log again.
            state.pending.fold(entity)
            return state.pending.expanded(entity: entity)
        }
        guard var inherited = parent?.overlay(entity: entity), !inherited.isEmpty else { return mine }
        for (key, change) in mine { inherited[key] = change }
        return inherited
    }

    func withState<T>(_ body: (inout State) throws -> T) rethrows -> T {
        try state.withLock { try body(&$0) }
    }

    func withSaveLock<T>(_ body: () throws -> T) rethrows -> T {
        saving.lock()
        defer { saving.unlock() }
        return try body()
    }
}

/// One entity's pending changes, in the order they were made.
typealias EntityChanges = OrderedDictionary<ObjectKey, PendingChange>

/// The base of a context's first change of an id, with where a child context took it from.
struct InheritedBase {
    /// The stored object the change is based on (`nil`: none).
    var base: StoredObject?
    /// The sequence of the ancestor's pending change whose base `base` is, while that change
    /// may still be pending: once the ancestor saves it, what the save wrote is the base (see
    /// ``PendingChange/inheritedThrough``). `nil` for a base no pending change holds.
    var through: UInt64?
    /// Whether `base` was found for the change the child saw (an ancestor's pending change,
    /// or what the ancestor's save or rollback of it left), not as what a context read or the
    /// store holds now.
    var isTraced: Bool

    init(_ base: StoredObject?, through: UInt64? = nil, isTraced: Bool = false) {
        self.base = base
        self.through = through
        self.isTraced = isTraced
    }
}

private let pendingSequence = Atomic<UInt64>(0)

/// A process-wide increasing number for pending changes: a change's sequence tells which
/// change a context (or its child) read through, and is later than any read before it (a change
/// a child pushes gets a new one in its parent: see ``ChangeSet/merge(_:policy:schema:rebasing:)``).
func nextPendingSequence() -> UInt64 {
    pendingSequence.wrappingAdd(1, ordering: .relaxed).newValue
}
