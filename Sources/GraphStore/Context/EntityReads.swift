import HashTreeCollections

/// What a context last read of one entity's objects: the bases of the changes it makes to them
/// afterwards.
///
/// A fetch that reads every object of the entity (no predicate, no window) keeps the table it
/// read, which costs O(1) because tables are persistent maps; any other read keeps one record
/// per id it returned. A later whole read replaces everything before it. The records of one
/// entity are bounded by what the context read: past ``limit(storedCount:)`` ids, the records
/// of ids it saw no object at, that have none now either, are dropped (see
/// ``prune(keeping:keepingSettled:)``).
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

        /// Whether this is a `.stored` or `.settled` record of no object.
        var isOfNoObject: Bool {
            switch self {
            case .stored(nil), .settled(nil, _): true
            case .stored, .settled, .inherited: false
            }
        }

        /// Whether this is what a save of this context committed after store version `number`.
        func isSettled(after number: UInt64) -> Bool {
            if case .settled(_, let settled) = self { settled > number } else { false }
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

    var isEmpty: Bool { whole == nil && byID.isEmpty }
    /// The number of per-id records.
    var count: Int { byID.count }

    /// What this context last read of `key`, or `nil` when it never read it.
    ///
    /// - Complexity: O(1) hashing, plus O(log n) in `whole`.
    func record(for key: ObjectKey) -> Record? {
        if let record = byID[key] { return record }
        if let whole { return .stored(whole[key]) }
        return nil
    }

    /// Records a read of every object of `table`, the table of store version `number`;
    /// `inherited` are the ids the reader saw through an ancestor's pending change instead, with
    /// that change's sequence.
    ///
    /// A fetch runs without the context's lock, so a save of this context can settle its ids
    /// between the fetch's reading the table and its recording the read: what that save left
    /// is newer, and stays. A table read before this context's save dropped the whole entity
    /// is not recorded at all.
    ///
    /// - Complexity: O(inherited); O(records) when a save of this context settled after
    ///   `number`.
    mutating func readAll(_ table: TreeDictionary<ObjectKey, StoredObject>, number: UInt64, inherited: some Sequence<(ObjectKey, UInt64)>) {
        guard number >= emptiedAt else { return }
        whole = table
        byID = latestSettled > number ? byID.filter { $0.value.isSettled(after: number) } : [:]
        pruneAbove = 0
        for (key, sequence) in inherited where !(byID[key]?.isSettled(after: number) ?? false) { byID[key] = .inherited(sequence: sequence) }
    }

    /// Records reads of single ids (or what a save of this context left at them: it knows what
    /// it wrote); `table` is the entity's table now (for pruning). `number` is the store version
    /// the reads saw, for a fetch that read without the context's lock: an id a save of this
    /// context settled after it keeps what the save left (see ``readAll(_:number:inherited:)``).
    /// With `keepingSettled` (a fetch of this context is running), pruning keeps what its saves
    /// settled, deletions included, for that fetch's recording to respect.
    ///
    /// - Complexity: O(k) amortized for k records: a pruning walks every record, and the next
    ///   waits until at least as many were added.
    mutating func read(
        _ records: some Sequence<(ObjectKey, Record)>, number: UInt64? = nil, table: TreeDictionary<ObjectKey, StoredObject>, keepingSettled: Bool = false
    ) {
        if let number, number < emptiedAt { return }
        for (key, record) in records {
            if case .settled(_, let settled) = record { latestSettled = max(latestSettled, settled) }
            if let number, latestSettled > number, byID[key]?.isSettled(after: number) ?? false { continue }
            byID[key] = record
        }
        if byID.count > max(Self.limit(storedCount: table.count), pruneAbove) { prune(keeping: table, keepingSettled: keepingSettled) }
    }

    /// After a save of store version `number` dropped the whole table: the context saw it empty.
    mutating func settleEmptied(number: UInt64) {
        whole = [:]
        byID = [:]
        pruneAbove = 0
        emptiedAt = max(emptiedAt, number)
        latestSettled = max(latestSettled, number)
    }

    /// The most per-id records kept for an entity holding `storedCount` objects.
    static func limit(storedCount: Int) -> Int { max(4_096, 2 * storedCount) }

    /// Drops the records that saw no object (ids read while absent, or deleted by a save of
    /// this context) of ids `table` holds no object of either: a change of such an id is based
    /// on no object with the record or without it. `whole` forgets them too, so that such a
    /// change is not based on a table read before the object went: re-inserting an object this
    /// context deleted itself is no conflict.
    ///
    /// The record of an object this context read or saved stays, even once the object is
    /// deleted elsewhere: it makes saving the copy the context may hold a conflict, where a
    /// change based on no object would bring the object back. So does a read through an
    /// ancestor's pending change. What remains is bounded by what the context read: the
    /// objects it read or saved (until a fetch of every object replaces them), its reads
    /// through ancestors' changes, and at most `table.count` ids read while absent that hold an
    /// object now. The next pruning waits until the records have doubled.
    ///
    /// - Complexity: O(records).
    mutating func prune(keeping table: TreeDictionary<ObjectKey, StoredObject>, keepingSettled: Bool = false) {
        let gone = byID.filter { key, record in
            record.isOfNoObject && table[key] == nil && !(keepingSettled && record.isSettled(after: 0))
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
            let table = latest.tables[entity]
            if let whole = written.dropped[name] { dropped[entity] = whole }
            var map: [ObjectKey: StoredObject?] = [:]
            let mine = committed.entities[entity]
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
            if let marker = committed.cleared[entity], written.dropped[name] == nil {
                for key in marker.table.keys where map[key] == nil && mine[key] == nil && table[key] == nil {
                    map[key] = .some(nil)
                }
            }
            objects[entity] = map
        }
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

    /// Whether the save dropped `entity`'s whole table.
    func droppedTable(entity: Int) -> Bool { dropped[entity] != nil }
}

/// What a parent context's saves and rollbacks left of the pending changes its children may
/// have read through: per id, the last such change's sequence and the base a child's change
/// of the id is then based on (the object the save wrote, or the dropped change's base, with
/// the ancestor's change that base was inherited through, if any, for a later look-up to
/// follow).
///
/// Only a child that read the id through one of these changes (or an earlier one: sequences
/// increase) takes that base; a child that never read the id is based as any context is.
/// Bounded as ``EntityReads``: past its limit, the records whose base is no object (and was
/// inherited through no ancestor's change), of ids with no stored object now, go. A base that
/// is an object stays, so that a child's copy of an object deleted elsewhere since conflicts;
/// those are bounded by the objects this context's saves wrote and its rollbacks dropped while
/// it had children.
struct ChildBases: Sendable {
    private var byID: [ObjectKey: (sequence: UInt64, base: StoredObject?, through: UInt64?)] = [:]
    /// Twice the records the last pruning kept: the next waits until the records pass it.
    private var pruneAbove = 0
    /// A save dropped the whole table: a change read at or before this sequence saw an
    /// object that is gone.
    private var droppedThrough: UInt64?

    /// The number of per-id records.
    var count: Int { byID.count }

    /// The base for a child that read `key` through the change of sequence `seen`, if this
    /// context settled that change (or a later one of the same id): with the sequence of the
    /// ancestor's change a dropped change's base was itself inherited through, if it was.
    ///
    /// - Complexity: O(1) hashing.
    func base(for key: ObjectKey, seen: UInt64) -> (base: StoredObject?, through: UInt64?)? {
        if let settled = byID[key], settled.sequence >= seen { return (settled.base, settled.through) }
        if let droppedThrough, droppedThrough >= seen { return (nil, nil) }
        return nil
    }

    /// Records what the changes `records` (id, sequence, base, and the ancestor's change a
    /// dropped change's base was inherited through) left; `table` is the entity's table now (for
    /// pruning).
    ///
    /// - Complexity: O(k) amortized for k records.
    mutating func settle(
        _ records: some Sequence<(ObjectKey, UInt64, StoredObject?, UInt64?)>, table: TreeDictionary<ObjectKey, StoredObject>
    ) {
        for (key, sequence, base, through) in records { byID[key] = (sequence, base, through) }
        if byID.count > max(EntityReads.limit(storedCount: table.count), pruneAbove) {
            byID = byID.filter { key, settled in settled.base != nil || settled.through != nil || table[key] != nil }
            pruneAbove = 2 * byID.count
        }
    }

    /// A save dropped the whole table, as of the change of sequence `sequence`.
    mutating func settleDropped(through sequence: UInt64) {
        byID = [:]
        pruneAbove = 0
        droppedThrough = max(droppedThrough ?? 0, sequence)
    }
}
