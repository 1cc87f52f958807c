import HashTreeCollections

/// What one fetch walked: the pending changes it saw and the store table under them.
struct FetchSource {
    let entity: Int
    let overlay: EntityChanges
    let table: TreeDictionary<ObjectKey, StoredObject>
    /// The store version `table` is of.
    let number: UInt64
}

extension GraphContext {
    // MARK: - Remembering reads

    /// Records what a fetch returned as read: the whole table for a fetch of every object,
    /// else each returned object's stored version (or, for one seen through an ancestor's
    /// pending change, that it was inherited).
    ///
    /// - Complexity: for a fetch of every object, as ``noteReadAll(entity:table:number:overlay:)``:
    ///   O(1) without pending changes of the entity, O(p) with p of them (the context's own and,
    ///   for a child, its ancestors'), O(n) while a `delete(model:)` of it is pending; else
    ///   O(r log n) for r results.
    func noteReads<E: Entity>(of result: [E], _ descriptor: FetchDescriptor<E>, _ source: FetchSource) {
        if descriptor.predicate == nil, descriptor.fetchLimit == nil, (descriptor.fetchOffset ?? 0) <= 0 {
            noteReadAll(entity: source.entity, table: source.table, number: source.number, overlay: source.overlay)
            return
        }
        guard !result.isEmpty else { return }
        var records: [(ObjectKey, EntityReads.Record)] = []
        records.reserveCapacity(result.count)
        var seenThroughOverlay: [(ObjectKey, UInt64)] = []
        for object in result {
            let key = ObjectKey(object.id)
            if !source.overlay.isEmpty, let change = source.overlay[key] {
                seenThroughOverlay.append((key, change.sequence))
            } else {
                records.append((key, .stored(source.table[key])))
            }
        }
        withState { state in
            // Seen through a change of this context's own that a child's save put there: the copy
            // is based as that change is.
            for (key, sequence) in seenThroughOverlay {
                if let childs = state.pending.noteReadThrough(entity: source.entity, key: key, sequence: sequence) {
                    records.append((key, ChangeSet.record(ofReading: childs)))
                }
            }
            if parent != nil {
                // Seen through an ancestor's change, not this context's own.
                for (key, sequence) in seenThroughOverlay where state.pending.change(entity: source.entity, key: key) == nil {
                    records.append((key, .inherited(sequence: sequence)))
                }
            }
            // Kept from a save of this context that settled after the fetch read its table; pruned
            // against the latest table (an object the fetch did not see may have been saved since).
            state.reads[source.entity].read(records, number: source.number, table: core.latestTable(entity: source.entity).table)
        }
    }

    /// Records a read of every object of `table` (of store version `number`), with `overlay`
    /// (this context's view of the pending changes) over it. The caller counts as a fetch in
    /// flight (`fetchesInFlight`) until it returns.
    ///
    /// The fetch showed the pending changes, not the stored objects at their ids: an id of
    /// this context's own change keeps that change's base as its record (so that after a
    /// rollback a held copy is still based on what the context saw, and a save another context
    /// made since is a conflict), and an id of an ancestor's change is based as that change is.
    /// While a `delete(model:)` of the entity is pending, the fetch hid every object it marked
    /// and read from the store only the objects another context inserted since: only those
    /// and the changes' bases are recorded, and what the context knew of the marked ones stays.
    ///
    /// - Complexity: O(1) without pending changes of the entity; O(p) with p of them, O(n)
    ///   while a `delete(model:)` of it is pending.
    func noteReadAll(entity: Int, table: TreeDictionary<ObjectKey, StoredObject>, number: UInt64, overlay: EntityChanges) {
        withState { state in
            // The caller is one of the fetches counted: any other may have read an older table.
            let othersInFlight = state.fetchesInFlight > 1
            guard !overlay.isEmpty || state.pending.hasChanges(entity: entity) else {
                state.reads[entity].readAll(table, number: number, othersInFlight: othersInFlight, throughChanges: EmptyCollection())
                return
            }
            state.pending.fold(entity)
            if state.pending.hasChildChanges {
                for (key, change) in overlay { _ = state.pending.noteReadThrough(entity: entity, key: key, sequence: change.sequence) }
            }
            let own = state.pending.entities[entity]
            let marker = state.pending.cleared[entity]
            var seen = own.compactMap { key, change -> (ObjectKey, EntityReads.Record)? in
                // A change made after a `delete(model:)`, of an object the marker covers, took
                // the marker's version as its base, not one the context read: what it knew stays.
                if let marked = marker?.table[key], marked.version == change.baseVersion { return nil }
                return (key, change.inheritedThrough.map { .inherited(sequence: $0) } ?? .stored(change.base))
            }
            if let marker {
                // Only a top-level context marks: no ancestor's changes to record.
                seen += table.lazy.filter { marker.table[$0.key] == nil && own[$0.key] == nil }.map { ($0.key, .stored($0.value)) }
                state.reads[entity].read(seen, number: number, table: core.latestTable(entity: entity).table)
                return
            }
            if parent != nil {
                seen += overlay.lazy.filter { own[$0.key] == nil }.map { ($0.key, .inherited(sequence: $0.value.sequence)) }
            }
            state.reads[entity].readAll(table, number: number, othersInFlight: othersInFlight, throughChanges: seen)
        }
    }

    /// After a committed save: what it left of every id it settled becomes what this context
    /// last read of it (it knows what it wrote), and the entries changed again while it
    /// committed are based on it. That includes the objects of entities the context did not
    /// change that the save deleted or changed through delete rules or a unique merge, where
    /// the context knew the version the rule rewrote (see
    /// ``EntityReads/knowsWhatARuleRewrote(_:base:)``). A change `.storeWins` dropped is not the
    /// context's write: what a rule rewrote at its id is remembered only as such a rewrite, and
    /// for children it left what a rollback of it leaves (the dropped change's base).
    ///
    /// For an entity the context has not read, with no child or fetch of it to settle for,
    /// while no other context's commit changed its table since this context's first save of it
    /// (nor kept its version over a change of this context, under `.storeWins`), the save only
    /// keeps the table it left (see ``EntityReads``): an import's log is never folded here.
    ///
    /// Called with the state lock held.
    ///
    /// - Complexity: O(changes); for the entities whose table is kept, a pass without look-ups
    ///   plus O(log n) per deletion.
    func settle(
        _ committed: ChangeSet, written: GraphChange, stamps: GraphCore.Committed, policy: MergePolicy, rebasing: Bool, state: inout State
    ) {
        // With children, every saved id settles for them: a child that read it through this
        // context's change bases its later changes on what this save wrote.
        let settlesAll = recordsForChildren(&state)
        let fetching = state.fetchesInFlight > 0
        // The entities whose ids are settled one by one below.
        var entities: [Int] = []
        for entity in committed.entities.indices where committed.hasChanges(entity: entity) {
            state.reads[entity].noteSave(
                previous: stamps.previousStamps[entity], stamp: stamps.stamps[entity], merged: !written.merged.isEmpty)
            if settlesAll || fetching || state.reads[entity].hasRead || committed.cleared[entity] != nil || committed.hasChildChanges
                || !state.reads[entity].unreadChildValues.isEmpty
                || (rebasing && state.pending.hasChanges(entity: entity)) {
                entities.append(entity)
            } else {
                // Named only when the commit's report is needed: a save under `.error` that
                // deleted nothing was written as made. One that deleted something may have
                // deleted or nullified objects of this entity through delete rules, beside the
                // context's own changes: those are its writes too.
                var reported: SavedChanges.Report?
                let asMade = SavedChanges.writesAsMade(policy: policy, isConstrained: !core.schema.entities[entity].constraints.isEmpty)
                if !asMade || !written.deleted.isEmpty {
                    let name = core.schema.entities[entity].name
                    if !asMade || written.deleted[name] != nil || written.updated[name] != nil {
                        reported = SavedChanges.Report(
                            written: written, name: name,
                            keptAsStored: policy == .storeWins ? (stamps.baseTables[entity], stamps.previousStamps[entity]) : nil)
                    }
                }
                let saved = SavedChanges(
                    entries: committed.entities[entity], log: committed.logs[entity], version: written.version, reported: reported)
                state.reads[entity].recordSave(saved, after: stamps.baseNumber, table: stamps.tables[entity], baseTable: stamps.baseTables[entity])
            }
        }
        // Objects of other entities the save deleted or changed through a delete rule (a
        // cascade, a nullified reference) or a unique merge's moved references are its own
        // writes too: a copy this context holds from before, saved again, is based on them.
        // Only an entity the context has records of needs it: otherwise a change is based on
        // the stored object anyway.
        func settleByRule(_ names: [String: [ObjectKey]]) {
            for name in names.keys {
                guard let entity = core.schema.index(named: name), !committed.hasChanges(entity: entity), !entities.contains(entity),
                      settlesAll || fetching || state.reads[entity].hasRecords
                else { continue }
                state.reads[entity].noteSave(
                    previous: stamps.previousStamps[entity], stamp: stamps.stamps[entity], merged: !written.merged.isEmpty)
                entities.append(entity)
            }
        }
        // Delete rules run only for a deletion, and moved references add a second entity: a
        // save that deleted nothing and wrote one entity wrote only what the context changed.
        if !(written.deleted.isEmpty && written.inserted.count + written.updated.count <= 1) {
            settleByRule(written.updated)
            settleByRule(written.deleted)
        }
        guard !entities.isEmpty else { return }
        var committed = committed
        for entity in entities { committed.fold(entity) }
        let latest = core.currentVersion
        let settled = SettledObjects(
            committed: committed, written: written, latest: latest, schema: core.schema, entities: entities,
            keptAsStored: policy == .storeWins ? stamps.baseTables : nil)
        if rebasing {
            state.pending.rebase(committed) { settled.object(entity: $0, key: $1) }
        }
        for entity in entities {
            let isRead = fetching || state.reads[entity].hasRead
            if let droppedObjects = settled.droppedObjects(entity: entity) {
                if isRead { state.reads[entity].settleEmptied(number: written.version, table: droppedObjects) } else { state.reads[entity].forgetSaved(dropped: droppedObjects, number: written.version) }
                if settlesAll {
                    state.childBases[entity].settleDropped(through: committed.cleared[entity]?.sequence ?? 0, table: droppedObjects)
                }
                continue
            }
            var objects: [(ObjectKey, StoredObject?)] = []
            settled.forEach(entity: entity) { key, object, isOwn in
                // What a delete rule or a unique merge rewrote of a version the context never
                // saw is not what it knows, also where `.storeWins` dropped its own change.
                if !isOwn, !state.reads[entity].knowsWhatARuleRewrote(key, base: stamps.baseTables[entity][key]) {
                    return
                }
                objects.append((key, object))
            }
            let changes = committed.entities[entity], marker = committed.cleared[entity]
            let dropped = settled.droppedChanges(entity: entity)
            // What a child's save put here, unread by this context since, is what its save left
            // (a child of this context reads through it), but a copy this context holds from
            // before stays based on what it knew (noted when it took the value: see
            // `PendingChange.fromChild`). Its own change the save wrote here (its own deletion
            // through a clear marker included; not one `.storeWins` dropped) is what it knows.
            if !state.reads[entity].unreadChildValues.isEmpty {
                for (key, _) in objects where dropped[key] == nil && changes[key].map({ !$0.fromChild }) ?? (marker?.table[key] != nil) {
                    state.reads[entity].forgetUnreadChildValue(at: key)
                }
            }
            state.reads[entity].recordSaved(objects, number: written.version, table: latest.tables[entity])
            if settlesAll {
                // Each with the sequence of the change it settles (a marker's, for an id the
                // marker deleted) and the version that change was made on (for a delete rule's
                // rewrite, the version the rule rewrote).
                let markerSequence = marker?.sequence ?? 0, baseTable = stamps.baseTables[entity]
                state.childBases[entity].settle(
                    objects.lazy.filter { dropped[$0.0] == nil }.map { key, object in
                        let madeOn: StoredObject?? =
                            changes[key]?.holdsChildValue == true ? .none : .some(changes[key].map(\.base) ?? marker?.table[key] ?? baseTable[key])
                        return (key, changes[key]?.sequence ?? markerSequence, madeOn, object, nil)
                    }, byRollback: false, table: latest.tables[entity])
                if !dropped.isEmpty {
                    // A change `.storeWins` dropped left nothing, whatever a delete rule or a
                    // unique merge of the save wrote at its id: a child that read the id through
                    // it keeps the dropped change's base, as after a rollback (see `rollback()`).
                    state.childBases[entity].settleRolledBack(dropped, continuing: true, table: latest.tables[entity])
                }
            }
        }
    }
}
