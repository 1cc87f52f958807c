import Foundation
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
    /// Per entity index: the number of the last version that changed the entity's table (0
    /// for the opened state). Equal stamps mean an unchanged table.
    var tableStamps: [UInt64]
    /// Per entity index, per declared ``EntityIndex``: its entries, sorted.
    var sorted: [[IndexTree]]

    /// An empty graph for `schema`.
    init(schema: Schema) {
        number = 0
        tables = Array(repeating: [:], count: schema.entities.count)
        tableStamps = Array(repeating: 0, count: schema.entities.count)
        unique = schema.entities.map { Array(repeating: [:], count: $0.constraints.count) }
        inverse = Array(repeating: [:], count: schema.relationships.count)
        sorted = schema.entities.map { Array(repeating: IndexTree(), count: $0.indexes.count) }
    }

    /// The number of objects of every entity.
    package var objectCount: Int {
        tables.reduce(0) { $0 + $1.count }
    }

    // MARK: - Index maintenance

    /// Empties an entity's table and the indexes of its own values (unique values, outgoing
    /// references); references into it are the caller's business.
    mutating func dropTable(_ entity: Int, schema: Schema) {
        tables[entity] = [:]
        tableStamps[entity] = number
        sorted[entity] = sorted[entity].map { _ in IndexTree() }
        unique[entity] = unique[entity].map { _ in [:] }
        for relationshipIndex in schema.entities[entity].relationshipIndexes { inverse[relationshipIndex] = [:] }
    }

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

    /// Moves the index entries of the object `key` from `old` to `new`, touching only the unique
    /// values and references that differ (an update of a plain field changes no index).
    ///
    /// - Complexity: O(constraints + references of both values), plus a persistent-map update
    ///   per entry that changed.
    mutating func replaceInIndexes(_ old: any Entity, with new: any Entity, key: ObjectKey, entity: Int, schema: Schema) {
        let description = schema.entities[entity]
        for (index, constraint) in description.constraints.enumerated() {
            let before = constraint.key(old), after = constraint.key(new)
            guard before != after else { continue }
            if let before, unique[entity][index][before] == key { unique[entity][index][before] = nil }
            if let after { unique[entity][index][after] = key }
        }
        for relationshipIndex in description.relationshipIndexes {
            let relationship = schema.relationships[relationshipIndex]
            let before = relationship.targets(old), after = relationship.targets(new)
            guard before != after else { continue }
            let kept = Set(before).intersection(after)
            for target in before where !kept.contains(target) {
                guard var sources = inverse[relationshipIndex][target] else { continue }
                sources.remove(key)
                inverse[relationshipIndex][target] = sources.isEmpty ? nil : sources
            }
            for target in after where !kept.contains(target) {
                inverse[relationshipIndex][target, default: []].insert(key)
            }
        }
    }

    /// A version holding `objects` (per entity index) at store version `number`, indexed and
    /// checked; used when a store opens.
    ///
    /// The tables and the indexes do not depend on each other: for a large graph they are
    /// built on two threads at once, one building the tables and reading each object's sorted
    /// index entries, the other the unique and inverse indexes (a persistent-set insert per
    /// reference). The sorted indexes are then sorted from those entries, one task per index.
    /// The problem reported is the one building them in order would meet first.
    ///
    /// - Throws: ``LoadProblem`` for a duplicate id, a unique value held twice, or a reference
    ///   to a missing object.
    /// - Complexity: O(objects + references).
    static func loaded(_ objects: [[any Entity]], number: UInt64, schema: Schema) throws(LoadProblem) -> GraphVersion {
        let tables = Guarded<Result<[TreeDictionary<ObjectKey, StoredObject>], PositionedLoadProblem>>(.success([]))
        // The only holder of the unsorted index entries, so that each is freed once sorted.
        let entries = Guarded<[[[IndexTree.Entry]]]>([])
        let indexes = Guarded<Result<GraphVersion, PositionedLoadProblem>>(.success(GraphVersion(schema: schema)))
        let work: @Sendable (Int) -> Void = { part in
            if part == 0 {
                let built = buildTables(objects, number: number, schema: schema)
                tables.withLock { $0 = built.map(\.tables) }
                if case .success(let loaded) = consume built { entries.withLock { $0 = loaded.entries } }
            } else {
                let built = buildIndexes(objects, schema: schema)
                indexes.withLock { $0 = built }
            }
        }
        if objects.reduce(0, { $0 + $1.count }) >= 10_000, ProcessInfo.processInfo.activeProcessorCount > 1 {
            DispatchQueue.concurrentPerform(iterations: 2, execute: work)
        } else {
            work(0)
            work(1)
        }
        var version: GraphVersion
        switch (tables.withLock { $0 }, indexes.withLock { $0 }) {
        case (.success(let built), .success(let indexed)):
            version = indexed
            version.tables = built
            version.sorted = buildSortedIndexes(taking: entries, schema: schema)
        case (.failure(let problem), .success), (.success, .failure(let problem)):
            throw problem.problem
        case (.failure(let first), .failure(let second)):
            throw (first.position <= second.position ? first : second).problem
        }
        version.number = number
        for relationship in schema.relationships {
            for (target, sources) in version.inverse[relationship.index] where version.tables[relationship.target][target] == nil {
                throw LoadProblem(
                    entity: schema.entities[relationship.source].name, id: sources.first?.description ?? "?",
                    message: "its \(relationship.name) references \(schema.entities[relationship.target].name) \(target), which is not in the file")
            }
        }
        return version
    }

    /// A load problem and where building in order meets it: entity, object, then the id
    /// check before the unique check.
    struct PositionedLoadProblem: Error {
        let position: (entity: Int, object: Int, check: Int)
        let problem: LoadProblem
    }

    /// The tables of a graph being loaded, and per entity, per sorted index, the entries of
    /// its objects (unsorted).
    struct LoadedTables: Sendable {
        var tables: [TreeDictionary<ObjectKey, StoredObject>]
        var entries: [[[IndexTree.Entry]]]
    }

    /// The tables of `objects`, and the entries of their sorted indexes read in the same pass
    /// (each object read once for all its indexes).
    private static func buildTables(
        _ objects: [[any Entity]], number: UInt64, schema: Schema
    ) -> Result<LoadedTables, PositionedLoadProblem> {
        var loaded = LoadedTables(tables: [], entries: [])
        for (entity, values) in objects.enumerated() {
            let description = schema.entities[entity]
            var table = TreeDictionary<ObjectKey, StoredObject>()
            var entries = description.indexes.map { _ in [IndexTree.Entry]() }
            for position in entries.indices { entries[position].reserveCapacity(values.count) }
            for (index, value) in values.enumerated() {
                let key = description.key(value)
                guard table.updateValue(StoredObject(value: value, version: number), forKey: key) == nil else {
                    return .failure(PositionedLoadProblem(
                        position: (entity, index, 0), problem: LoadProblem(entity: description.name, id: key.description, message: "the id appears twice")))
                }
                description.appendIndexEntries(value, key, &entries)
            }
            loaded.tables.append(table)
            loaded.entries.append(entries)
        }
        return .success(loaded)
    }

    /// The unique and inverse indexes of `objects`: unique values one object at a time (the
    /// first value held twice is the problem), each relationship's inverse in one go.
    private static func buildIndexes(_ objects: [[any Entity]], schema: Schema) -> Result<GraphVersion, PositionedLoadProblem> {
        var version = GraphVersion(schema: schema)
        for (entity, values) in objects.enumerated() {
            let description = schema.entities[entity]
            if !description.constraints.isEmpty {
                for (position, value) in values.enumerated() {
                    let key = description.key(value)
                    for (index, constraint) in description.constraints.enumerated() {
                        guard let unique = constraint.key(value) else { continue }
                        if let other = version.unique[entity][index].updateValue(key, forKey: unique) {
                            return .failure(PositionedLoadProblem(
                                position: (entity, position, 1),
                                problem: LoadProblem(entity: description.name, id: key.description, message: "its \(constraint.name) \(unique) is also held by \(other)")))
                        }
                    }
                }
            }
            for relationshipIndex in description.relationshipIndexes {
                version.inverse[relationshipIndex] = inverseIndex(of: values, source: description, relationship: schema.relationships[relationshipIndex])
            }
        }
        return .success(version)
    }

    /// The inverse index of `relationship` over `values`, the objects of its source entity:
    /// the sources are grouped by target first, then each target's set is built on its own,
    /// instead of one update of the persistent map per reference.
    ///
    /// - Complexity: O(references), plus O(t) persistent-map inserts for t targets.
    static func inverseIndex(
        of values: [any Entity], source: EntityDescription, relationship: RelationshipDescription
    ) -> TreeDictionary<ObjectKey, TreeSet<ObjectKey>> {
        var sourcesByTarget: [ObjectKey: [ObjectKey]] = [:]
        for value in values {
            let targets = relationship.targets(value)
            guard !targets.isEmpty else { continue }
            let key = source.key(value)
            for target in targets { sourcesByTarget[target, default: []].append(key) }
        }
        var inverse = TreeDictionary<ObjectKey, TreeSet<ObjectKey>>()
        for (target, sources) in sourcesByTarget { inverse[target] = TreeSet(sources) }
        return inverse
    }
}

/// Why loaded objects do not form a valid graph.
struct LoadProblem: Error, CustomStringConvertible {
    let entity: String
    let id: String
    let message: String

    var description: String { "\(entity) \(id): \(message)" }
}
