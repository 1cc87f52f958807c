import Foundation

extension GraphContext {
    // MARK: - Deleting by query

    /// Deletes every object of `model` matching `predicate` (all of them when `nil`) when the
    /// context is saved, and returns how many it marked.
    ///
    /// The objects marked are those the context sees now, read as it marks them: each deletion
    /// is based on the object's current version, so one changed by another context before the
    /// save is a merge conflict. Objects another context inserts later are not deleted.
    /// Objects this context inserted and has not saved go at once; at save their delete rules
    /// still run on the references this context's other changes hold to them (a new note's
    /// reference to a new tag is nullified), as for ``delete(_:id:)``, unless another context
    /// has saved an object of the same id meanwhile, which stays.
    ///
    /// - Throws: ``GraphStoreError/predicateFailed(entity:id:reason:)``.
    /// - Complexity: O(n) predicate evaluations. Without a predicate, on a top-level context,
    ///   O(p) (p: this context's pending changes of `model`): the context records "every
    ///   object of this table" instead of each id, and if no other save changed the table in
    ///   between and nothing references its objects, the save drops the table whole.
    @discardableResult
    public func delete<E: Entity>(model: E.Type, where predicate: Predicate<E>? = nil) throws -> Int {
        let entity = core.schema.index(of: E.self)
        if predicate == nil, parent == nil, let marked = markAllDeleted(entity: entity) { return marked }
        let keys: [ObjectKey]
        if let predicate {
            keys = try fetchIdentifiers(FetchDescriptor<E>(predicate: predicate)).map { ObjectKey($0) }
        } else {
            // Every object this context sees, by key: no object is cast or copied. Deleting them
            // reads them: each deletion is based on the version seen here.
            withState { $0.fetchesInFlight += 1 }
            defer { withState { $0.fetchesInFlight -= 1 } }
            let overlay = overlay(entity: entity)
            let latest = core.latestTable(entity: entity)
            let table = latest.table
            noteReadAll(entity: entity, table: table, number: latest.number, overlay: overlay)
            var all = table.keys.filter { overlay[$0] == nil }
            all.append(contentsOf: overlay.lazy.filter { $0.value.upserted != nil }.map(\.key))
            keys = all
        }
        recordAll(keys.map { PendingLog.Entry(key: $0, kind: .delete, sequence: nextPendingSequence()) }, entity: entity)
        return keys.count
    }

    // MARK: - Internal

    /// Records a clear marker for `entity` (see ``ClearMarker``) in place of this context's
    /// pending changes of it; returns how many objects that deletes as the
    /// context sees them, or `nil` when a marker is already pending (the caller then marks
    /// ids one by one, keeping that marker's bases).
    private func markAllDeleted(entity: Int) -> Int? {
        // Under the save lock: a save of this context committing meanwhile would otherwise
        // clear the pending inserts the marker drops, while the marker's table, read before
        // that commit, lacks them: they would survive the deletion.
        withSaveLock { markAllDeletedUnlocked(entity: entity) }
    }

    private func markAllDeletedUnlocked(entity: Int) -> Int? {
        let sequence = nextPendingSequence()
        let version = core.currentVersion
        let table = version.tables[entity]
        return withState { state -> Int? in
            guard state.pending.cleared[entity] == nil else { return nil }
            state.generation += 1
            state.pending.fold(entity)
            let entries = state.pending.entities[entity]
            state.pending.cleared[entity] = ClearMarker(
                table: table, stamp: version.tableStamps[entity], sequence: sequence, deletedIfNew: entries.keys.filter { table[$0] == nil })
            // Entries the marker stands for exactly are dropped, so the save can take the
            // whole-table path; what remains are deletions based on an older version than the
            // marker's (they still conflict as they would have).
            var count = table.count
            if recordsForChildren(&state) {
                // A change of an object gone from the store (an insert of a new id, a deletion
                // of one already gone) goes with nothing in its place: a child that read the id
                // through it keeps its base, as after a rollback of it.
                let gone = entries.lazy.filter { table[$0.key] == nil }
                state.childBases[entity].settleRolledBack(gone, continuing: true, table: table)
            }
            let remaining = entries.filter { key, change in
                guard let stored = table[key] else {
                    // Inserted by this context only, or gone from the store: nothing to delete.
                    if change.upserted != nil { count += 1 }
                    return false
                }
                if change.upserted == nil { count -= 1 }  // deleted already, not by this call
                return change.baseVersion != stored.version
            }.mapValues { change in
                PendingChange(kind: .delete, base: change.base, sequence: sequence)
            }
            state.pending.setEntries(remaining, entity: entity)
            return count
        }
    }
}
