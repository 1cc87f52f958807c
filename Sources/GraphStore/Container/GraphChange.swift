import HashTreeCollections

/// What one commit changed: delivered by ``GraphContainer/changes`` in commit order, after the
/// commit is visible to every context.
///
/// ```swift
/// for await change in container.changes {
///     print(change.version, change.insertedIDs(Note.self))
/// }
/// ```
public struct GraphChange: Sendable, CustomStringConvertible {
    /// The store version this commit created.
    public let version: UInt64
    /// The saving context's ``GraphContext/name``.
    public let contextName: String?
    let inserted: [String: [ObjectKey]]
    let updated: [String: [ObjectKey]]
    let deleted: [String: [ObjectKey]]
    /// Tables the commit dropped whole (every object of the entity deleted): their ids are
    /// listed when asked for, so such a commit costs O(1) however many objects it deletes.
    let dropped: [String: TreeDictionary<ObjectKey, StoredObject>]
    /// Per entity name, the updated ids whose stored object is a `.mergeByProperty` merge of
    /// the saved change with another context's newer save, not the saved value itself.
    let merged: [String: Set<ObjectKey>]

    init(
        version: UInt64, contextName: String?, inserted: [String: [ObjectKey]], updated: [String: [ObjectKey]],
        deleted: [String: [ObjectKey]], dropped: [String: TreeDictionary<ObjectKey, StoredObject>] = [:],
        merged: [String: Set<ObjectKey>] = [:]
    ) {
        self.version = version
        self.contextName = contextName
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.dropped = dropped
        self.merged = merged
    }

    /// The names of the entities with any change.
    public var entityNames: Set<String> {
        Set(inserted.keys).union(updated.keys).union(deleted.keys).union(dropped.keys)
    }

    /// Ids of inserted objects of `type`.
    ///
    /// - Complexity: O(inserted objects of that entity).
    public func insertedIDs<E: Entity>(_ type: E.Type) -> [E.ID] { ids(inserted, type) }
    /// Ids of updated objects of `type` (including objects changed by a delete rule or merge).
    public func updatedIDs<E: Entity>(_ type: E.Type) -> [E.ID] { ids(updated, type) }
    /// Ids of deleted objects of `type` (including cascaded deletes).
    ///
    /// - Complexity: O(deleted objects of that entity).
    public func deletedIDs<E: Entity>(_ type: E.Type) -> [E.ID] {
        deletedKeys(E.entityName).compactMap { $0.value(as: E.ID.self) }
    }

    /// The number of inserted, updated and deleted objects across entities.
    public var insertedCount: Int { inserted.values.reduce(0) { $0 + $1.count } }
    /// The number of updated objects across entities.
    ///
    /// - Complexity: O(entities).
    public var updatedCount: Int { updated.values.reduce(0) { $0 + $1.count } }
    /// The number of deleted objects across entities, cascaded deletes and dropped entities'
    /// objects included.
    ///
    /// - Complexity: O(entities).
    public var deletedCount: Int { deleted.values.reduce(0) { $0 + $1.count } + dropped.values.reduce(0) { $0 + $1.count } }

    /// The deleted ids of the entity `name`.
    func deletedKeys(_ name: String) -> [ObjectKey] {
        guard let table = dropped[name] else { return deleted[name] ?? [] }
        return (deleted[name] ?? []) + table.keys
    }

    public var description: String {
        "version \(version)\(contextName.map { " from \($0)" } ?? ""): \(insertedCount) inserted, \(updatedCount) updated, \(deletedCount) deleted"
    }

    private func ids<E: Entity>(_ map: [String: [ObjectKey]], _ type: E.Type) -> [E.ID] {
        (map[E.entityName] ?? []).compactMap { $0.value(as: E.ID.self) }
    }

    /// Whether the commit inserted, updated or deleted objects of the entity named `entity`.
    func touches(entity: String) -> Bool {
        inserted[entity] != nil || updated[entity] != nil || deleted[entity] != nil || dropped[entity] != nil
    }
}
