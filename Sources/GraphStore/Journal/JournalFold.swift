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

    /// What a fold leaves behind to be freed: the spent records and fold, and the objects of
    /// the store's file that it replaced or dropped. The caller frees them on a background
    /// queue (``BackgroundRelease/drop(_:)``) once the graph is built: freed while the graph is
    /// built in parallel jobs, they would take a processor from those jobs.
    struct Leftovers: Sendable {
        fileprivate var records: [JournalRecord] = []
        fileprivate var fold: JournalFold?
        fileprivate var released = Released()
    }

    /// Folds `pending`'s records into `objects` (see ``apply(to:ids:found:schema:)``), with the
    /// fold made while the store's file was read when there is one: `pending` is left without
    /// records or fold. The ids of the objects are read on the way, once each, for building the
    /// graph (``GraphVersion/loaded(_:ids:number:schema:)``): each is looked up in the fold
    /// while it is read.
    ///
    /// - Returns: The store version of the last record (`nil`: there was none), the ids of the
    ///   folded objects, and what is left to free, off the opening thread and after the graph
    ///   is built; `nil`, with `objects` unchanged, when the file holds an id the records change
    ///   twice (a damaged file): a deletion would take one copy and leave the other, hiding the
    ///   damage, so the caller replays record by record instead, which reports it.
    /// - Complexity: O(objects), an id read per object and a lookup per object of each entity
    ///   the records change (a large entity's on two threads), plus O(changed objects) when
    ///   the fold was not made.
    static func fold(
        _ pending: inout JournalReplay.Pending, into objects: inout [[any Entity]], schema: Schema
    ) -> (last: UInt64?, ids: [GraphVersion.LoadedIDs], leftovers: Leftovers)? {
        let last = pending.records.last?.version
        var fold = pending.fold ?? JournalFold(pending.records, schema: schema)
        pending.fold = nil
        let lookups = fold.entities.map { changes -> GraphVersion.LoadedIDs.Lookup in
            guard let changes else { return .none }
            return changes.cleared ? .skipped : .slots(changes.positions)
        }
        let (read, found) = GraphVersion.LoadedIDs.read(
            objects, schema: schema, splittingTables: GraphVersion.buildsInParallel(objects), lookingUp: lookups)
        for (entity, positions) in found.enumerated() where !positions.isEmpty {
            guard let changes = fold.entities[entity] else { continue }
            var seen = [Bool](repeating: false, count: changes.keys.count)
            for (_, slot) in positions {
                if seen[slot] { return nil }
                seen[slot] = true
            }
        }
        // The only reference to the ids, so that they are changed in place.
        var ids = consume read
        let released = fold.apply(to: &objects, ids: &ids, found: found, schema: schema)
        let leftovers = Leftovers(
            records: BackgroundRelease.take(&pending.records, leaving: []), fold: consume fold, released: released)
        return (last, ids, leftovers)
    }

    /// Applies the fold to `objects` (per entity index, as the store's file holds them): the
    /// kept objects of the file stay in their order, changed ones in their place, and new ones
    /// follow. An unchanged object is not copied (the arrays are changed in place when the
    /// caller holds the only reference). The fold's objects are moved into `objects`, not
    /// copied: it is spent afterwards. The objects it replaces or drops are returned, for the
    /// caller to free off the opening thread.
    ///
    /// `ids` and `found` are what ``GraphVersion/LoadedIDs/read(_:schema:splittingTables:lookingUp:)``
    /// gave for `objects` with this fold's lookups: the ids are changed as the objects are (a
    /// replaced object keeps its id). An id the file holds twice (a damaged file) stays twice,
    /// so that building the graph reports it as it would without the journal.
    ///
    /// - Complexity: O(changed objects), plus O(objects) of an entity the records delete from.
    mutating func apply(
        to objects: inout [[any Entity]], ids: inout [GraphVersion.LoadedIDs], found: [[GraphVersion.LoadedIDs.Found]], schema: Schema
    ) -> Released {
        var released = Released()
        for entity in entities.indices where entities[entity] != nil {
            let (deleted, appended) = Self.apply(&entities[entity]!, to: &objects[entity], found: found[entity], released: &released)
            ids[entity].remove(deleted, appending: appended)
        }
        return released
    }

    /// Objects taken out of the snapshot's arrays, to be freed off the opening thread.
    struct Released: Sendable {
        var objects: [any Entity] = []
        var arrays: [[any Entity]] = []
    }

    /// Applies one entity's changes to its objects, given the positions whose ids they touch
    /// (ascending, each with its slot in `changes`).
    ///
    /// - Returns: The positions deleted (ascending; none for a cleared entity, whose objects
    ///   are all dropped) and the ids of the objects appended, in order.
    private static func apply(
        _ changes: inout EntityChanges, to values: inout [any Entity], found: [GraphVersion.LoadedIDs.Found],
        released: inout Released
    ) -> (deleted: [Int], appended: [ObjectKey]) {
        var used = [Bool](repeating: false, count: changes.keys.count)
        var deleted: [Int] = []
        if changes.cleared {
            var dropped: [any Entity] = []
            swap(&dropped, &values)
            released.arrays.append(dropped)
        } else {
            released.objects.reserveCapacity(released.objects.count + changes.keys.count)
            for (position, slot) in found where !used[slot] {
                used[slot] = true
                guard var replacement = changes.values[slot].take() else {
                    deleted.append(position)
                    continue
                }
                swap(&values[position], &replacement)
                released.objects.append(consume replacement)
            }
            if let first = deleted.first {
                // Kept objects move down over deleted ones by swaps, which copy no object.
                var kept = first, next = 0
                for position in first..<values.count {
                    if next < deleted.count, deleted[next] == position {
                        next += 1
                        continue
                    }
                    values.swapAt(kept, position)
                    kept += 1
                }
                released.objects.append(contentsOf: values[kept...])
                values.removeLast(values.count - kept)
            }
        }
        var appended: [ObjectKey] = []
        for slot in changes.values.indices where !used[slot] {
            if let value = changes.values[slot].take() {
                values.append(value)
                appended.append(changes.keys[slot])
            }
        }
        return (deleted, appended)
    }
}
