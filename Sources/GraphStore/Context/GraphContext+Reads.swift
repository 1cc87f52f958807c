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
    /// - Complexity: O(1) for a fetch of every object of a top-level context; O(p) for a
    ///   child (p: its ancestors' pending changes of the entity); else O(r log n) for r results.
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
            if parent != nil {
                // Seen through an ancestor's change, not this context's own.
                for (key, sequence) in seenThroughOverlay where state.pending.change(entity: source.entity, key: key) == nil {
                    records.append((key, .inherited(sequence: sequence)))
                }
            }
            // Kept from a save of this context that settled after the fetch read its table; pruned
            // against the latest table (an object the fetch did not see may have been saved since).
            state.reads[source.entity].read(records, number: source.number, table: core.latestTable(entity: source.entity).table, keepingSettled: true)
        }
    }

    /// Records a read of every object of `table` (of store version `number`), with `overlay`
    /// (this context's view of the pending changes) over it.
    func noteReadAll(entity: Int, table: TreeDictionary<ObjectKey, StoredObject>, number: UInt64, overlay: EntityChanges) {
        withState { state in
            guard parent != nil, !overlay.isEmpty else {
                state.reads[entity].readAll(table, number: number, inherited: EmptyCollection())
                return
            }
            state.pending.fold(entity)
            let inherited = overlay.filter { state.pending.change(entity: entity, key: $0.key) == nil }.map { ($0.key, $0.value.sequence) }
            state.reads[entity].readAll(table, number: number, inherited: inherited)
        }
    }

    /// After a committed save: what it left of every id it settled becomes what this context
    /// last read of it, for the entities this context has read (it knows what it wrote), and
    /// the entries changed again while it committed are based on it.
    ///
    /// Called with the state lock held.
    ///
    /// - Complexity: O(changes of the entities concerned).
    func settle(_ committed: ChangeSet, written: GraphChange, rebasing: Bool, state: inout State) {
        // With children, every saved id settles for them: a child that read it through this
        // context's change bases its later changes on what this save wrote.
        let settlesAll = recordsForChildren(&state)
        let fetching = state.fetchesInFlight > 0
        let entities = committed.entities.indices.filter { entity in
            committed.hasChanges(entity: entity)
                && (settlesAll || fetching || !state.reads[entity].isEmpty || (rebasing && state.pending.hasChanges(entity: entity)))
        }
        // Nothing to do for a context that has not read what it saved and changed nothing
        // during the save: an import's log is never folded here.
        guard !entities.isEmpty else { return }
        var committed = committed
        for entity in entities { committed.fold(entity) }
        let latest = core.currentVersion
        let settled = SettledObjects(committed: committed, written: written, latest: latest, schema: core.schema, entities: entities)
        if rebasing {
            state.pending.rebase(committed) { settled.object(entity: $0, key: $1) }
        }
        for entity in entities where settlesAll || fetching || !state.reads[entity].isEmpty {
            let isRead = fetching || !state.reads[entity].isEmpty
            if settled.droppedTable(entity: entity) {
                if isRead { state.reads[entity].settleEmptied(number: written.version) }
                if settlesAll { state.childBases[entity].settleDropped(through: committed.cleared[entity]?.sequence ?? 0) }
                continue
            }
            var objects: [(ObjectKey, StoredObject?)] = []
            settled.forEach(entity: entity) { key, object in objects.append((key, object)) }
            if isRead {
                state.reads[entity].read(
                    objects.lazy.map { ($0, .settled($1, number: written.version)) }, table: latest.tables[entity], keepingSettled: fetching)
            }
            if settlesAll {
                // Each with the sequence of the change it settles (a marker's, for an id the
                // marker deleted).
                let marker = committed.cleared[entity]?.sequence ?? 0
                let changes = committed.entities[entity]
                state.childBases[entity].settle(objects.lazy.map { ($0, changes[$0]?.sequence ?? marker, $1, nil) }, table: latest.tables[entity])
            }
        }
    }
}
