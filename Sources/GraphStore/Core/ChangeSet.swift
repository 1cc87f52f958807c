import HashTreeCollections
import OrderedCollections

/// A change a context has made but not yet committed.
struct PendingChange: Sendable {
    enum Kind: Sendable {
        case upsert(any Entity)
        case delete

        var isUpsert: Bool {
            if case .upsert = self { return true }
            return false
        }
    }

    var kind: Kind
    /// The stored object this change is based on (`nil`: it did not exist): the one this
    /// context last read of this id, or, for an id it never read, the one stored when it
    /// first changed it. A conflict is a stored object with another version at save; its
    /// value is what ``MergePolicy/mergeByProperty`` compares the change with.
    var base: StoredObject?
    /// Increases with every change a context makes; lets a save clear exactly what it committed.
    var sequence: UInt64
    /// For a child context's change whose base was taken from an ancestor's pending change:
    /// that change's sequence (`nil` otherwise). Once the ancestor saves or drops that change,
    /// the base is what its save wrote or the dropped change's base, and the change is based on
    /// that when the child's save pushes it into its parent (see
    /// ``ChangeSet/merge(_:policy:schema:rebasing:)``): an ancestor's own save is no conflict
    /// for it.
    var inheritedThrough: UInt64? = nil
    /// Whether a child's save put this change here and this context has not read the id since
    /// (``GraphContext/model(_:id:)`` or a fetch that returned it): a copy this context holds
    /// of the id then predates the child's value. Its save of the change is not what it knows
    /// (see ``GraphContext/settle(_:written:stamps:policy:rebasing:state:)``), and a change it
    /// makes of the id is based on what it knows, not on the child's base.
    var fromChild = false
    /// Whether the value holds what a child's save put here (the child's value, or this
    /// context's change of it made after reading it): content this context's children that
    /// read the id earlier never saw, so a save of it continues no record of ``ChildBases``;
    /// and a save of the id in flight does not rebase it (see ``ChangeSet/rebase(_:settled:)``)
    /// unless the child's copy was made through the change being saved (`madeThrough`).
    var holdsChildValue = false
    /// For a change a child's save put here: the sequence of this context's change it replaced,
    /// when the child's copy was made through that change.
    var madeThrough: UInt64? = nil

    var upserted: (any Entity)? {
        if case .upsert(let value) = kind { return value }
        return nil
    }

    /// The version of ``base``.
    var baseVersion: UInt64? { base?.version }
}

/// "Delete every object of this entity the context saw", recorded as the table it saw rather
/// than as one entry per object, so that `delete(model:)` of a whole entity costs O(1).
///
/// Each object of `table` is pending deletion, based on its version in `table`, unless the
/// change set holds an entry for its id: an entry always overrides the marker.
struct ClearMarker: Sendable {
    /// The entity's table when the context marked it.
    var table: TreeDictionary<ObjectKey, StoredObject>
    /// The table's stamp (``GraphVersion/tableStamps``) then: while the store's stamp is the
    /// same, deleting the marked objects is deleting the whole table, without any conflict.
    var stamp: UInt64
    var sequence: UInt64
    /// Ids the context had changed but the table did not hold when it was marked: objects
    /// only this context inserted, and deletions of objects already gone. Their entries go
    /// with the marker (the context sees no such object), but at save each is deleted while
    /// the store still holds no object of its id, so that its delete rules run for the
    /// references the saved objects hold to it, as for ``GraphContext/delete(_:id:)``. An object
    /// another context saved under the id since is not touched: the marker deletes only what
    /// the context saw.
    var deletedIfNew: [ObjectKey] = []

    /// The pending deletion the marker stands for at `key`, if it covers `key`.
    func change(for key: ObjectKey) -> PendingChange? {
        table[key].map { PendingChange(kind: .delete, base: $0, sequence: sequence) }
    }
}

/// Changes a top-level context recorded since its entries were last brought up to date, kept
/// as a plain log: recording a change is one append, with no hashing and no lookup of the
/// stored object. A change's base (the stored version when the context first changed the id)
/// is read later, and only for ids that turn out to be new, from the table of the store
/// version the change was recorded on: each segment of the log holds that table.
///
/// A log is folded into the entries (``ChangeSet/fold(_:)``) before anything looks a change up
/// by id; a save that only writes consumes it directly (``CommitPlan``).
struct PendingLog: Sendable {
    struct Entry: Sendable {
        var key: ObjectKey
        var kind: PendingChange.Kind
        var sequence: UInt64
    }

    /// The entries recorded on one store version.
    struct Segment: Sendable {
        /// Index of the segment's first entry.
        var start: Int
        /// The entity's table in that version: bases are read from it.
        var table: TreeDictionary<ObjectKey, StoredObject>
        /// The table's stamp (``GraphVersion/tableStamps``): while the store's stamp is the
        /// same, every base equals the stored object's current version.
        var stamp: UInt64
        /// The number of the version the segment was recorded on.
        var versionNumber: UInt64
    }

    private(set) var entries: [Entry] = []
    private(set) var segments: [Segment] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// Whether the next entry can join the last segment: the store is still at `versionNumber`.
    func isCurrent(_ versionNumber: UInt64) -> Bool {
        segments.last?.versionNumber == versionNumber
    }

    /// Starts a segment for entries recorded on a newer store version (a table that did not
    /// change only moves the last segment forward).
    mutating func startSegment(table: TreeDictionary<ObjectKey, StoredObject>, stamp: UInt64, versionNumber: UInt64) {
        if let last = segments.indices.last, segments[last].stamp == stamp {
            segments[last].versionNumber = versionNumber
        } else if let last = segments.indices.last, segments[last].start == entries.count {
            segments[last] = Segment(start: entries.count, table: table, stamp: stamp, versionNumber: versionNumber)
        } else {
            segments.append(Segment(start: entries.count, table: table, stamp: stamp, versionNumber: versionNumber))
        }
    }

    /// Appends a change to the last segment (there must be one).
    mutating func append(_ entry: Entry) {
        entries.append(entry)
    }

    /// Appends changes to the last segment (there must be one); taken over without a copy
    /// when the log is empty.
    mutating func append(contentsOf more: [Entry]) {
        if entries.isEmpty { entries = more } else { entries.append(contentsOf: more) }
    }

    /// Each segment with the positions of its entries, in order.
    var segmentRanges: [(segment: Segment, positions: Range<Int>)] {
        segments.indices.map { index in
            let end = index + 1 < segments.count ? segments[index + 1].start : entries.count
            return (segments[index], segments[index].start..<end)
        }
    }

    /// Calls `body` with each entry, in order, and the segment it belongs to.
    func forEach(_ body: (Entry, Segment) throws -> Void) rethrows {
        for (segment, positions) in segmentRanges {
            for position in positions { try body(entries[position], segment) }
        }
    }

    /// Records every entry into `changes` as ``ChangeSet``'s eager path would have: a new id is
    /// based on its segment's table, a changed one keeps its base.
    ///
    /// - Complexity: O(k) hash lookups for k entries, plus O(log n) for each new id's base.
    func fold(into changes: inout EntityChanges) {
        guard !isEmpty else { return }
        changes.reserveCapacity(changes.count + entries.count)
        forEach { entry, segment in
            changes.updateValue(
                forKey: entry.key,
                default: PendingChange(kind: entry.kind, base: segment.table[entry.key], sequence: entry.sequence)
            ) { change in
                // (A context holding a child's change logs nothing: see `GraphContext.logsChanges`.)
                change.kind = entry.kind
                change.sequence = entry.sequence
            }
        }
    }
}

/// A context's pending changes, per entity index, in the order they were made.
struct ChangeSet: Sendable {
    /// Per entity index, the changes by id, in the order of each id's first change.
    private(set) var entities: [EntityChanges]
    /// Per entity index, changes recorded after `entities` and not folded into it yet (see
    /// ``PendingLog``). A log and a clear marker never coexist: marking folds the log, and a
    /// context records eagerly while a marker is pending.
    private(set) var logs: [PendingLog]
    /// Per entity index, a pending deletion of every object the context saw (see
    /// ``ClearMarker``); only a top-level context records one.
    var cleared: [ClearMarker?]
    /// Whether a child's save put a change here (see ``PendingChange/fromChild``).
    var hasChildChanges = false

    init(entityCount: Int) {
        entities = Array(repeating: [:], count: entityCount)
        logs = Array(repeating: PendingLog(), count: entityCount)
        cleared = Array(repeating: nil, count: entityCount)
    }

    var isEmpty: Bool {
        // Closures, not key paths: a key path's projection costs more than the whole check.
        entities.allSatisfy { $0.isEmpty } && logs.allSatisfy { $0.isEmpty } && cleared.allSatisfy { $0 == nil }
    }

    /// The number of changes recorded (an id changed twice counts twice until folded; a clear
    /// marker counts once).
    var count: Int {
        entities.reduce(0) { $0 + $1.count } + logs.reduce(0) { $0 + $1.count } + cleared.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
    }

    /// Whether `entity` has a change (an entry, a logged change or a clear marker).
    func hasChanges(entity: Int) -> Bool {
        !entities[entity].isEmpty || !logs[entity].isEmpty || cleared[entity] != nil
    }

    // MARK: Recording

    /// Records `kind` for `key`: a first change of `key` gets the base `base()` computes (and
    /// the ancestor's change it was inherited through, if any), a later one keeps the first
    /// one's, except over a child's value the context has not read (``PendingChange/fromChild``)
    /// that was not made through the context's own change: that change is made on a copy from
    /// before it, and takes what `known()` says the context knew of the id, when it knew
    /// anything. Folds the entity's log first.
    ///
    /// - Complexity: O(1) amortized, plus `base()` for a new id.
    mutating func record(
        _ kind: PendingChange.Kind, key: ObjectKey, entity: Int, sequence: UInt64, base: () -> InheritedBase,
        known: () -> InheritedBase? = { nil }
    ) {
        fold(entity)
        entities[entity].updateValue(forKey: key, default: {
            let first = base()
            return PendingChange(kind: kind, base: first.base, sequence: sequence, inheritedThrough: first.through)
        }()) { change in
            if change.fromChild, change.madeThrough == nil, let first = known() {
                // Made on a copy this context held from before a child's value it has not read
                // (and that was not made through this context's own change): based on what this
                // context knew, not on the child's base.
                change.base = first.base
                change.inheritedThrough = first.through
                change.holdsChildValue = false
            }
            change.kind = kind
            change.sequence = sequence
            change.fromChild = false
            change.madeThrough = nil
        }
    }

    /// Appends `entry` to the entity's log; `version` gives the latest table when the store
    /// has moved past the log's last segment (`latestNumber` is the store's latest version
    /// number as the caller read it).
    ///
    /// - Complexity: O(1) amortized.
    mutating func log(_ entry: PendingLog.Entry, entity: Int, latestNumber: UInt64, version: () -> LatestTable) {
        startSegmentIfNeeded(entity: entity, latestNumber: latestNumber, version: version)
        logs[entity].append(entry)
    }

    /// Appends `entries`, in order, to the entity's log, all on one store version.
    ///
    /// - Complexity: O(k) for k entries; O(1) when the log is empty.
    mutating func log(contentsOf entries: [PendingLog.Entry], entity: Int, latestNumber: UInt64, version: () -> LatestTable) {
        startSegmentIfNeeded(entity: entity, latestNumber: latestNumber, version: version)
        logs[entity].append(contentsOf: entries)
    }

    typealias LatestTable = (table: TreeDictionary<ObjectKey, StoredObject>, stamp: UInt64, number: UInt64)

    private mutating func startSegmentIfNeeded(entity: Int, latestNumber: UInt64, version: () -> LatestTable) {
        guard !logs[entity].isCurrent(latestNumber) else { return }
        let latest = version()
        logs[entity].startSegment(table: latest.table, stamp: latest.stamp, versionNumber: latest.number)
    }

    /// Folds the entity's log into its entries.
    mutating func fold(_ entity: Int) {
        guard !logs[entity].isEmpty else { return }
        let log = logs[entity]
        logs[entity] = PendingLog()
        log.fold(into: &entities[entity])
    }

    /// Folds every log.
    mutating func foldAll() {
        for entity in logs.indices { fold(entity) }
    }

    /// A copy with every log folded.
    func folded() -> ChangeSet {
        guard logs.contains(where: { !$0.isEmpty }) else { return self }
        var copy = self
        copy.foldAll()
        return copy
    }

    /// Replaces the entity's entries (its log must be folded).
    mutating func setEntries(_ changes: EntityChanges, entity: Int) {
        precondition(logs[entity].isEmpty, "the log of entity \(entity) must be folded first")
        entities[entity] = changes
    }

    // MARK: Reading

    /// The pending change of `key`: its entry, or the clear marker's deletion. The entity's log
    /// must be folded.
    func change(entity: Int, key: ObjectKey) -> PendingChange? {
        assert(logs[entity].isEmpty, "look-up in an entity with an unfolded log")
        return entities[entity][key] ?? cleared[entity]?.change(for: key)
    }

    /// One entity's changes with its log folded in and a clear marker spelled out as one
    /// deletion per object, in marking order before the entries.
    ///
    /// - Complexity: O(p) without a marker or log; O(n + p) with a marker (n objects it covers),
    ///   O(p + k) with a log of k changes.
    func expanded(entity: Int) -> EntityChanges {
        if !logs[entity].isEmpty {
            var all = entities[entity]
            logs[entity].fold(into: &all)
            return all
        }
        guard let marker = cleared[entity] else { return entities[entity] }
        var all = EntityChanges(minimumCapacity: marker.table.count + entities[entity].count)
        for (key, stored) in marker.table where entities[entity][key] == nil {
            all[key] = PendingChange(kind: .delete, base: stored, sequence: marker.sequence)
        }
        for (key, change) in entities[entity] { all[key] = change }
        return all
    }

    // MARK: Combining

    /// Folds `child`'s changes over these, as a child's save into its parent: the child's
    /// value wins. A child's change based on an ancestor's pending change
    /// (``PendingChange/inheritedThrough``) takes what `rebasing(entity, key, sequence)` says
    /// that change left, when it knows: the ancestor may have saved it since. A child context
    /// records no clear markers of its own.
    ///
    /// Of an id this set already changed (or its clear marker covers), the merged change keeps
    /// this set's base (for a change made over an ancestor's pending change, what that change
    /// left once the ancestor saved it), unless the child's copy was made on an older version
    /// than that base
    /// (read from the store before this context read another context's save, or before its own
    /// save; or through a change it saved or dropped since, and changed again on another
    /// context's save). That is a conflict, as a top-level save's stale copy is, and `policy`
    /// (the child's) settles it here, where both versions are known: `.error` throws and
    /// changes nothing, `.storeWins` leaves this set's change as it is, `.contextWins` takes
    /// the child's change whole, `.mergeByProperty` writes the properties the child changed
    /// over this set's value (a deletion, on either side, wins). The merged change keeps this
    /// set's base, so that another context's save since is still a conflict at this context's
    /// save. Taking the parent's base for the older copy would write it over the version the
    /// parent read without a conflict; taking the child's base would make the parent's own
    /// pending edits, and the versions in between, look like the child's.
    ///
    /// Each change this set takes gets a new sequence, later than any a context read before:
    /// a change a child pushes was made earlier, and keeping its sequence would put it before
    /// changes of this set that other children read through (see ``ChildBases``).
    ///
    /// - Returns: for each of the child's changes, what the child knows of the id now: read
    ///   through the change this set took, or (a change `.storeWins` left out, or one
    ///   `.mergeByProperty` merged, or left out for a deletion of this set's) the version its
    ///   copy was made on, so that a copy it still holds, saved again, is settled again the same
    ///   way instead of replacing this set's change whole.
    /// - Throws: ``GraphStoreError/mergeConflict(_:)`` under `.error`, naming every such id;
    ///   ``GraphStoreError/codingFailed(path:entity:id:reason:)`` when a property merge fails.
    ///   Nothing is changed then.
    /// - Complexity: O(child's changes), plus `rebasing` for each inherited base, plus a
    ///   property merge (encoding three objects) per conflict under `.mergeByProperty`.
    mutating func merge(
        _ child: ChangeSet, policy: MergePolicy, schema: Schema, rebasing: (Int, ObjectKey, UInt64) -> InheritedBase?
    ) throws -> MergedPush {
        let child = child.folded()
        // Decided first and applied after, so that a conflict under `.error` changes nothing.
        var decided: [(entity: Int, key: ObjectKey, change: PendingChange?, pushed: Pushed)] = []
        var conflicts: [MergeConflict] = []
        func take(_ entity: Int, _ key: ObjectKey, _ change: PendingChange, madeThrough: UInt64? = nil) {
            var change = change
            change.sequence = nextPendingSequence()
            change.fromChild = true
            change.holdsChildValue = true
            change.madeThrough = madeThrough
            decided.append((entity, key, change, .taken(sequence: change.sequence, base: change.base)))
        }
        func keep(_ entity: Int, _ key: ObjectKey, _ change: PendingChange?, madeOn base: StoredObject?) {
            var change = change
            change?.sequence = nextPendingSequence()
            change?.fromChild = true
            change?.holdsChildValue = true
            change?.madeThrough = nil
            decided.append((entity, key, change, .kept(base: base)))
        }
        /// The base `change` of `key` stands on now: for one made over an ancestor's pending
        /// change, what that change left if the ancestor saved it since (when known).
        func standing(_ change: PendingChange, entity: Int, key: ObjectKey) -> (base: StoredObject?, through: UInt64?) {
            guard let through = change.inheritedThrough, let rebased = rebasing(entity, key, through) else {
                return (change.base, change.inheritedThrough)
            }
            return (rebased.base, rebased.through)
        }
        for (entity, changes) in child.entities.enumerated() where !changes.isEmpty {
            fold(entity)
            for (key, change) in changes {
                var merged = change
                guard let existing = self.change(entity: entity, key: key) else {
                    (merged.base, merged.inheritedThrough) = standing(change, entity: entity, key: key)
                    take(entity, key, merged)
                    continue
                }
                // This set's change stands on its base too: one made over an ancestor's pending
                // change (a child's value pushed here before that ancestor saved) on what that
                // change left once the ancestor saved it, not on the base it had before.
                (merged.base, merged.inheritedThrough) = standing(existing, entity: entity, key: key)
                let existingBase = merged.base
                // Made through this set's change (or on the ancestor's change it is based on
                // too), or on the same version: this set's base is the child's.
                if let through = change.inheritedThrough, through == existing.sequence || through == existing.inheritedThrough {
                    take(entity, key, merged, madeThrough: through == existing.sequence ? through : nil)
                    continue
                }
                var childBase = change.base
                if Self.isOlder(childBase, than: existingBase) { childBase = standing(change, entity: entity, key: key).base }
                guard Self.isOlder(childBase, than: existingBase) else {
                    take(entity, key, merged)
                    continue
                }
                switch policy {
                case .error:
                    let kind: MergeConflict.Kind =
                        existingBase == nil ? .deletedElsewhere : (childBase == nil ? .insertedElsewhere : .updatedElsewhere)
                    conflicts.append(MergeConflict(
                        entity: schema.entities[entity].name, id: key.description, kind: kind,
                        baseVersion: childBase?.version, storedVersion: existingBase?.version))
                case .storeWins:
                    keep(entity, key, nil, madeOn: childBase)
                case .contextWins:
                    take(entity, key, merged)
                case .mergeByProperty:
                    switch (change.kind, existing.kind, childBase) {
                    case (.upsert(let value), .upsert(let parents), let based?):
                        merged.kind = .upsert(try schema.entities[entity].mergingProperties(based.value, value, parents))
                        keep(entity, key, merged, madeOn: based)
                    case (.upsert, .delete, _):
                        // The parent's deletion wins against the child's update.
                        keep(entity, key, nil, madeOn: childBase)
                    default:
                        // The child's deletion wins; an object both inserted is the child's.
                        take(entity, key, merged)
                    }
                }
            }
        }
        if !conflicts.isEmpty { throw GraphStoreError.mergeConflict(conflicts) }
        var outcome = MergedPush()
        outcome.pushed.reserveCapacity(decided.count)
        for (entity, key, change, pushed) in decided {
            if let change {
                // The change this set held there: an entry, or its clear marker's deletion.
                let marked = cleared[entity]?.change(for: key)
                if let replaced = entities[entity].updateValue(change, forKey: key) ?? marked { outcome.replaced.append((entity, key, replaced)) }
                hasChildChanges = true
            }
            outcome.pushed.append((entity, key, pushed))
        }
        return outcome
    }

    /// What ``merge(_:policy:schema:rebasing:)`` did.
    struct MergedPush {
        /// For each of the child's changes, what the child knows of the id now.
        var pushed: [(entity: Int, key: ObjectKey, pushed: Pushed)] = []
        /// This set's changes a child's change replaced: a child of this context that read an
        /// id through one of them never saw what replaced it, so it keeps the replaced
        /// change's base, as after a rollback of it.
        var replaced: [(entity: Int, key: ObjectKey, change: PendingChange)] = []
    }

    /// What a child's save left in its parent for one of its changes (see
    /// ``merge(_:policy:schema:rebasing:)``).
    enum Pushed {
        /// The parent took the change whole, as its pending change of this sequence, based on
        /// `base`.
        case taken(sequence: UInt64, base: StoredObject?)
        /// The parent kept its own change, or merged the child's properties into it: the
        /// child's copy stays based on `base`, the version it was made on.
        case kept(base: StoredObject?)
    }

    /// Whether `base` is an older version than `other`. Bases that are no object cannot be
    /// ordered by version: a child's base that differs from its parent's there is the one its
    /// copy, the value that is saved, was made on, so it counts as older. Nor is a made-up
    /// version (``StoredObject/madeUp(_:before:)``) ordered with the real one just before it.
    static func isOlder(_ base: StoredObject?, than other: StoredObject?) -> Bool {
        switch (base, other) {
        case (let base?, let other?):
            // A made-up version stands just after the real one it masks to, and is ordered
            // with neither that one nor another made-up one: those count as older both ways.
            let mine = StoredObject.commitNumber(base.version), theirs = StoredObject.commitNumber(other.version)
            return mine == theirs ? base.version != other.version : mine < theirs
        case (nil, nil): return false
        default: return true
        }
    }

    /// Notes that the context read `key` through its change of `sequence`: a child's value
    /// there is now what it knows (see ``PendingChange/fromChild``). Returns that change when
    /// it was a child's: the copy the context holds now is based as it is, which the caller
    /// records.
    ///
    /// - Complexity: O(1); nothing while no child's save put a change here.
    mutating func noteReadThrough(entity: Int, key: ObjectKey, sequence: UInt64) -> PendingChange? {
        guard hasChildChanges, let change = entities[entity][key], change.sequence == sequence, change.fromChild else { return nil }
        entities[entity][key]?.fromChild = false
        return change
    }

    /// What a context that read `change`, a child's value, knows of the id.
    static func record(ofReading change: PendingChange) -> EntityReads.Record {
        change.inheritedThrough.map { .inherited(sequence: $0) } ?? .stored(change.base)
    }

    /// Removes the entries of `committed` that have not been changed again since.
    mutating func removeCommitted(_ committed: ChangeSet) {
        foldAll()
        let committed = committed.folded()
        // Rebuilt rather than removed from one by one: removing from an ordered dictionary
        // shifts its storage, which would make a large save quadratic.
        for (entity, changes) in committed.entities.enumerated() where !changes.isEmpty {
            entities[entity] = entities[entity].filter { key, change in changes[key]?.sequence != change.sequence }
        }
        for (entity, marker) in committed.cleared.enumerated() where marker != nil {
            if cleared[entity]?.sequence == marker?.sequence { cleared[entity] = nil }
        }
    }

    /// For a child context: makes the entries of `pushed`, the changes its save just pushed
    /// into its parent, that were changed again while the save ran (on the same copy: the
    /// pushed change's base and ancestor change, and not a child's value made elsewhere) made
    /// through the parent's change that took the pushed one (`taken`: by entity and id, its
    /// sequence), as a change made just after the save is (see `GraphContext.knownBase`): the
    /// parent's save of the pushed value is then no conflict for them. An id whose change the
    /// parent kept or merged into its own keeps its base.
    ///
    /// - Complexity: O(pushed changes).
    mutating func rebasePushed(_ pushed: ChangeSet, taken: [(entity: Int, key: ObjectKey, sequence: UInt64)]) {
        guard !taken.isEmpty else { return }
        foldAll()
        let pushed = pushed.folded()
        for (entity, key, sequence) in taken {
            guard let entry = entities[entity][key], let saved = pushed.entities[entity][key], entry.sequence != saved.sequence,
                  entry.base?.version == saved.base?.version, entry.inheritedThrough == saved.inheritedThrough,
                  !(entry.holdsChildValue && entry.madeThrough != saved.sequence), !(saved.holdsChildValue && !entry.holdsChildValue)
            else { continue }
            entities[entity][key]?.inheritedThrough = sequence
        }
    }

    /// Bases the entries of `committed` that were changed again while it was being saved on
    /// what that save left (only those made on it: on the saved change's base, and not a
    /// child's value made elsewhere, nor this context's change of a copy from before a child's
    /// value it was saving): `settled(entity, key)` is the object it wrote, `.some(nil)` for
    /// one it deleted or found deleted, `nil` for an id it did not settle (dropped by
    /// `.storeWins`, merged away by a unique constraint): those keep their base.
    ///
    /// - Complexity: O(committed changes).
    mutating func rebase(_ committed: ChangeSet, settled: (Int, ObjectKey) -> StoredObject??) {
        foldAll()
        let committed = committed.folded()
        for (entity, changes) in committed.entities.enumerated() where !changes.isEmpty && !entities[entity].isEmpty {
            for (key, saved) in changes {
                guard let entry = entities[entity][key], let object = settled(entity, key) else { continue }
                // A child's change taken while the save was in flight is based on what the
                // saved change wrote only if the child's copy was made through that change; a
                // change made on another base (over a child's value the context never read)
                // keeps it.
                if entry.base?.version != saved.base?.version || (entry.holdsChildValue && entry.madeThrough != saved.sequence)
                    || (saved.holdsChildValue && !entry.holdsChildValue) {
                    // (The last: this context's change of its copy from before a child's value
                    // it was saving: not made on what that save wrote.)
                    continue
                }
                entities[entity][key]?.base = object
                entities[entity][key]?.inheritedThrough = nil
            }
        }
        // Entries made during the save for objects a committed clear marker covered were based
        // on the marked version; the save deleted those objects.
        for (entity, marker) in committed.cleared.enumerated() where marker != nil && !entities[entity].isEmpty {
            for key in entities[entity].keys where committed.entities[entity][key] == nil {
                if case .some(.none) = settled(entity, key) { entities[entity][key]?.base = nil }
            }
        }
    }
}
