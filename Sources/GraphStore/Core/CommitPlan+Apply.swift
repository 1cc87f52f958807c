import HashTreeCollections

// Applying a plan: the steps in CommitPlan.swift decide what the commit changes; this builds
// the next version from that decision (standalone entities: CommitPlan+Deferred.swift).

extension CommitPlan {
    // MARK: - Apply

    /// Builds the next version: removes deleted objects and the old index entries of rewritten
    /// ones first, then adds the written objects, so values can move between objects in one commit.
    ///
    /// - Throws: `mergeConflict` for a deferred standalone upsert under `.error`.
    func apply(contextName: String?) throws -> (GraphVersion, GraphChange) {
        var next = base
        next.number = base.number + 1
        var inserted: [String: [ObjectKey]] = [:], updated: [String: [ObjectKey]] = [:], deleted: [String: [ObjectKey]] = [:]
        var dropped: [String: TreeDictionary<ObjectKey, StoredObject>] = [:]
        for entity in cleared {
            // No upserts and no references into it (see `resolveConflicts`).
            dropped[schema.entities[entity].name] = next.tables[entity]
            next.dropTable(entity, schema: schema)
        }
        for (entity, keys) in deletes.enumerated() where !keys.isEmpty {
            if keys.count == next.tables[entity].count, upserts[entity].isEmpty,
               keys.allSatisfy({ next.tables[entity][$0] != nil }) {
                // Every object of the entity goes: drop the table and its own indexes whole
                // instead of removing entry by entry. (References into it were handled by
                // the delete rules.)
                next.dropTable(entity, schema: schema)
                deleted[schema.entities[entity].name] = Array(keys)
                continue
            }
            next.tableStamps[entity] = next.number
            for key in keys {
                guard let old = next.tables[entity].removeValue(forKey: key) else { continue }
                next.removeFromIndexes(old.value, key: key, entity: entity, schema: schema)
                deleted[schema.entities[entity].name, default: []].append(key)
            }
        }
        for (entity, values) in upserts.enumerated() where !values.isEmpty {
            let description = schema.entities[entity]
            let isIndexed = !description.constraints.isEmpty || !description.relationshipIndexes.isEmpty
            var insertedKeys: [ObjectKey] = [], updatedKeys: [ObjectKey] = []
            next.tableStamps[entity] = next.number
            for (key, value) in values {
                if let old = next.tables[entity].updateValue(StoredObject(value: value, version: next.number), forKey: key) {
                    updatedKeys.append(key)
                    // Only the unique values and references that differ move: an update of
                    // other fields touches no index. Values can still move between objects in
                    // one commit, in any order: a unique value is let go only by the object
                    // the index holds it for (see `replaceInIndexes`).
                    if isIndexed { next.replaceInIndexes(old.value, with: value, key: key, entity: entity, schema: schema) }
                } else {
                    insertedKeys.append(key)
                    if isIndexed { next.addToIndexes(value, key: key, entity: entity, schema: schema) }
                }
            }
            if !insertedKeys.isEmpty { inserted[description.name] = insertedKeys }
            if !updatedKeys.isEmpty { updated[description.name] = updatedKeys }
        }
        var merged: [String: Set<ObjectKey>] = [:]
        for (entity, keys) in propertyMerged { merged[schema.entities[entity].name] = keys }
        for (entity, changes) in deferred.sorted(by: { $0.key < $1.key }) {
            var insertedKeys: [ObjectKey] = [], updatedKeys: [ObjectKey] = [], mergedKeys: Set<ObjectKey> = []
            next.tableStamps[entity] = next.number
            try applyDeferred(changes, entity: entity, to: &next, inserted: &insertedKeys, updated: &updatedKeys, propertyMerged: &mergedKeys)
            let name = schema.entities[entity].name
            if !insertedKeys.isEmpty { inserted[name] = insertedKeys }
            if !updatedKeys.isEmpty { updated[name] = updatedKeys }
            if !mergedKeys.isEmpty { merged[name] = mergedKeys }
        }
        let change = GraphChange(
            version: next.number, contextName: contextName, inserted: inserted, updated: updated, deleted: deleted, dropped: dropped,
            merged: merged)
        next.resortChanged(from: base, change: change, schema: schema)
        return (next, change)
    }
}
