import HashTreeCollections

/// What a context last read of one entity's objects: the bases of the changes it makes to them
/// afterwards.
///
/// A fetch that reads every object of the entity (no predicate, no window) keeps the table it
/// read, which costs O(1) because tables are persistent maps; any other read keeps one record
/// per id it returned. A later whole read replaces everything before it. The records of one
/// entity are bounded by what the context read and what its saves left, deletions included:
/// past ``limit(storedCount:)`` ids, the records of ids it read while absent, that have none
/// now either, are dropped (see ``prune(keeping:)``).
///
/// What a save of the context left counts as read, whether or not the context read anything
/// of the entity before: the context knows what it wrote. While it has read nothing of the
/// entity and no other context's commit changed the table since its first save recorded here,
/// the table after its last save holds what its saves wrote (``SavedRun``): that table is kept
/// (O(1) per save, plus a pass over the save's changes without look-ups), with a record only per
/// id a save left no object at; a top-level context then also logs its changes without looking
/// their bases up (``admitsLogging(stamp:)``). Once another commit changed the table, each later
/// save is recorded id by id, O(its changes).
struct EntityReads: Sendable {
    /// What one read of an id saw.
    enum Record: Sendable {
        /// The stored object (`nil`: there was none).
        case stored(StoredObject?)
        /// What a save of this context left at the id (`nil`: no object), committed as store
        /// version `number`: a fetch that read an older table does not replace it.
        case settled(StoredObject?, number: UInt64)
        /// An ancestor's pending change, of this sequence: a change is based as that
        /// ancestor's would be, or, once the ancestor saved or dropped it, on what that left.
        case inherited(sequence: UInt64)

        /// The sequence of the ancestor's change a `.inherited` read saw, else `nil`.
        var inheritedSequence: UInt64? {
            if case .inherited(let sequence) = self { sequence } else { nil }
        }

        /// The stored object a `.stored` or `.settled` record saw (`.some(nil)`: none), else `nil`.
        var storedObject: StoredObject?? {
            switch self {
            case .stored(let object), .settled(let object, _): object
            case .inherited: nil
            }
        }

        /// Whether this is what a save of this context committed after store version `number`.
        func isSettled(after number: UInt64) -> Bool {
            if case .settled(_, let settled) = self { settled > number } else { false }
        }

        /// Whether this is what a save of this context committed before store version `number`.
        func isSettled(before number: UInt64) -> Bool {
            if case .settled(_, let settled) = self { settled < number } else { false }
        }
    }

    /// The table as of the last fetch that read every object, if any did.
    private(set) var whole: TreeDictionary<ObjectKey, StoredObject>?
    /// Reads of single ids since then; they override `whole`.
    private(set) var byID: [ObjectKey: Record] = [:]
    /// The newest store version a save of this context settled records at (0: none).
    private var latestSettled: UInt64 = 0
    /// The store version of the last save of this context that dropped the whole table (0: none).
    private var emptiedAt: UInt64 = 0
    /// Twice the records the last pruning kept (0: none since `byID` was emptied): the next
    /// one waits until the records pass it, not only ``limit(storedCount:)``, so that holding
    /// many objects does not make every read prune again.
    private var pruneAbove = 0
    /// Whether the context recorded a read of the entity (a fetch, ``GraphContext/model(_:id:)``,
    /// a child's save into it; not one its own pending changes answered): until then what is
    /// recorded is what its own saves left.
    private(set) var hasRead = false
    /// The context's saves of the entity in a row with no other commit changing its table in
    /// between, while it has read nothing of the entity: what they wrote is what the table after
    /// the last one holds at their versions, kept as that table (O(1)) instead of a record per id.
    private var run: SavedRun?
    /// The table's stamp (``GraphVersion/tableStamps``) after the context's last save of the
    /// entity.
    private var savedStamp: UInt64 = 0
    /// Whether the table may hold, at an id this context's saves left something at, what
    /// another commit wrote since: another context's commit changed the table after a save
    /// of this context recorded here, or a `.mergeByProperty` save stored merges. Then only
    /// the records tell what the context's saves left: `run` is not extended, and later saves
    /// are recorded id by id.
    private var changedElsewhere = false

    /// The number of per-id records.
    var count: Int { byID.count }

    /// Whether anything tells what the context's saves left.
    private var hasSavedRecords: Bool { run != nil || !byID.isEmpty }

    /// Whether the context read anything of the entity or recorded what its saves left: a
    /// change is based on these records rather than on the stored object.
    var hasRecords: Bool { hasRead || hasSavedRecords }

    /// What this context last read of `key` (or its save left there), or `nil` when it neither
    /// read nor saved it.
    ///
    /// - Complexity: O(1) hashing, plus O(log n) in `whole` or the run's table.
    func record(for key: ObjectKey) -> Record? {
        let recorded = byID[key] ?? whole.map { .stored($0[key]) }
        // What the run wrote, unless a later save recorded the id since (or the context read
        // it since: a read ends the run).
        guard let written = run?.object(for: key) else { return recorded }
        if let recorded, !recorded.isSettled(before: written.version) { return recorded }
        return .settled(written, number: written.version)
    }

    // MARK: What saves left

    /// Whether a top-level context's change of the entity may be logged, its base read later
    /// from the table with stamp `stamp` (see ``PendingLog``): only while the context has read
    /// nothing of the entity, and, once a save of it is recorded here, while that table still
    /// holds what its saves left (no other commit changed it since). Once another commit did,
    /// changes are recorded with their bases looked up, from the records, from then on.
    mutating func admitsLogging(stamp: UInt64) -> Bool {
        guard !hasRead else { return false }
        guard hasSavedRecords else { return true }
        if !changedElsewhere, stamp == savedStamp { return true }
        changedElsewhere = true
        return false
    }

    /// Notes a save of this context with changes of the entity, before what it left is
    /// recorded: `previous` is the table's stamp in the version it committed on, `stamp` the
    /// one after it; `merged`, whether it stored property merges (which its records do not
    /// equal).
    mutating func noteSave(previous: UInt64, stamp: UInt64, merged: Bool) {
        if merged || (hasSavedRecords && previous != savedStamp) { changedElsewhere = true }
        savedStamp = stamp
    }

    /// Records what `saved`, a save of this context of an entity it has not read, left;
    /// `table` is the entity's table in the version the save made, on the version numbered
    /// `after`. While no other commit changed the table since the run of saves began, the run
    /// takes that table, and only the ids the save left no object at are recorded; otherwise
    /// each id it settled is.
    ///
    /// - Complexity: O(the save's changes): while the run goes on, a pass without look-ups plus
    ///   O(log n) per deletion.
    mutating func recordSave(
        _ saved: SavedChanges, after baseNumber: UInt64, table: TreeDictionary<ObjectKey, StoredObject>,
        baseTable: TreeDictionary<ObjectKey, StoredObject>
    ) {
        let number = saved.version
        latestSettled = max(latestSettled, number)
        if !changedElsewhere {
            // Objects stored at or before `baseNumber` are another context's (or older).
            run = SavedRun(since: run?.since ?? baseNumber + 1, table: table)
            saved.forEachDeletion(in: table) { key in byID[key] = .settled(nil, number: number) }
        } else {
            saved.forEachSettled(in: table) { key, object, isOwn in
                guard isOwn || knowsWhatARuleRewrote(key, base: baseTable[key]) else { return }
                byID[key] = .settled(object, number: number)
            }
        }
    }

    /// Records what a save of this context left at the ids it settled, committed as store
    /// version `number` (see ``read(_:number:table:)`` for the rest).
    mutating func recordSaved(_ objects: some Sequence<(ObjectKey, StoredObject?)>, number: UInt64, table: TreeDictionary<ObjectKey, StoredObject>) {
        add(objects.lazy.map { ($0, .settled($1, number: number)) }, number: nil, table: table)
    }

    /// After a save of this context dropped the whole table of an entity it has not read:
    /// what its earlier saves left is gone with it.
    mutating func forgetSaved() {
        run = nil
        byID = [:]
        pruneAbove = 0
    }

    /// Records a read of every object of `table`, the table of store version `number`;
    /// `throughChanges` are the ids the reader saw through a pending change instead (its own,
    /// or an ancestor's), with what to remember of them: the reader did not see the stored
    /// object there, so what it knew before stays its base once the change is saved or
    /// dropped.
    ///
    /// A fetch runs without the context's lock, so a save of this context can settle its ids
    /// between the fetch's reading the table and its recording the read: what that save left
    /// is newer, and stays. A table read before this context's save dropped the whole entity
    /// is not recorded at all.
    ///
    /// - Complexity: O(throughChanges); O(records) when a save of this context settled after
    ///   `number`.
    mutating func readAll(_ table: TreeDictionary<ObjectKey, StoredObject>, number: UInt64, throughChanges: some Sequence<(ObjectKey, Record)>) {
        guard number >= emptiedAt else { return }
        hasRead = true
        // A save of this context settles its ids while a fetch runs: the run is older.
        run = nil
        whole = table
        byID = latestSettled > number ? byID.filter { $0.value.isSettled(after: number) } : [:]
        pruneAbove = 0
        for (key, record) in throughChanges where !(byID[key]?.isSettled(after: number) ?? false) { byID[key] = record }
    }

    /// Records reads of single ids (or what a save of this context left at them: it knows what
    /// it wrote); `table` is the entity's table now (for pruning). `number` is the store version
    /// the reads saw, for a fetch that read without the context's lock: an id a save of this
    /// context settled after it keeps what the save left (see ``readAll(_:number:throughChanges:)``).
    ///
    /// - Complexity: O(k) amortized for k records: a pruning walks every record, and the next
    ///   waits until at least as many were added.
    mutating func read(_ records: some Sequence<(ObjectKey, Record)>, number: UInt64? = nil, table: TreeDictionary<ObjectKey, StoredObject>) {
        if let number, number < emptiedAt { return }
        if add(records, number: number, table: table) { hasRead = true }
    }

    /// Records `records` (see ``read(_:number:table:)``), read or not; returns whether it
    /// recorded any.
    @discardableResult
    private mutating func add(_ records: some Sequence<(ObjectKey, Record)>, number: UInt64?, table: TreeDictionary<ObjectKey, StoredObject>) -> Bool {
        var added = false
        for (key, record) in records {
            if case .settled(_, let settled) = record { latestSettled = max(latestSettled, settled) }
            if let number, latestSettled > number, byID[key]?.isSettled(after: number) ?? false { continue }
            byID[key] = record
            added = true
        }
        if byID.count > max(Self.limit(storedCount: table.count), pruneAbove) { prune(keeping: table) }
        return added
    }

    /// After a save of store version `number` dropped `table`, the entity's whole table: the
    /// context knows its objects gone and the table empty. What it read of other ids stays (an
    /// object it read that another context deleted before the drop: a copy of it saved now is
    /// a conflict, not brought back): the objects of the table it read last (`whole`) that the
    /// drop did not hold become per-id records, and `whole` says the table is empty.
    ///
    /// - Complexity: O(r log n) for r per-id records, plus O(w log n) for the w objects of the
    ///   table the context last read whole (at most what that fetch returned).
    mutating func settleEmptied(number: UInt64, table: TreeDictionary<ObjectKey, StoredObject>) {
        run = nil
        hasRead = true
        byID = byID.filter { table[$0.key] == nil }
        if let read = whole {
            for (key, object) in read where table[key] == nil && byID[key] == nil { byID[key] = .stored(object) }
        }
        // Ids the context knew nothing of had no object after the drop.
        whole = [:]
        pruneAbove = 0
        emptiedAt = max(emptiedAt, number)
        latestSettled = max(latestSettled, number)
    }

    /// Whether what this context knows of `key` is `base`, the object a delete rule (or a
    /// unique merge moving references) of its save rewrote without the context changing it,
    /// or it knows nothing of it: only then is what the rule left its record. Otherwise the
    /// rule rewrote a version another context saved, which this context never saw, and its
    /// record stays: a copy it holds, saved later, is a conflict rather than based on a
    /// version it did not see.
    func knowsWhatARuleRewrote(_ key: ObjectKey, base: StoredObject?) -> Bool {
        // No record, or one of an ancestor's change: based as before.
        guard let recorded = record(for: key)?.storedObject else { return true }
        return recorded?.version == base?.version
    }

    /// The most per-id records kept for an entity holding `storedCount` objects.
    static func limit(storedCount: Int) -> Int { max(4_096, 2 * storedCount) }

    /// Drops the records of ids read while absent that `table` holds no object of either: a
    /// change of such an id, made while it stays absent, is based on no object with the record
    /// or without it. `whole` forgets them too, so that such a change is not based on a table
    /// read before the object went.
    ///
    /// What a save of this context left stays, a deletion included: were it dropped, a change
    /// of an id another context creates again afterwards would be based on that object, and
    /// the copy the context holds of what it deleted would overwrite it without a conflict.
    /// The record of an object this context read stays too, even once the object is deleted
    /// elsewhere: it makes saving the copy the context may hold a conflict, where a change
    /// based on no object would bring the object back. So does a read through an ancestor's
    /// pending change. What remains is bounded by what the context read and saved: the
    /// objects it read, wrote or deleted (until a fetch of every object replaces them), its
    /// reads through ancestors' changes, and at most `table.count` ids read while absent that
    /// hold an object now. The next pruning waits until the records have doubled.
    ///
    /// - Complexity: O(records).
    mutating func prune(keeping table: TreeDictionary<ObjectKey, StoredObject>) {
        let gone = byID.filter { key, record in
            if case .stored(nil) = record { table[key] == nil && run?.object(for: key) == nil } else { false }
        }.keys
        for key in gone {
            byID[key] = nil
            whole?[key] = nil
        }
        pruneAbove = 2 * byID.count
    }
}

/// What a committed save left of the ids it settled, read back from the version after it: the
/// object it wrote, or `nil` for one it deleted (or found deleted).
struct SettledObjects {
    private var objects: [Int: [ObjectKey: StoredObject?]] = [:]
    private var dropped: [Int: TreeDictionary<ObjectKey, StoredObject>] = [:]

    /// - Parameters:
    ///   - committed: the saved change set, folded.
    ///   - latest: a version at or after `written`; an object it holds at `written.version`
    ///     is the one written, otherwise the committed value stands for it.
    ///   - entities: the entity indexes to collect.
    /// - Complexity: O(changed objects of `entities`); O(1) for a table dropped whole.
    init(committed: ChangeSet, written: GraphChange, latest: GraphVersion, schema: Schema, entities: some Sequence<Int>) {
        for entity in entities {
            let name = schema.entities[entity].name
            if let whole = written.dropped[name] { dropped[entity] = whole }
            objects[entity] = Self.settled(
                mine: committed.entities[entity], marker: committed.cleared[entity], written: written, name: name, table: latest.tables[entity])
        }
    }

    /// What a save left of the ids of one entity it settled.
    ///
    /// - Parameters:
    ///   - mine: the entity's changes in the saved change set, folded.
    ///   - marker: the entity's clear marker in it, if any.
    ///   - table: the entity's table in a version at or after `written`; an object it holds at
    ///     `written.version` is the one written, otherwise the committed value stands for it.
    /// - Complexity: O(changed objects), plus the objects `marker` covers when the save did not
    ///   drop the table whole.
    static func settled(
        mine: EntityChanges, marker: ClearMarker?, written: GraphChange, name: String, table: TreeDictionary<ObjectKey, StoredObject>
    ) -> [ObjectKey: StoredObject?] {
        var map: [ObjectKey: StoredObject?] = [:]
        let merged = written.merged[name] ?? []
        for keys in [written.inserted[name], written.updated[name]] {
            for key in keys ?? [] {
                if !merged.isEmpty, merged.contains(key), let value = mine[key]?.upserted {
                    // Stored is a merge with values this context never saw: what it last
                    // read is what it wrote, one version older than the merge, so that a
                    // change of its copy merges again instead of reverting them.
                    map[key] = .some(StoredObject(value: value, version: written.version - 1))
                } else if let object = table[key], object.version == written.version {
                    map[key] = .some(object)
                } else if let value = mine[key]?.upserted {
                    map[key] = .some(StoredObject(value: value, version: written.version))
                }
            }
        }
        for key in written.deleted[name] ?? [] { map[key] = .some(nil) }
        // Deleting what was already gone settles it too, whether the context deleted it by
        // id or through a clear marker (whose deletions the save spelled out, O(n) anyway).
        for (key, change) in mine where change.upserted == nil && map[key] == nil && table[key] == nil {
            map[key] = .some(nil)
        }
        if let marker, written.dropped[name] == nil {
            for key in marker.table.keys where map[key] == nil && mine[key] == nil && table[key] == nil {
                map[key] = .some(nil)
            }
        }
        return map
    }

    /// What the save left at `key`: the object, `.some(nil)` for none, `nil` when it did not
    /// settle `key`.
    func object(entity: Int, key: ObjectKey) -> StoredObject?? {
        if let object = objects[entity]?[key] { return object }
        if let table = dropped[entity], table[key] != nil { return .some(nil) }
        return nil
    }

    /// Calls `body` with each settled id of `entity` (not those of a dropped table).
    func forEach(entity: Int, _ body: (ObjectKey, StoredObject?) -> Void) {
        for (key, object) in objects[entity] ?? [:] { body(key, object) }
    }

    /// The table the save dropped whole, if it dropped `entity`'s.
    func droppedObjects(entity: Int) -> TreeDictionary<ObjectKey, StoredObject>? { dropped[entity] }
}

/// One entity's part of a save of a top-level context that has not read the entity, as the
/// save committed it: what ``EntityReads/recordSave(_:after:table:baseTable:)`` records.
struct SavedChanges {
    /// The entity's changes in the saved change set: its entries, then its log's (not folded).
    var entries: EntityChanges
    var logged: [PendingLog.Entry]
    /// The store version the save committed as.
    var version: UInt64
    /// What the commit reported of the entity; `nil` when every change was written as made
    /// (see ``writesAsMade(policy:isConstrained:)``).
    var reported: Report?

    /// What a commit reported, and the name of the entity it is read for.
    struct Report {
        var written: GraphChange
        var name: String
    }

    /// Whether a save under `policy` that deleted nothing of an entity (`isConstrained`: with
    /// unique constraints) wrote every change of it as made: no change dropped (`.storeWins`)
    /// or merged (`.mergeByProperty`), no object moved to another id by a unique constraint
    /// (`.contextWins` on a constrained entity), none cascaded away (that deletes), and a
    /// deletion found its object gone.
    static func writesAsMade(policy: MergePolicy, isConstrained: Bool) -> Bool {
        policy == .error || (policy == .contextWins && !isConstrained)
    }

    /// Calls `body` with what the save left at each id it settled: the object it wrote, `nil`
    /// for one it deleted or found deleted. Ids it did not settle (a change `.storeWins`
    /// dropped, an object merged into another by a unique constraint) are left out. `table` is
    /// the entity's table in a version at or after the save.
    ///
    /// - Complexity: O(changes); no look-up or folding when every change was written as made.
    func forEachSettled(in table: TreeDictionary<ObjectKey, StoredObject>, _ body: (ObjectKey, StoredObject?, _ isOwn: Bool) -> Void) {
        guard let reported else {
            // In the order made: a later change of an id replaces an earlier one's record.
            for (key, change) in entries { body(key, change.upserted.map { StoredObject(value: $0, version: version) }, true) }
            for entry in logged {
                if case .upsert(let value) = entry.kind {
                    body(entry.key, StoredObject(value: value, version: version), true)
                } else {
                    body(entry.key, nil, true)
                }
            }
            return
        }
        // Each id's last change (its base is not needed here).
        var mine = entries
        for entry in logged {
            mine.updateValue(forKey: entry.key, default: PendingChange(kind: entry.kind, base: nil, sequence: entry.sequence)) {
                $0.kind = entry.kind
            }
        }
        for (key, object) in SettledObjects.settled(mine: mine, marker: nil, written: reported.written, name: reported.name, table: table) {
            body(key, object, mine[key] != nil)
        }
    }

    /// Calls `body` with each id the save left no object at (deleted, found deleted, or
    /// deleted by a delete rule), given `table`, the entity's table right after the save.
    ///
    /// - Complexity: O(changes), plus O(log n) per deletion.
    func forEachDeletion(in table: TreeDictionary<ObjectKey, StoredObject>, _ body: (ObjectKey) -> Void) {
        for (key, change) in entries where change.upserted == nil && table[key] == nil { body(key) }
        for entry in logged {
            if case .delete = entry.kind, table[entry.key] == nil { body(entry.key) }
        }
        if let reported, !reported.written.deleted.isEmpty {
            for key in reported.written.deleted[reported.name] ?? [] { body(key) }
        }
    }
}

/// A context's saves of one entity in a row, with no other commit changing the entity's table
/// in between: every object the table after the last one holds at a version from the first
/// one's on was written by one of them.
struct SavedRun: Sendable {
    /// The store version of the first save.
    var since: UInt64
    /// The entity's table right after the last save.
    var table: TreeDictionary<ObjectKey, StoredObject>

    /// The object the saves left at `key`, if they wrote it.
    ///
    /// - Complexity: O(log n).
    func object(for key: ObjectKey) -> StoredObject? {
        guard let object = table[key], object.version >= since else { return nil }
        return object
    }
}

/// What a parent context's saves and rollbacks left of the pending changes its children may
/// have read through: per id, the base a child's change of the id is then based on (the
/// object the save wrote, or the dropped change's base, with the ancestor's change that base
/// was inherited through, if any, for a later look-up to follow), by the sequence of the
/// change it settled.
///
/// A later save or rollback of the id continues what an earlier one left when its change was
/// made on what that one left (the context changed again what it had saved): a child that
/// read through the earlier change then takes what the later one left, since a context's own
/// save is never a conflict for its child. Otherwise (the context read another context's save
/// of the object in between, and changed that) the earlier record stays for the children
/// that read through the earlier change: their copies are based on what they saw, and the
/// other context's save is a conflict for them. Such breaks are few per id (each follows
/// another context's save of the object that this context read), and the records go with the
/// last child (see ``GraphContext/recordsForChildren(_:)``); none is merged into another,
/// which could make a property merge take a version the child never saw for its own.
///
/// Only a child that read the id through one of these changes (or an earlier one) takes that
/// base; a child that never read the id is based as any context is. What a save of this
/// context left stays, a deletion included: were it dropped, a child's copy of an id another
/// context created again afterwards would be based on that object and overwrite it without a
/// conflict, as ``EntityReads`` keeps what its saves deleted. Bounded as ``EntityReads``
/// otherwise: past its limit, the records a rollback left whose base is no object (and was
/// inherited through no ancestor's change), of ids with no stored object now, go, as the
/// records of ids read while absent do there. A base that is an object stays, so that a
/// child's copy of an object deleted elsewhere since conflicts.
struct ChildBases: Sendable {
    /// What one save or rollback (or a run of them, each continuing the one before) left.
    struct Settled: Sendable {
        var sequence: UInt64
        var base: StoredObject?
        var through: UInt64?
        var prunable: Bool
    }

    /// What the saves and rollbacks of one id left: the last, and the earlier ones a later one
    /// did not continue (empty, and so not allocated, in the common case).
    struct History: Sendable {
        var latest: Settled
        var older: [Settled] = []

        var isPrunable: Bool { latest.prunable && older.allSatisfy(\.prunable) }

        /// The record of the change a child read through at sequence `seen`: of the records at
        /// or after it, the one with the smallest sequence. Sequences are not in the order the
        /// records were made: a change a child pushed keeps the child's sequence, which may be
        /// older than a change this context made and settled before.
        func settled(seen: UInt64) -> Settled? {
            var found: Settled?
            for settled in older where settled.sequence >= seen && settled.sequence < (found?.sequence ?? .max) { found = settled }
            if latest.sequence >= seen, latest.sequence < (found?.sequence ?? .max) { found = latest }
            return found
        }
    }

    private var byID: [ObjectKey: History] = [:]
    /// Twice the records the last pruning kept: the next waits until the records pass it.
    private var pruneAbove = 0
    /// A save dropped the whole table: a change read at or before this sequence saw an
    /// object that is gone.
    private var droppedThrough: UInt64?

    /// The number of per-id records.
    var count: Int { byID.count }

    /// The base for a child that read `key` through the change of sequence `seen`, if this
    /// context settled that change (or a later one of the same id): what the first save or
    /// rollback at or after `seen` left, as far as later ones continued it, with the sequence
    /// of the ancestor's change a dropped change's base was itself inherited through, if it was.
    ///
    /// - Complexity: O(1) hashing, plus the id's few records.
    func base(for key: ObjectKey, seen: UInt64) -> (base: StoredObject?, through: UInt64?)? {
        if let settled = byID[key]?.settled(seen: seen) { return (settled.base, settled.through) }
        if let droppedThrough, droppedThrough >= seen { return (nil, nil) }
        return nil
    }

    /// Records what the changes `records` (id, sequence, the base the change was made on,
    /// what it left, and the ancestor's change a dropped change's base was inherited through)
    /// left: a save's (`byRollback` false), or a rollback's, whose records of no object may be
    /// pruned; `table` is the entity's table now (for pruning).
    ///
    /// - Complexity: O(k) amortized for k records.
    mutating func settle(
        _ records: some Sequence<(ObjectKey, UInt64, StoredObject?, StoredObject?, UInt64?)>, byRollback: Bool,
        table: TreeDictionary<ObjectKey, StoredObject>
    ) {
        for (key, sequence, madeOn, base, through) in records {
            let settled = Settled(sequence: sequence, base: base, through: through, prunable: byRollback && base == nil && through == nil)
            guard var history = byID[key] else {
                byID[key] = History(latest: settled)
                continue
            }
            // A change made on what the last record left continues it, for the children that
            // read through the earlier change too; one made on another version does not.
            let continues = history.latest.through == nil && madeOn?.version == history.latest.base?.version
            if continues {
                // Covering the children that read through either change.
                history.latest = Settled(
                    sequence: max(sequence, history.latest.sequence), base: base, through: through, prunable: settled.prunable)
            } else {
                history.older.append(history.latest)
                history.latest = settled
            }
            byID[key] = history
        }
        if byID.count > max(EntityReads.limit(storedCount: table.count), pruneAbove) {
            byID = byID.filter { key, history in !history.isPrunable || table[key] != nil }
            pruneAbove = 2 * byID.count
        }
    }

    /// A save dropped `table`, the entity's whole table, as of the change of sequence
    /// `sequence`: the records of its ids go (a change read at or before `sequence` saw them
    /// gone); the others stay (an object deleted elsewhere before the drop).
    mutating func settleDropped(through sequence: UInt64, table: TreeDictionary<ObjectKey, StoredObject>) {
        byID = byID.filter { table[$0.key] == nil }
        pruneAbove = 0
        droppedThrough = max(droppedThrough ?? 0, sequence)
    }
}
