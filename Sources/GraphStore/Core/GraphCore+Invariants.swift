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
    /// Checks that the store is consistent: every unique, inverse-relationship and sorted index
    /// equals a fresh rebuild from the objects, each object is filed under its own id, and no
    /// relationship points at a missing object.
    ///
    /// Meant for tests, as GRDB's `checkForeignKeys()` is: call it at the end of a test that
    /// changes data, or after an import, to catch a broken index or a dangling reference
    /// before it turns into a wrong fetch.
    ///
    /// ```swift
    /// let container = try GraphContainer(for: [Note.self, Tag.self], store: .inMemory)
    /// // … exercise your code …
    /// try container.checkInvariants()
    /// ```
    ///
    /// It checks the latest committed version, taken at the start (pending changes of contexts
    /// are not part of it); saves made meanwhile are neither blocked nor checked. It rebuilds
    /// every index, so it needs about as much memory again as the indexes take.
    ///
    /// - Throws: ``GraphStoreError/invariantViolation(_:)`` describing the first mismatch. A
    ///   sorted index whose own tree structure is broken stops the process with a precondition
    ///   failure instead: that is a bug in GraphStore, not in the data.
    /// - Complexity: O(objects + references), plus O(n log n) for each sorted index of n
    ///   objects (``Entity/indexes``).
    public func checkInvariants() throws {
        try core.currentVersion.checkInvariants(schema: core.schema)
    }

    /// The name ``checkInvariants()`` had before it became a supported API; kept so that code
    /// written against it still builds.
    @available(*, deprecated, renamed: "checkInvariants()")
    public func _checkInvariants() throws {
        try checkInvariants()
    }
}
