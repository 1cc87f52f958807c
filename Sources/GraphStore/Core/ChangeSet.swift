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

/// A context's pending changes, per entity index, in the order they were made.
struct ChangeSet: Sendable {
    var entities: [OrderedDictionary<ObjectKey, PendingChange>]

    init(entityCount: Int) {
        entities = Array(repeating: [:], count: entityCount)
    }

    var isEmpty: Bool {
        entities.allSatisfy(\.isEmpty)
    }

    var count: Int {
        entities.reduce(0) { $0 + $1.count }
    }

    /// Folds `child`'s changes over these: the child's value wins, the base of an id this set
    /// already changed is kept (it is the older, store-relative one).
    mutating func merge(_ child: ChangeSet) {
        for (entity, changes) in child.entities.enumerated() {
            for (key, change) in changes {
                var merged = change
                if let existing = entities[entity][key] { merged.base = existing.base }
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
            for key in written.deleted[name] ?? [] { versions[key] = .some(nil) }
            for key in changes.keys {
                guard entities[entity][key] != nil, let version = versions[key] else { continue }
                entities[entity][key]?.base = version
            }
        }
    }
}
