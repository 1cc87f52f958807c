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
struct JournalFold: Sendable {
    /// What the records do to one entity.
    struct EntityChanges: Sendable {
        /// Whether a record cleared the entity: no object of the file is kept.
        var cleared = false
        /// The ids the records touched, in order of first touch.
        var keys: [ObjectKey] = []
        /// The final object of each id in `keys` (`nil`: deleted).
        var values: [(any Entity)?] = []
        /// The position of each id in `keys`.
        var positions: [ObjectKey: Int] = [:]

        /// Takes in one record's part for this entity: the clear, then the deletions, then the
        /// upserts, as replaying does.
        mutating func apply(_ part: JournalRecord.Part, key: (any Entity) -> ObjectKey) {
            if part.clear {
                cleared = true
                keys.removeAll()
                values.removeAll()
                positions.removeAll()
            }
            for deleted in part.deletes { set(deleted, nil) }
            for value in part.upserts { set(key(value), value) }
        }

        private mutating func set(_ key: ObjectKey, _ value: (any Entity)?) {
            if let position = positions[key] {
                values[position] = value
            } else {
                positions[key] = keys.count
                keys.append(key)
                values.append(value)
            }
        }
    }

    /// Per entity index, what the records change (`nil`: nothing).
    private(set) var entities: [EntityChanges?]

    /// The fold of `records`, in order.
    ///
    /// - Complexity: O(changed objects).
    init(_ records: [JournalRecord], schema: Schema) {
        entities = Array(repeating: nil, count: records.isEmpty ? 0 : schema.entities.count)
        for record in records {
            for part in record.parts {
                if entities[part.entity] == nil { entities[part.entity] = EntityChanges() }
                entities[part.entity]!.apply(part, key: schema.entities[part.entity].key)
            }
        }
    }

    /// Applies `records`, in order, to `objects` (per entity index, as the store's file holds
    /// them): the kept objects of the file stay in their order, changed ones in their place, and
    /// new ones follow. An unchanged object is not copied (the arrays are changed in place when
    /// the caller holds the only reference).
    ///
    /// An id the file holds twice (a damaged file) stays twice, so that building the graph
    /// reports it as it would without the journal.
    ///
    /// - Complexity: O(changed objects), plus an id lookup per object of each entity the
    ///   records change.
    static func fold(_ records: [JournalRecord], into objects: inout [[any Entity]], schema: Schema) {
        let fold = JournalFold(records, schema: schema)
        for (entity, changes) in fold.entities.enumerated() {
            guard let changes else { continue }
            apply(changes, to: &objects[entity], key: schema.entities[entity].key)
        }
    }

    private static func apply(_ changes: EntityChanges, to values: inout [any Entity], key: (any Entity) -> ObjectKey) {
        var used = [Bool](repeating: false, count: changes.keys.count)
        if changes.cleared {
            values.removeAll()
        } else {
            // Kept objects move down over deleted ones by swaps, which copy no object.
            var kept = 0
            for position in values.indices {
                if let slot = changes.positions[key(values[position])], !used[slot] {
                    used[slot] = true
                    guard let new = changes.values[slot] else { continue }
                    values[position] = new
                }
                if kept != position { values.swapAt(kept, position) }
                kept += 1
            }
            values.removeLast(values.count - kept)
        }
        for (slot, value) in changes.values.enumerated() where !used[slot] {
            if let value { values.append(value) }
        }
    }
}
