import HashTreeCollections

/// An object as committed, with the store version that last wrote it.
package struct StoredObject: Sendable {
    package var value: any Entity
    /// The commit that last inserted or updated this object: the base of conflict detection.
    package var version: UInt64
}

/// One committed state of the whole graph: immutable, structurally shared with its neighbours.
///
/// Copying a version is O(number of entities); every map inside is a persistent
/// `TreeDictionary`, so a commit that changes k objects shares everything else with the
/// previous version.
package struct GraphVersion: Sendable {
    /// Increases by one with every commit; 0 is the state the store opened with.
    package internal(set) var number: UInt64
    /// Per entity index: id → object.
    package internal(set) var tables: [TreeDictionary<ObjectKey, StoredObject>]
    /// Per entity index, per unique constraint: value → owning id.
    var unique: [[TreeDictionary<ObjectKey, ObjectKey>]]
    /// Per global relationship index: target id → ids of the objects referencing it.
    var inverse: [TreeDictionary<ObjectKey, TreeSet<ObjectKey>>]

    /// An empty graph for `schema`.
    init(schema: Schema) {
        number = 0
        tables = Array(repeating: [:], count: schema.entities.count)
        unique = schema.entities.map { Array(repeating: [:], count: $0.constraints.count) }
        inverse = Array(repeating: [:], count: schema.relationships.count)
    }

    /// The number of objects of every entity.
    package var objectCount: Int {
        tables.reduce(0) { $0 + $1.count }
    }

    // MARK: - Index maintenance

    /// Removes `value`'s unique values and outgoing references from the indexes.
    ///
    /// - Complexity: O(constraints + references of the object), each a persistent-map update.
    mutating func removeFromIndexes(_ value: any Entity, key: ObjectKey, entity: Int, schema: Schema) {
        let description = schema.entities[entity]
        for (index, constraint) in description.constraints.enumerated() {
            if let uniqueValue = constraint.key(value), unique[entity][index][uniqueValue] == key {
                unique[entity][index][uniqueValue] = nil
            }
        }
        for relationshipIndex in description.relationshipIndexes {
            for target in schema.relationships[relationshipIndex].targets(value) {
                guard var sources = inverse[relationshipIndex][target] else { continue }
                sources.remove(key)
                inverse[relationshipIndex][target] = sources.isEmpty ? nil : sources
            }
        }
    }

    /// Adds `value`'s unique values and outgoing references to the indexes.
    ///
    /// - Complexity: O(constraints + references of the object).
    mutating func addToIndexes(_ value: any Entity, key: ObjectKey, entity: Int, schema: Schema) {
        let description = schema.entities[entity]
        for (index, constraint) in description.constraints.enumerated() {
            if let uniqueValue = constraint.key(value) {
                unique[entity][index][uniqueValue] = key
            }
        }
        for relationshipIndex in description.relationshipIndexes {
            for target in schema.relationships[relationshipIndex].targets(value) {
                inverse[relationshipIndex][target, default: []].insert(key)
            }
        }
    }

    /// A version holding `objects` (per entity index), indexed; used when a store opens.
    ///
    /// - Complexity: O(objects + references).
    static func loaded(_ objects: [[any Entity]], schema: Schema) -> GraphVersion {
        var version = GraphVersion(schema: schema)
        for (entity, values) in objects.enumerated() {
            let describe = schema.entities[entity]
            var table = TreeDictionary<ObjectKey, StoredObject>()
            for value in values {
                let key = describe.key(value)
                table[key] = StoredObject(value: value, version: 0)
                version.addToIndexes(value, key: key, entity: entity, schema: schema)
            }
            version.tables[entity] = table
        }
        return version
    }
}
