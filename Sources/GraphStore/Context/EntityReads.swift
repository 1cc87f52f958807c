import HashTreeCollections

/// What a context last read of one entity's objects: the bases of the changes it makes to them
/// afterwards.
///
/// A fetch that reads every object of the entity (no predicate, no window) keeps the table it
/// read, which costs O(1) because tables are persistent maps; any other read keeps one record
/// per id it returned. A later read replaces what an earlier one recorded, whichever store
/// version each read: fetches run without the context's lock and may record last, and a read
/// of an older version only ever makes a change based on an older version, a conflict (the
/// safe outcome), while keeping a newer read over it could base a copy of the older one on
/// another context's later save (its deletion: the copy would bring the object back). The one
/// exception is what a save of this context left: no read of an older store version replaces
/// it (see ``read(_:number:table:)`` and ``readAll(_:number:othersInFlight:throughChanges:)``),
/// or the context's next change would conflict with its own save. The records of one
/// entity are bounded by what the context read and what its saves left, deletions included:
/// past ``limit(storedCount:)`` ids, the records of ids it read while absent, that have none
/// now either, are dropped (see ``prune(keeping:)``).
///
/// What a save of the context left counts as read, whether or not the context read anything
/// of the entity before: the context knows what it wrote. While it has read nothing of the
/// entity and no other context's commit changed the table since its first save recorded here
/// (nor kept its version at an id where `.storeWins` dropped this context's change), the table
/// after its last save holds what its saves wrote (``SavedRun``): that table is kept
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
        /// version `number`: a fetch that read an older table does not replace it, and a read
        /// that saw just that leaves it as it is.
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

        /// Whether this is a read of the store that saw `left`, what a save of this context
        /// left at the id: the same object version, or no object where the save left none.
        func confirms(_ left: StoredObject?) -> Bool {
            if case .stored(let object) = self { object?.version == left?.version } else { false }
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
    /// of this context recorded here, a `.mergeByProperty` save stored merges, or a `.storeWins`
    /// save dropped a change (and kept another commit's version at its id). Then only
    /// the records tell what the context's saves left: `run` is not extended, and later saves
    /// are recorded id by id.
    private var changedElsewhere = false

    /// What the context knew of ids before it took a value one of its children's saves put
    /// there, which it has not read since: a copy it holds from before is based on that, not
    /// on the child's value (see ``ownRecord(for:)``), also once it saved (or, for a child,
    /// pushed) that value. Noted when it takes the value, from its record of the id, else the
    /// base of its own change the value replaced; a read of the id (not one older than a save
    /// of it), or a save of its own change there, ends it.
    private(set) var unreadChildValues: [ObjectKey: Record] = [:]

    /// The number of per-id records.
    var count: Int { byID.count }

    /// Notes that a child's save put a value at `key` that this context has not read (see
    /// ``PendingChange/fromChild``): what it knew before stays the base of its own changes of
    /// the id, also once it saved that value, until it reads the id.
    /// With no record of the id, what it knew is `fallback`, the base of its own change the
    /// child's value replaced, if any.
    mutating func noteUnreadChildValue(at key: ObjectKey, fallback: StoredObject?? = .none) {
        guard unreadChildValues[key] == nil, let known = record(for: key) ?? fallback.map({ .stored($0) }) else { return }
        unreadChildValues[key] = known
    }

    /// After a save of this context wrote its own change of `key`: it knows what it wrote.
    mutating func forgetUnreadChildValue(at key: ObjectKey) {
        if !unreadChildValues.isEmpty { unreadChildValues[key] = nil }
    }

    /// What this context's own change of `key` is based on: what it knew before a child's
    /// value it has not read, else ``record(for:)``. A child of this context is based on what
    /// the save wrote (``record(for:)``): it reads through this context.
    func ownRecord(for key: ObjectKey) -> Record? {
        unreadChildValues.isEmpty ? record(for: key) : unreadChildValues[key] ?? record(for: key)
    }

    /// Whether anything tells what the context's saves left.
    private var hasSavedRecords: Bool { run != nil || !byID.isEmpty || dropped != nil }

    /// The objects a save of this context dropped whole, and the store version it committed
    /// as, while the context had not read the entity (see ``forgetSaved(dropped:number:)``).
    /// Kept (O(1), a persistent table: the dropped objects stay in memory) until the context
    /// reads the whole entity, whose table then tells of every id.
    private var dropped: (table: TreeDictionary<ObjectKey, StoredObject>, number: UInt64)?

    /// Lets go of ``dropped``, freeing a large table off the calling thread (which holds the
    /// context's lock).
    private mutating func releaseDropped() {
        guard let table = dropped?.table else { return }
        dropped = nil
        if table.count >= BackgroundRelease.objectCount { BackgroundRelease.drop(table) }
    }

    /// Whether the context read anything of the entity or recorded what its saves left: a
    /// change is based on these records rather than on the stored object.
    var hasRecords: Bool { hasRead || hasSavedRecords }

    /// What this context last read of `key` (or its save left there), or `nil` when it neither
    /// read nor saved it.
    ///
    /// - Complexity: O(1) hashing, plus O(log n) in `whole` or the run's table.
    func record(for key: ObjectKey) -> Record? {
        // Past every record: an object a save of this context dropped with the whole table is
        // gone as of that save (``forgetSaved(dropped:number:)``).
        let recorded = byID[key] ?? whole.map { .stored($0[key]) }
            ?? dropped.flatMap { $0.table[key] == nil ? nil : .settled(nil, number: $0.number) }
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
    /// `after`. While no other commit changed the table since the run of saves began (and the
    /// save dropped no change under `.storeWins`), the run takes that table, and only the ids
    /// the save left no object at are recorded; otherwise each id it settled is.
    ///
    /// - Complexity: O(the save's changes): while the run goes on, a pass without look-ups plus
    ///   O(log n) per deletion (under `.storeWins`, plus what telling a dropped change takes:
    ///   see ``SavedChanges/dropsAChange()``).
    mutating func recordSave(
        _ saved: SavedChanges, after baseNumber: UInt64, table: TreeDictionary<ObjectKey, StoredObject>,
        baseTable: TreeDictionary<ObjectKey, StoredObject>
    ) {
        let number = saved.version
        latestSettled = max(latestSettled, number)
        // A change `.storeWins` dropped left another context's version at its id, which a
        // delete rule or a unique merge of the save may have rewritten at this save's version:
        // the run would take that for the context's write. So would a later run extend it.
        if !changedElsewhere, saved.dropsAChange() { changedElsewhere = true }
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

    /// After a save of this context, committed as store version `number`, dropped `table`,
    /// the whole table of an entity it has not read: what its earlier saves left is gone with
    /// it, and it knows each object of `table` deleted by that save. A change of one of those
    /// ids, made again by another context since, is then based on no object and conflicts with
    /// it (it was based on the object as stored when the context changed it: written over it,
    /// unseen). Ids the table did not hold are ids the context neither read nor saved.
    ///
    /// - Complexity: O(1).
    mutating func forgetSaved(dropped table: TreeDictionary<ObjectKey, StoredObject>, number: UInt64) {
        run = nil
        byID = [:]
        unreadChildValues = [:]
        pruneAbove = 0
        releaseDropped()
        dropped = (table, number)
        emptiedAt = max(emptiedAt, number)
        latestSettled = max(latestSettled, number)
    }

    /// Records a read of every object of `table`, the table of store version `number`;
    /// `throughChanges` are the ids the reader saw through a pending change instead (its own,
    /// or an ancestor's), with what to remember of them: the reader did not see the stored
    /// object there, so what it knew before stays its base once the change is saved or
    /// dropped.
    ///
    /// A fetch runs without the context's lock, so a save of this context can settle its ids
    /// between the fetch's reading the table and its recording the read: what that save left
    /// is newer, and stays. While `othersInFlight` (another fetch of the context has read a
    /// table and not recorded it yet, and may have read it before a save of the context), what
    /// a save left that `table` holds just so (the same object version, or no object where the
    /// save left none) stays too, for that older fetch not to replace it when it records after
    /// this one; otherwise `table` stands for it, and per-id records are only kept for what
    /// they are needed for. Everything else is replaced, a newer record of another context's
    /// save included. A table read before this context's save dropped the whole entity is not
    /// recorded at all.
    ///
    /// The run of saves (``SavedRun``) ends here with nothing lost: while a fetch of the context
    /// is in flight, its saves are recorded id by id (``GraphContext/settle(_:written:stamps:policy:rebasing:state:)``),
    /// never into the run, so every object the run wrote was in the store before the table of
    /// any fetch that records later was read, and is in that table unless another context
    /// saved over it since.
    ///
    /// - Complexity: O(throughChanges); O(r log n) for r per-id records when a save of this
    ///   context settled after `number`, or when it settled any while `othersInFlight`.
    mutating func readAll(
        _ table: TreeDictionary<ObjectKey, StoredObject>, number: UInt64, othersInFlight: Bool, throughChanges: some Sequence<(ObjectKey, Record)>
    ) {
        guard number >= emptiedAt else { return }
        hasRead = true
        // Only what the run wrote before any fetch now in flight read its table (see above).
        run = nil
        whole = table
        // Read after the drop, the table tells of every id: the dropped objects may go (freed
        // off this thread, which holds the context's lock).
        releaseDropped()
        if latestSettled > number || (othersInFlight && latestSettled > 0) {
            byID = byID.filter { key, record in
                guard case .settled(let left, let settled) = record else { return false }
                return settled > number || (othersInFlight && table[key]?.version == left?.version)
            }
        } else {
            byID = [:]
        }
        // What the context knew before a child's value stays where a save newer than this read
        // left it: the fetch never saw that value.
        if !unreadChildValues.isEmpty { unreadChildValues = unreadChildValues.filter { byID[$0.key]?.isSettled(after: number) ?? false } }
        pruneAbove = 0
        for (key, record) in throughChanges {
            if case .settled(let left, let settled)? = byID[key], settled > number || record.confirms(left) { continue }
            byID[key] = record
        }
    }

    /// Records reads of single ids (or what a save of this context left at them: it knows what
    /// it wrote); `table` is the entity's table now (for pruning). `number` is the store version
    /// the reads saw, for a fetch that read without the context's lock: an id a save of this
    /// context settled after it keeps what the save left. So does an id where the read saw just
    /// what a save of this context left: a fetch that read an older table, recording later, must
    /// not replace it (see ``readAll(_:number:othersInFlight:throughChanges:)``). A read replaces
    /// any other record, whichever version it saw.
    ///
    /// - Complexity: O(k) amortized for k records: a pruning walks every record, and the next
    ///   waits until at least as many were added.
    ///
    /// `byUser` false: what a child knows of ids it pushed into its parent, not a read by the
    /// user (see ``unreadChildValues``).
    mutating func read(
        _ records: some Sequence<(ObjectKey, Record)>, number: UInt64? = nil, table: TreeDictionary<ObjectKey, StoredObject>, byUser: Bool = true
    ) {
        if let number, number < emptiedAt { return }
        if add(records, number: number, table: table, byUser: byUser) { hasRead = true }
    }

    /// Records `records` (see ``read(_:number:table:)``), read or not; returns whether it
    /// recorded any.
    @discardableResult
    private mutating func add(
        _ records: some Sequence<(ObjectKey, Record)>, number: UInt64?, table: TreeDictionary<ObjectKey, StoredObject>, byUser: Bool = false
    ) -> Bool {
        var added = false
        for (key, record) in records {
            if case .settled(_, let settled) = record { latestSettled = max(latestSettled, settled) }
            // What the context's saves left at the id: its record, or what its run of saves
            // wrote there since (which a per-id record of an earlier save does not tell).
            if latestSettled > 0, case .settled(let left, let settled)? = run == nil ? byID[key] : self.record(for: key) {
                // What a save of this context left after the version a fetch read stays (and so
                // does what the context knew before a child's value there: the fetch is older).
                if let number, settled > number { continue }
                // So does what a read saw just so: replaced by it, it could be replaced in
                // turn by a fetch that read before the save and records later.
                if record.confirms(left) {
                    if byUser, !unreadChildValues.isEmpty { unreadChildValues[key] = nil }
                    byID[key] = .settled(left, number: settled)
                    added = true
                    continue
                }
            }
            if byUser, !unreadChildValues.isEmpty { unreadChildValues[key] = nil }
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
        releaseDropped()
        hasRead = true
        unreadChildValues = [:]
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
/// object it wrote, or `nil` for one it deleted (or found deleted), and whether that was the
/// context's own change (or a delete rule's or a unique merge's rewrite of an object whose
/// change, if any, `.storeWins` dropped); and the changes `.storeWins` dropped.
struct SettledObjects {
    /// What a save left at one id.
    struct Settled {
        /// The object, `nil` for none.
        var object: StoredObject?
        /// Whether it is what the context's change (or clear marker) of the id wrote: else a
        /// rule rewrote the object, which the context may never have seen.
        var isOwn: Bool
    }

    private var objects: [Int: [ObjectKey: Settled]] = [:]
    private var dropped: [Int: TreeDictionary<ObjectKey, StoredObject>] = [:]
    /// Per entity, the changes `.storeWins` dropped (a clear marker's as deletions of its
    /// sequence): they left nothing, as if rolled back.
    private var overruled: [Int: EntityChanges] = [:]

    /// - Parameters:
    ///   - committed: the saved change set, folded.
    ///   - latest: a version at or after `written`; an object it holds at `written.version`
    ///     is the one written, otherwise the committed value stands for it.
    ///   - entities: the entity indexes to collect.
    ///   - keptAsStored: under `.storeWins`, the tables of the version the commit was made on
    ///     (its conflicting changes were dropped), else `nil`.
    /// - Complexity: O(changed objects of `entities`); O(1) for a table dropped whole.
    init(
        committed: ChangeSet, written: GraphChange, latest: GraphVersion, schema: Schema, entities: some Sequence<Int>,
        keptAsStored: [TreeDictionary<ObjectKey, StoredObject>]?
    ) {
        for entity in entities {
            let name = schema.entities[entity].name
            if let whole = written.dropped[name] { dropped[entity] = whole }
            var mine = committed.entities[entity], marker = committed.cleared[entity]
            if let base = keptAsStored?[entity] {
                let overruled = Self.removeDropped(from: &mine, marker: &marker, spelledOut: written.dropped[name] == nil, base: base)
                if !overruled.isEmpty { self.overruled[entity] = overruled }
            }
            objects[entity] = Self.settled(mine: mine, marker: marker, written: written, name: name, table: latest.tables[entity])
        }
    }

    /// Whether `.storeWins` dropped `change`, given `stored`, the object in the version the
    /// commit was made on: it conflicted (deleting what is already gone does not).
    static func conflicts(_ change: PendingChange, stored: StoredObject?) -> Bool {
        stored?.version != change.baseVersion && (change.upserted != nil || stored != nil)
    }

    /// Removes from `mine` and `marker`, one entity's part of a `.storeWins` commit made on
    /// `base` (the entity's table then), the changes the commit dropped, and returns them: a
    /// change based on another version than `base` holds, and a deletion the marker stands
    /// for of an object stored elsewhere since the marking, when the save spelled the
    /// marker's deletions out (`spelledOut`; a table dropped whole had none to drop).
    ///
    /// - Complexity: O(changes), O(log n) each, plus the objects `marker` covers.
    static func removeDropped(
        from mine: inout EntityChanges, marker: inout ClearMarker?, spelledOut: Bool, base: TreeDictionary<ObjectKey, StoredObject>
    ) -> EntityChanges {
        var overruled: EntityChanges = [:]
        mine = mine.filter { key, change in
            guard conflicts(change, stored: base[key]) else { return true }
            overruled[key] = change
            return false
        }
        if var dropping = marker, spelledOut {
            dropping.table = dropping.table.filter { key, object in
                // An entry overrides the marker: where its change was dropped, the marker
                // does not stand for the id either.
                if overruled[key] != nil { return false }
                guard mine[key] == nil, let stored = base[key], stored.version != object.version else { return true }
                overruled[key] = PendingChange(kind: .delete, base: object, sequence: dropping.sequence)
                return false
            }
            marker = dropping
        }
        return overruled
    }

    /// What a save left of the ids of one entity it settled, and whether each is what the
    /// context's change (or clear marker) of it wrote.
    ///
    /// A change `.storeWins` dropped (see ``removeDropped(from:marker:spelledOut:base:)``) must
    /// not be in `mine` or `marker`: the save left nothing of it, and what a delete rule or a
    /// unique merge wrote at its id in the same save is a rewrite of the version another
    /// context stored, which the context may never have seen.
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
    ) -> [ObjectKey: Settled] {
        var map: [ObjectKey: StoredObject?] = [:]
        let merged = written.merged[name] ?? []
        for keys in [written.inserted[name], written.updated[name]] {
            for key in keys ?? [] {
                if !merged.isEmpty, merged.contains(key), let value = mine[key]?.upserted {
                    // Stored is a merge with values this context never saw: what it last
                    // read is what it wrote, one version older than the merge, so that a
                    // change of its copy merges again instead of reverting them.
                    map[key] = .some(.madeUp(value, before: written.version))
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
        let spelledOut = marker != nil && written.dropped[name] == nil
        if let marker, spelledOut {
            for key in marker.table.keys where map[key] == nil && mine[key] == nil && table[key] == nil {
                map[key] = .some(nil)
            }
        }
        var settled: [ObjectKey: Settled] = [:]
        settled.reserveCapacity(map.count)
        for (key, object) in map {
            settled[key] = Settled(object: object, isOwn: mine[key] != nil || (spelledOut && marker?.table[key] != nil))
        }
        return settled
    }

    /// What the context's change of `key` left: the object, `.some(nil)` for none, `nil` when
    /// the save did not settle it as the context's (a change `.storeWins` dropped keeps its
    /// base, whatever a rule wrote there).
    func object(entity: Int, key: ObjectKey) -> StoredObject?? {
        if let settled = objects[entity]?[key] { return settled.isOwn ? .some(settled.object) : nil }
        if let table = dropped[entity], table[key] != nil { return .some(nil) }
        return nil
    }

    /// Calls `body` with each settled id of `entity` (not those of a dropped table), what the
    /// save left there, and whether that was the context's own change.
    func forEach(entity: Int, _ body: (ObjectKey, StoredObject?, _ isOwn: Bool) -> Void) {
        for (key, settled) in objects[entity] ?? [:] { body(key, settled.object, settled.isOwn) }
    }

    /// The changes of `entity` `.storeWins` dropped, by id (a clear marker's as deletions of its
    /// sequence, based on the object it marked).
    func droppedChanges(entity: Int) -> EntityChanges { overruled[entity] ?? [:] }

    /// The table the save dropped whole, if it dropped `entity`'s.
    func droppedObjects(entity: Int) -> TreeDictionary<ObjectKey, StoredObject>? { dropped[entity] }
}

/// One entity's part of a save of a top-level context that has not read the entity, as the
/// save committed it: what ``EntityReads/recordSave(_:after:table:baseTable:)`` records.
struct SavedChanges {
    /// The entity's changes in the saved change set: its entries, then its log (not folded).
    var entries: EntityChanges
    var log: PendingLog
    /// The store version the save committed as.
    var version: UInt64
    /// What the commit reported of the entity; `nil` when every change was written as made
    /// (see ``writesAsMade(policy:isConstrained:)``).
    var reported: Report?

    /// What a commit reported, and the name of the entity it is read for.
    struct Report {
        var written: GraphChange
        var name: String
        /// Under `.storeWins`, the entity's table in the version the commit was made on, and
        /// that table's stamp (its conflicting changes were dropped); `nil` under any other
        /// policy.
        var keptAsStored: (table: TreeDictionary<ObjectKey, StoredObject>, stamp: UInt64)?
    }

    /// Whether a save under `policy` that deleted nothing of an entity (`isConstrained`: with
    /// unique constraints) wrote every change of it as made: no change dropped (`.storeWins`)
    /// or merged (`.mergeByProperty`), no object moved to another id by a unique constraint
    /// (`.contextWins` on a constrained entity), none cascaded away (that deletes), and a
    /// deletion found its object gone.
    static func writesAsMade(policy: MergePolicy, isConstrained: Bool) -> Bool {
        policy == .error || (policy == .contextWins && !isConstrained)
    }

    /// Whether `.storeWins` dropped a change of the save: the store kept another context's
    /// version at that id, which a delete rule or a unique merge of the same save may have
    /// rewritten; it is not the context's write, as ``SavedRun`` would take it.
    ///
    /// - Complexity: O(1) under any other policy, or when every change was logged on the table
    ///   the commit was made on (such a change cannot conflict); otherwise O(changes), with an
    ///   O(log n) look-up each.
    func dropsAChange() -> Bool {
        guard let kept = reported?.keptAsStored else { return false }
        guard !entries.isEmpty || log.segments.contains(where: { $0.stamp != kept.stamp }) else { return false }
        var mine = entries
        log.fold(into: &mine)
        return mine.contains { key, change in SettledObjects.conflicts(change, stored: kept.table[key]) }
    }

    /// Calls `body` with what the save left at each id it settled: the object it wrote, `nil`
    /// for one it deleted or found deleted, and whether that was the context's own change.
    /// Ids it did not settle (a change `.storeWins` dropped, an object merged into another by a
    /// unique constraint) are left out, unless a delete rule or a unique merge rewrote them:
    /// then they are not the context's own, also where `.storeWins` dropped its change of the
    /// id. `table` is the entity's table in a version at or after the save.
    ///
    /// - Complexity: O(changes); no look-up or folding when every change was written as made,
    ///   O(log n) per new id of the log under `.storeWins` (for its base).
    func forEachSettled(in table: TreeDictionary<ObjectKey, StoredObject>, _ body: (ObjectKey, StoredObject?, _ isOwn: Bool) -> Void) {
        guard let reported else {
            // In the order made: a later change of an id replaces an earlier one's record.
            for (key, change) in entries { body(key, change.upserted.map { StoredObject(value: $0, version: version) }, true) }
            for entry in log.entries {
                if case .upsert(let value) = entry.kind {
                    body(entry.key, StoredObject(value: value, version: version), true)
                } else {
                    body(entry.key, nil, true)
                }
            }
            return
        }
        // Each id's last change; its base is needed only to tell which `.storeWins` dropped.
        var mine = entries
        if let kept = reported.keptAsStored {
            log.fold(into: &mine)
            var marker: ClearMarker?
            _ = SettledObjects.removeDropped(from: &mine, marker: &marker, spelledOut: false, base: kept.table)
        } else {
            for entry in log.entries {
                mine.updateValue(forKey: entry.key, default: PendingChange(kind: entry.kind, base: nil, sequence: entry.sequence)) {
                    $0.kind = entry.kind
                }
            }
        }
        let settled = SettledObjects.settled(mine: mine, marker: nil, written: reported.written, name: reported.name, table: table)
        for (key, settled) in settled { body(key, settled.object, settled.isOwn) }
    }

    /// Calls `body` with each id the save left no object at (deleted, found deleted, or
    /// deleted by a delete rule), given `table`, the entity's table right after the save.
    ///
    /// - Complexity: O(changes), plus O(log n) per deletion.
    func forEachDeletion(in table: TreeDictionary<ObjectKey, StoredObject>, _ body: (ObjectKey) -> Void) {
        for (key, change) in entries where change.upserted == nil && table[key] == nil { body(key) }
        for entry in log.entries {
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
/// change it settled. A change `.storeWins` dropped from a save leaves what a rollback of it
/// leaves, whatever a delete rule or a unique merge of that save wrote at its id: that is a
/// rewrite of another context's version, which a child that read through the change never saw.
///
/// A later save or rollback of the id continues what an earlier one left when its change was
/// made on what that one left (the context changed again what it had saved): a child that
/// read through the earlier change then takes what the later one left, since a context's own
/// save is never a conflict for its child. Otherwise (the context read another context's save
/// of the object in between, and changed that) the earlier record stays for the children
/// that read through the earlier change: their copies are based on what they saw, and the
/// other context's save is a conflict for them. Such breaks are few per id (each follows
/// another context's save of the object that this context read), and the records go with the
/// last child (see ``GraphContext/recordsForChildren(_:)``); two that do not continue each
/// other are never made one, which would base a child's copy on a version it never saw.
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
        /// or after it, the one with the smallest sequence (searched, not assumed in the order
        /// the records were made).
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
    /// pruned; `table` is the entity's table now (for pruning). A change this context did not
    /// make on what it knew (a child's value it never read: `nil` for the base it was made on)
    /// continues no earlier record.
    ///
    /// - Complexity: O(k) amortized for k records.
    mutating func settle(
        _ records: some Sequence<(ObjectKey, UInt64, StoredObject??, StoredObject?, UInt64?)>, byRollback: Bool,
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
            let continues = history.latest.through == nil && madeOn.map { $0?.version == history.latest.base?.version } ?? false
            if continues {
                // Covering the children that read through either change.
                history.latest = Settled(
                    sequence: max(sequence, history.latest.sequence), base: base, through: through,
                    // A save's record (of a deletion, say) is kept however a rollback continues it.
                    prunable: settled.prunable && history.latest.prunable)
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

    /// Records `changes` as rolled back (or dropped, or replaced before a save): a child that
    /// read an id through one of them keeps its base. `continuing`: whether each was this
    /// context's own change, made on what it knew, which may continue an earlier record; a
    /// child's value it never read continues none.
    ///
    /// - Complexity: O(k) amortized for k changes.
    mutating func settleRolledBack(
        _ changes: some Sequence<(key: ObjectKey, value: PendingChange)>, continuing: Bool, table: TreeDictionary<ObjectKey, StoredObject>
    ) {
        settle(
            changes.lazy.map { key, change in
                (key, change.sequence, continuing ? .some(change.base) : .none, change.base, change.inheritedThrough)
            }, byRollback: true, table: table)
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
