import Foundation
import HashTreeCollections

extension JournalRecord {
    // MARK: - Replaying

    /// What replaying this record onto `before` changes, as the commit reported it: upserted
    /// objects are inserted or updated, a cleared table is dropped.
    ///
    /// - Complexity: O(changed objects × log n).
    func change(replayedOnto before: GraphVersion, schema: Schema) -> GraphChange {
        var inserted: [String: [ObjectKey]] = [:], updated: [String: [ObjectKey]] = [:], deleted: [String: [ObjectKey]] = [:]
        var dropped: [String: TreeDictionary<ObjectKey, StoredObject>] = [:]
        for part in parts {
            let description = schema.entities[part.entity]
            let table = before.tables[part.entity]
            if part.clear { dropped[description.name] = table }
            let deletes = part.deletes.filter { !part.clear && table[$0] != nil }
            if !deletes.isEmpty { deleted[description.name] = deletes }
            for value in part.upserts {
                let key = description.key(value)
                if table[key] != nil && !part.clear { updated[description.name, default: []].append(key) } else { inserted[description.name, default: []].append(key) }
            }
        }
        return GraphChange(version: version, contextName: "journal replay", inserted: inserted, updated: updated, deleted: deleted, dropped: dropped)
    }

    /// Applies the record to `version`, which must be at the version before it.
    ///
    /// - Complexity: O(changed objects × log n).
    func apply(to version: inout GraphVersion, schema: Schema) {
        version.number = self.version
        for part in parts {
            let entity = part.entity
            if part.clear { version.dropTable(entity, schema: schema) }
            for key in part.deletes {
                guard let old = version.tables[entity][key] else { continue }
                version.removeFromIndexes(old.value, key: key, entity: entity, schema: schema)
                version.tables[entity][key] = nil
                version.resort(entity: entity, key: key, old: old, new: nil, schema: schema)
            }
            for value in part.upserts {
                let key = schema.entities[entity].key(value)
                let new = StoredObject(value: value, version: self.version)
                let old = version.tables[entity].updateValue(new, forKey: key)
                version.resort(entity: entity, key: key, old: old, new: new, schema: schema)
                if let old {
                    version.replaceInIndexes(old.value, with: value, key: key, entity: entity, schema: schema)
                } else {
                    version.addToIndexes(value, key: key, entity: entity, schema: schema)
                }
            }
            version.tableStamps[entity] = self.version
        }
    }
}
