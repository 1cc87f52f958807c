import HashTreeCollections

extension GraphVersion {
    /// Rebuilds every index from the objects and compares; checks that each object is filed
    /// under its own id and that every reference names an existing object.
    ///
    /// - Throws: ``GraphStoreError/invariantViolation(_:)`` describing the first mismatch.
    /// - Complexity: O(objects + references).
    func checkInvariants(schema: Schema) throws {
        var rebuilt = GraphVersion(schema: schema)
        for entity in schema.entities {
            for (key, stored) in tables[entity.index] {
                guard entity.key(stored.value) == key else {
                    throw GraphStoreError.invariantViolation("\(entity.name) filed under id \(key) has id \(entity.key(stored.value))")
                }
                guard stored.version <= number else {
                    throw GraphStoreError.invariantViolation("\(entity.name) \(key) has version \(stored.version), after the store's \(number)")
                }
                for (index, constraint) in entity.constraints.enumerated() {
                    guard let value = constraint.key(stored.value) else { continue }
                    if let other = rebuilt.unique[entity.index][index][value], other != key {
                        throw GraphStoreError.invariantViolation("\(entity.name).\(constraint.name) value \(value) held by both \(other) and \(key)")
                    }
                }
                rebuilt.addToIndexes(stored.value, key: key, entity: entity.index, schema: schema)
                for relationshipIndex in entity.relationshipIndexes {
                    let relationship = schema.relationships[relationshipIndex]
                    for target in relationship.targets(stored.value) where tables[relationship.target][target] == nil {
                        throw GraphStoreError.invariantViolation("\(entity.name) \(key).\(relationship.name) references missing \(schema.entities[relationship.target].name) \(target)")
                    }
                }
            }
        }
        for entity in schema.entities {
            for index in entity.constraints.indices where rebuilt.unique[entity.index][index] != unique[entity.index][index] {
                throw GraphStoreError.invariantViolation("unique index \(entity.name).\(entity.constraints[index].name) differs from a rebuild (\(unique[entity.index][index].count) entries, rebuilt \(rebuilt.unique[entity.index][index].count))")
            }
        }
        for relationship in schema.relationships where rebuilt.inverse[relationship.index] != inverse[relationship.index] {
            throw GraphStoreError.invariantViolation("inverse index of \(schema.entities[relationship.source].name).\(relationship.name) differs from a rebuild")
        }
        try checkSortedIndexes(schema: schema)
    }
}

extension GraphContainer {
    /// Checks the latest version's invariants: every unique and inverse index equals a fresh
    /// rebuild from the objects, and no relationship points at a missing object. A test hook.
    ///
    /// - Throws: ``GraphStoreError/invariantViolation(_:)`` describing the first mismatch.
    /// - Complexity: O(objects + references).
    public func _checkInvariants() throws {
        try core.currentVersion.checkInvariants(schema: core.schema)
    }
}
