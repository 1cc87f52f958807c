import Foundation

/// Opening a snapshot store with journal records pending: the records are folded into the
/// objects decoded from the snapshot before the graph is built, so the tables and indexes are
/// built once from the final objects instead of being changed record by record (each change of
/// a persistent table or index copies a path).
///
/// Folding gives the graph that replaying the records in order gives (``JournalRecord/apply(to:schema:)``):
/// per entity, a clear drops every object before it, a delete removes the object of its id,
/// and the last upsert of an id is the object that stays. Every object of the built graph is
/// stamped with the store version of the last record, where replaying stamps an object with
/// its own record's: no reader of a store tells them apart, as every context starts at or
/// after that version.
enum JournalFold {
    /// What the records do to one entity.
    private struct EntityChanges {
        /// Whether a record cleared the entity: no object of the file is kept.
        var cleared = false
        /// The final object of each id a record touched (`nil`: deleted), in order of first touch.
        var changes: [(key: ObjectKey, value: (any Entity)?)] = []
        /// The position in `changes` of each id.
        var positions: [ObjectKey: Int] = [:]

        mutating func set(_ key: ObjectKey, _ value: (any Entity)?) {
            if let position = positions[key] {
                changes[position].value = value
            } else {
                positions[key] = changes.count
                changes.append((key, value))
            }
        }

        /// Takes in one record's part for this entity: the clear, then the deletions, then the
        /// upserts, as replaying does.
        mutating func apply(_ part: JournalRecord.Part, key: (any Entity) -> ObjectKey) {
            if part.clear {
                cleared = true
                changes.removeAll()
                positions.removeAll()
            }
            for deleted in part.deletes { set(deleted, nil) }
            for value in part.upserts { set(key(value), value) }
        }
    }

    /// `objects` (per entity index, as the store's file holds them) with `records` applied in
    /// order.
    ///
    /// An id the file holds twice (a damaged file) stays twice, so that building the graph
    /// reports it as it would without the journal.
    ///
    /// - Complexity: O(changed objects) for the records, plus an id lookup per object of each
    ///   entity they change.
    static func fold(_ records: [JournalRecord], into objects: inout [[any Entity]], schema: Schema) {
        var entities: [Int: EntityChanges] = [:]
        for record in records {
            for part in record.parts {
                let description = schema.entities[part.entity]
                entities[part.entity, default: EntityChanges()].apply(part, key: description.key)
            }
        }
        for (entity, changed) in entities {
            objects[entity] = folded(objects[entity], with: changed, key: schema.entities[entity].key)
        }
    }

    private static func folded(
        _ stored: [any Entity], with changed: EntityChanges, key: (any Entity) -> ObjectKey
    ) -> [any Entity] {
        var result: [any Entity] = []
        if changed.cleared {
            result.reserveCapacity(changed.changes.count)
            for change in changed.changes { if let value = change.value { result.append(value) } }
            return result
        }
        result.reserveCapacity(stored.count + changed.changes.count)
        var used = [Bool](repeating: false, count: changed.changes.count)
        for value in stored {
            guard let position = changed.positions[key(value)], !used[position] else {
                result.append(value)
                continue
            }
            used[position] = true
            if let new = changed.changes[position].value { result.append(new) }
        }
        for (position, change) in changed.changes.enumerated() where !used[position] {
            if let value = change.value { result.append(value) }
        }
        return result
    }
}
