import HashTreeCollections
import OrderedCollections

/// A change a context has made but not yet committed.
struct PendingChange: Sendable {
    enum Kind: Sendable {
        case upsert(any Entity)
        case delete
    }

    var kind: Kind
    /// The stored object's version when the context first changed this id (`nil`: it did not exist).
    var base: UInt64?
    /// Increases with every change a context makes; lets a save clear exactly what it committed.
    var sequence: UInt64

    var upserted: (any Entity)? {
        if case .upsert(let value) = kind { return value }
        return nil
    }
}

/// "Delete every object of this entity the context saw", recorded as the table it saw rather
/// than as one entry per object, so that `delete(model:)` of a whole entity costs O(1).
///
/// Each object of `table` is pending deletion, based on its version in `table`, unless the
/// change set holds an entry for its id: an entry always overrides the marker.
struct ClearMarker: Sendable {
    /// The entity's table when the context marked it.
    var table: TreeDictionary<ObjectKey, StoredObject>
    /// The table's stamp (``GraphVersion/tableStamps``) then: while the store's stamp is the
    /// same, deleting the marked objects is deleting the whole table, without any conflict.
    var stamp: UInt64
    var sequence: UInt64

    /// The pending deletion the marker stands for at `key`, if it covers `key`.
    func change(for key: ObjectKey) -> PendingChange? {
        table[key].map { PendingChange(kind: .delete, base: $0.version, sequence: sequence) }
    }
}

/// A context's pending changes, per entity index, in the order they were made.
struct ChangeSet: Sendable {
    var entities: [OrderedDictionary<ObjectKey, PendingChange>]
    /// Per entity index, a pending deletion of every object the context saw (see
    /// ``ClearMarker``); only a top-level context records one.
    var cleared: [ClearMarker?]

    init(entityCount: Int) {
        entities = Array(repeating: [:], count: entityCount)
        cleared = Array(repeating: nil, count: entityCount)
    }

    var isEmpty: Bool {
        entities.allSatisfy(\.isEmpty) && cleared.allSatisfy { $0 == nil }
    }

    /// The pending change of `key`: its entry, or the clear marker's deletion.
    func change(entity: Int, key: ObjectKey) -> PendingChange? {
        entities[entity][key] ?? cleared[entity]?.change(for: key)
    }

    /// One entity's changes with a clear marker spelled out as one deletion per object, in
    /// marking order before the entries.
    ///
    /// - Complexity: O(p) without a marker; O(n + p) with one (n objects it covers).
    func expanded(entity: Int) -> OrderedDictionary<ObjectKey, PendingChange> {
        guard let marker = cleared[entity] else { return entities[entity] }
        var all = OrderedDictionary<ObjectKey, PendingChange>(minimumCapacity: marker.table.count + entities[entity].count)
        for (key, stored) in marker.table where entities[entity][key] == nil {
            all[key] = PendingChange(kind: .delete, base: stored.version, sequence: marker.sequence)
        }
        for (key, change) in entities[entity] { all[key] = change }
        return all
    }

    /// Folds `child`'s changes over these: the child's value wins, the base of an id this set
    /// already changed (or its clear marker covers) is kept: it is the older, store-relative
    /// one. A child context records no clear markers of its own.
    mutating func merge(_ child: ChangeSet) {
        for (entity, changes) in child.entities.enumerated() {
            for (key, change) in changes {
                var merged = change
                if let existing = self.change(entity: entity, key: key) { merged.base = existing.base }
                entities[entity][key] = merged
            }
        }
    }

    /// Removes the entries of `committed` that have not been changed again since.
    mutating func removeCommitted(_ committed: ChangeSet) {
        // Rebuilt rather than removed from one by one: removing from an ordered dictionary
        // shifts its storage, which would make a large save quadratic.
        for (entity, changes) in committed.entities.enumerated() where !changes.isEmpty {
            entities[entity] = entities[entity].filter { key, change in changes[key]?.sequence != change.sequence }
        }
        for (entity, marker) in committed.cleared.enumerated() where marker != nil {
            if cleared[entity]?.sequence == marker?.sequence { cleared[entity] = nil }
        }
    }

    /// Bases the entries of `committed` that were changed again while it was being saved on
    /// the version that save wrote (`nil` for an object it deleted). Entries the save did not
    /// write (dropped by `.storeWins`, merged away by a unique constraint) keep their base.
    ///
    /// - Complexity: O(committed changes).
    mutating func rebase(_ committed: ChangeSet, onto written: GraphChange, schema: Schema) {
        for (entity, changes) in committed.entities.enumerated() where !changes.isEmpty && !entities[entity].isEmpty {
            let name = schema.entities[entity].name
            var versions: [ObjectKey: UInt64?] = [:]
            for key in written.inserted[name] ?? [] { versions[key] = .some(written.version) }
            for key in written.updated[name] ?? [] { versions[key] = .some(written.version) }
            for key in written.deletedKeys(name) { versions[key] = .some(nil) }
            for key in changes.keys {
                guard entities[entity][key] != nil, let version = versions[key] else { continue }
                entities[entity][key]?.base = version
            }
        }
        // Entries made during the save for objects a committed clear marker covered were based
        // on the marked version; the save deleted those objects.
        for (entity, marker) in committed.cleared.enumerated() where marker != nil && !entities[entity].isEmpty {
            let deleted = Set(written.deletedKeys(schema.entities[entity].name))
            for key in entities[entity].keys where committed.entities[entity][key] == nil && deleted.contains(key) {
                entities[entity][key]?.base = nil
            }
        }
    }
}
