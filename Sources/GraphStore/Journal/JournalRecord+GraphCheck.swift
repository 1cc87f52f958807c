import Foundation

extension JournalRecord {
    // MARK: - Checking a replayed record

    /// A unique value one of this record's objects takes from another object (see
    /// ``takenUniqueValues(in:schema:)``).
    struct TakenUniqueValue {
        let entity: Int
        let constraint: Int
        let value: ObjectKey
        /// The object that held it before the record.
        let holder: ObjectKey
        /// The object of this record that takes it.
        let taker: ObjectKey
    }

    /// The unique values this record's objects take from other objects of `version`, the
    /// version before it: after the record, each of those must have let go of its value (in a
    /// swap, it took another one), or the two hold one value.
    ///
    /// - Complexity: O(upserted objects × unique constraints), persistent-map lookups.
    func takenUniqueValues(in version: GraphVersion, schema: Schema) -> [TakenUniqueValue] {
        var taken: [TakenUniqueValue] = []
        for part in parts {
            let description = schema.entities[part.entity]
            guard !description.constraints.isEmpty else { continue }
            for value in part.upserts {
                let key = description.key(value)
                for (position, constraint) in description.constraints.enumerated() {
                    guard let unique = constraint.key(value), let holder = version.unique[part.entity][position][unique], holder != key else { continue }
                    taken.append(TakenUniqueValue(entity: part.entity, constraint: position, value: unique, holder: holder, taker: key))
                }
            }
        }
        return taken
    }

    /// Checks that `version`, this record applied (by ``apply(to:schema:)``), is still a graph
    /// as far as the record touched it: every reference of an object it wrote reaches an
    /// object, nothing references an object it deleted (or a table it cleared), and no unique
    /// value is held twice. The commit that wrote the record checked all of this, so a record
    /// that fails here was not written by that commit: a damaged journal whose checksums still
    /// match, or one written by other software.
    ///
    /// `taken` is ``takenUniqueValues(in:schema:)`` of the version before the record.
    ///
    /// - Throws: ``LoadProblem`` naming the entity and id, as opening a snapshot does.
    /// - Complexity: O(changed objects × (relationships + constraints)), plus O(references
    ///   into an entity) for a cleared table.
    func checkGraph(_ version: GraphVersion, taken: [TakenUniqueValue], schema: Schema) throws(LoadProblem) {
        for part in parts {
            let description = schema.entities[part.entity]
            for value in part.upserts {
                let key = description.key(value)
                for relationshipIndex in description.relationshipIndexes {
                    let relationship = schema.relationships[relationshipIndex]
                    for target in relationship.targets(value) where version.tables[relationship.target][target] == nil {
                        throw LoadProblem(
                            entity: description.name, id: key.description,
                            message: "its \(relationship.name) references \(schema.entities[relationship.target].name) \(target), which is not in the store")
                    }
                }
                for (position, constraint) in description.constraints.enumerated() {
                    guard let unique = constraint.key(value), let holder = version.unique[part.entity][position][unique], holder != key else { continue }
                    throw LoadProblem(entity: description.name, id: key.description, message: "its \(constraint.name) \(unique) is also held by \(holder)")
                }
            }
            // References into what the record deleted or cleared.
            let gone = part.clear ? nil : part.deletes.filter { version.tables[part.entity][$0] == nil }
            for relationshipIndex in schema.incoming[part.entity] {
                let relationship = schema.relationships[relationshipIndex]
                let inverse = version.inverse[relationshipIndex]
                let dangling: (target: ObjectKey, source: ObjectKey)?
                if let gone {
                    dangling = gone.lazy.compactMap { target in inverse[target]?.first.map { (target, $0) } }.first
                } else {
                    dangling = inverse.lazy.compactMap { target, sources in
                        version.tables[part.entity][target] == nil ? sources.first.map { (target, $0) } : nil
                    }.first
                }
                if let (target, source) = dangling {
                    throw LoadProblem(
                        entity: schema.entities[relationship.source].name, id: source.description,
                        message: "its \(relationship.name) references \(description.name) \(target), which the journal deleted")
                }
            }
        }
        for taken in taken {
            let description = schema.entities[taken.entity]
            guard let stored = version.tables[taken.entity][taken.holder],
                  description.constraints[taken.constraint].key(stored.value) == taken.value
            else { continue }
            throw LoadProblem(
                entity: description.name, id: taken.holder.description,
                message: "its \(description.constraints[taken.constraint].name) \(taken.value) is also held by \(taken.taker)")
        }
    }
}
