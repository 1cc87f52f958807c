import Foundation
internal import GraphStoreCoding
import HashTreeCollections

extension CommitPlan {
    // MARK: - Standalone entities

    /// Writes a standalone entity's upserts, checking each one's base against the object it
    /// replaces, with the same outcomes as ``resolveConflicts(_:)``.
    ///
    /// A logged change's base is read from its segment's table, and only for the first change
    /// of an id: when the store's table still has the segment's stamp, the base is the version
    /// the write replaces, so no lookup is needed. A later change of an id written by this
    /// commit already finds the new version: it only replaces the value.
    func applyDeferred(
        _ changes: DeferredUpserts, entity: Int, to next: inout GraphVersion,
        inserted: inout [ObjectKey], updated: inout [ObjectKey], propertyMerged: inout Set<ObjectKey>
    ) throws {
        var conflicts: [MergeConflict] = []
        /// Ids `.storeWins` (or `.mergeByProperty`, for a deletion elsewhere) kept as stored:
        /// later changes of them are dropped too.
        var kept: Set<ObjectKey> = []
        /// Ids `.mergeByProperty` merged, with the base and stored objects: a later change of
        /// one is merged again.
        var merged: [ObjectKey: (base: StoredObject, stored: StoredObject)] = [:]
        let number = next.number
        let description = schema.entities[entity]
        // Worked on as a local, uniquely referenced value: updated in place, with no access
        // checks on a captured variable.
        var table = next.tables[entity]
        next.tables[entity] = [:]
        defer { next.tables[entity] = table }
        /// Settles the write of `value` at `key`, which replaced `old`: records a conflict if
        /// it has one and applies the policy.
        func settle(
            _ key: ObjectKey, _ value: any Entity, old: StoredObject?, base: StoredObject?,
            table: inout TreeDictionary<ObjectKey, StoredObject>
        ) throws {
            if old?.version != base?.version {
                let kind: MergeConflict.Kind = old == nil ? .deletedElsewhere : (base == nil ? .insertedElsewhere : .updatedElsewhere)
                conflicts.append(MergeConflict(
                    entity: description.name, id: key.description, kind: kind,
                    baseVersion: base?.version, storedVersion: old?.version))
                switch policy {
                case .storeWins:
                    table[key] = old
                    kept.insert(key)
                    return
                case .mergeByProperty:
                    guard let old else {
                        // Deleted elsewhere: the deletion stands.
                        table[key] = nil
                        kept.insert(key)
                        return
                    }
                    if let base {
                        merged[key] = (base, old)
                        propertyMerged.insert(key)
                        table[key] = StoredObject(value: try description.mergingProperties(base.value, value, old.value), version: number)
                    }
                case .error, .contextWins:
                    break
                }
            }
            if old == nil { inserted.append(key) } else { updated.append(key) }
        }
        for (key, change) in changes.entries {
            let value = change.upserted!
            let old = table.updateValue(StoredObject(value: value, version: number), forKey: key)
            try settle(key, value, old: old, base: change.base, table: &table)
        }
        let stamp = base.tableStamps[entity]
        let entries = changes.log.entries
        if table.isEmpty, changes.entries.isEmpty, entries.count >= TableBuilder.parallelThreshold,
           changes.log.segments.allSatisfy({ $0.stamp == stamp }), Processors.active > 1 {
            // A large batch into an empty table that nobody changed since: no conflict can
            // arise and every id is new, so the table is built on two threads.
            let built = TableBuilder.build(entries, version: number)
            table = built.table
            inserted.append(contentsOf: built.inserted)
            return
        }
        for (segment, positions) in changes.log.segmentRanges {
            let isCurrent = segment.stamp == stamp
            for position in positions {
                guard case .upsert(let value) = entries[position].kind else { preconditionFailure("a deferred change is an upsert") }
                let key = entries[position].key
                if !kept.isEmpty, kept.contains(key) { continue }
                if !merged.isEmpty, let sides = merged[key] {
                    // Changed again after a change this commit merged: merged again.
                    table[key] = StoredObject(value: try description.mergingProperties(sides.base.value, value, sides.stored.value), version: number)
                    continue
                }
                let old = table.updateValue(StoredObject(value: value, version: number), forKey: key)
                if let old {
                    // Changed again after a change this commit already wrote: only the value moves on.
                    if old.version == number { continue }
                    try settle(key, value, old: old, base: isCurrent ? old : segment.table[key], table: &table)
                } else if isCurrent {
                    inserted.append(key)
                } else {
                    try settle(key, value, old: nil, base: segment.table[key], table: &table)
                }
            }
        }
        if policy == .error, !conflicts.isEmpty {
            throw GraphStoreError.mergeConflict(conflicts)
        }
    }
}
