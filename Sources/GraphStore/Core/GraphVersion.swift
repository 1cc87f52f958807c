import Foundation
internal import GraphStoreCoding
import HashTreeCollections

/// An object as committed, with the store version that last wrote it.
package struct StoredObject: Sendable {
    package var value: any Entity
    /// The commit that last inserted or updated this object: the base of conflict detection.
    package var version: UInt64

    /// The bit that marks a version no commit wrote (see ``madeUp(_:before:)``).
    static let madeUpBit: UInt64 = 1 << 63

    /// What a context remembers of its own value after a `.mergeByProperty` save stored a
    /// merge of it as version `version`: its value, at a version that stands just before the
    /// merge and equals no version a commit wrote (the one before may be another context's,
    /// and taking the two for one would hide a conflict with it). A change based on it is a
    /// conflict with the merge, and merges again.
    static func madeUp(_ value: any Entity, before version: UInt64) -> StoredObject {
        StoredObject(value: value, version: (version - 1) | madeUpBit)
    }

    /// `version` as a commit number: a made-up one (``madeUp(_:before:)``) as the commit it
    /// stands just after.
    static func commitNumber(_ version: UInt64) -> UInt64 { version & ~madeUpBit }
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
    /// The work is cut into independent jobs, run on every processor for a large graph: each
    /// sorted index (its entries read and sorted), each relationship's inverse, each table (in
    /// two halves split on a hash bit when large, joined at their roots as ``TableBuilder``
    /// does), each entity's unique values. The largest start first, so that the last to finish
    /// is a small one. The problem reported is the one building them in order would meet first.
    ///
    /// - Throws: ``LoadProblem`` for a duplicate id, a unique value held twice, or a reference
    ///   to a missing object.
    /// - Complexity: O(objects + references), plus O(n log n) per sorted index.
    static func loaded(_ objects: [[any Entity]], number: UInt64, schema: Schema) throws(LoadProblem) -> GraphVersion {
        let ids = LoadedIDs.read(objects, schema: schema, splittingTables: buildsInParallel(objects))
        return try loaded(objects, ids: ids, number: number, schema: schema)
    }

    /// Whether the graph of `objects` is built in parallel jobs, with large tables in halves.
    static func buildsInParallel(_ objects: [[any Entity]]) -> Bool {
        objects.reduce(0, { $0 + $1.count }) >= 10_000 && Processors.active > 1
    }

    /// As ``loaded(_:number:schema:)``, with the ids of `objects` read already (by
    /// ``LoadedIDs/read(_:schema:splittingTables:lookingUp:)``, and changed as the objects
    /// were, as folding a journal does): the halves of a table are settled here when the
    /// objects' count changed whether it is built in halves.
    ///
    /// - Throws: as ``loaded(_:number:schema:)``.
    /// - Complexity: as ``loaded(_:number:schema:)``, without the id reads.
    static func loaded(_ objects: [[any Entity]], ids read: [LoadedIDs], number: UInt64, schema: Schema) throws(LoadProblem) -> GraphVersion {
        let parallel = buildsInParallel(objects)
        var settled = read
        for entity in objects.indices {
            settled[entity].settleHalves(splitting: LoadedIDs.splits(count: objects[entity].count, splittingTables: parallel))
        }
        let ids = settled
        let jobs = LoadJob.jobs(objects, schema: schema, splittingTables: parallel)
        let done = inJobs(jobs.count, inParallel: parallel) { job in
            jobs[job].run(objects, ids: ids, number: number, schema: schema)
        }
        var version = GraphVersion(schema: schema)
        var first: PositionedLoadProblem?
        for (job, result) in zip(jobs, done) {
            switch (job, result) {
            case (_, .failure(let problem)):
                if first.map({ problem.position < $0.position }) ?? true { first = problem }
            case (.table(let entity, _), .table(let table)):
                // The halves hold disjoint keys under different root slots: a join of roots.
                if version.tables[entity].isEmpty { version.tables[entity] = table } else { version.tables[entity].merge(table) { _, new in new } }
            case (.sorted(let entity, let position), .sorted(let tree)):
                version.sorted[entity][position] = tree
            case (.unique(let entity), .unique(let maps)):
                version.unique[entity] = maps
            case (.inverse(let relationship), .inverse(let map)):
                version.inverse[relationship] = map
            default:
                preconditionFailure("GraphStore: a load job's result does not match the job")
            }
        }
        if let first { throw first.problem }
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

    /// One independent part of building a loaded version (see ``loaded(_:number:schema:)``).
    private enum LoadJob: Sendable {
        /// The table of an entity, or the half of it whose ids' hashes have the given split bit
        /// (see ``TableBuilder/half(of:)``).
        case table(entity: Int, half: Int?)
        /// One sorted index of an entity.
        case sorted(entity: Int, position: Int)
        /// The unique values of an entity, every constraint.
        case unique(entity: Int)
        /// The inverse index of a relationship.
        case inverse(relationship: Int)

        enum Result: Sendable {
            case table(TreeDictionary<ObjectKey, StoredObject>)
            case sorted(IndexTree)
            case unique([TreeDictionary<ObjectKey, ObjectKey>])
            case inverse(TreeDictionary<ObjectKey, TreeSet<ObjectKey>>)
            case failure(PositionedLoadProblem)
        }

        /// Every job for `objects`, largest first (by the work per object of each kind).
        static func jobs(_ objects: [[any Entity]], schema: Schema, splittingTables: Bool) -> [LoadJob] {
            var weighted: [(job: LoadJob, weight: Int)] = []
            for entity in schema.entities {
                let count = objects[entity.index].count
                guard count > 0 else { continue }
                if LoadedIDs.splits(count: count, splittingTables: splittingTables) {
                    weighted += [(.table(entity: entity.index, half: 0), count), (.table(entity: entity.index, half: 1), count)]
                } else {
                    weighted.append((.table(entity: entity.index, half: nil), 2 * count))
                }
                for position in entity.indexes.indices { weighted.append((.sorted(entity: entity.index, position: position), 4 * count)) }
                if !entity.constraints.isEmpty { weighted.append((.unique(entity: entity.index), count * entity.constraints.count)) }
                for relationship in entity.relationshipIndexes { weighted.append((.inverse(relationship: relationship), 4 * count)) }
            }
            // Stable: equal weights keep the order above.
            return weighted.enumerated().sorted { ($0.element.weight, -$0.offset) > ($1.element.weight, -$1.offset) }.map(\.element.job)
        }

        func run(_ objects: [[any Entity]], ids: [LoadedIDs], number: UInt64, schema: Schema) -> Result {
            switch self {
            case .table(let entity, let half):
                return GraphVersion.loadedTable(objects[entity], ids: ids[entity], entity: schema.entities[entity], number: number, half: half)
            case .sorted(let entity, let position):
                return .sorted(GraphVersion.loadedSortedIndex(objects[entity], ids: ids[entity], entity: schema.entities[entity], position: position))
            case .unique(let entity):
                return GraphVersion.loadedUniqueValues(objects[entity], ids: ids[entity], entity: schema.entities[entity])
            case .inverse(let index):
                let relationship = schema.relationships[index]
                return .inverse(GraphVersion.inverseIndex(of: objects[relationship.source], ids: ids[relationship.source], relationship: relationship))
            }
        }
    }

    /// The ids of one entity's loaded objects, each read once, before the jobs of
    /// ``loaded(_:number:schema:)`` start, and shared by all of them: reading an id goes through
    /// the object's existential and the generic `id`, which every job would otherwise repeat.
    /// For a table built in two halves, the positions of each half's objects too, so that
    /// neither half visits the other's objects.
    struct LoadedIDs: Sendable {
        /// The ids of the objects: of all of them, or of the first `runLength` when `rest` holds
        /// the others (read on a second thread).
        private var first: [ObjectKey]
        private var rest: [ObjectKey]
        /// The length of `first` when `rest` is used.
        private var runLength: Int
        /// For a table built in halves: per half (``TableBuilder/half(of:)``), the positions of
        /// its objects, ascending; otherwise empty.
        private(set) var halves: [[Int]]

        /// The id of the object at `position`.
        @inline(__always) subscript(position: Int) -> ObjectKey {
            position < first.count ? first[position] : rest[position - runLength]
        }

        /// The number of ids.
        var count: Int { first.count + rest.count }

        private init(runs: [[ObjectKey]], runLength: Int, halves: [[Int]]) {
            precondition(runs.count <= 2, "GraphStore: at most two runs of ids")
            first = runs.first ?? []
            rest = runs.count > 1 ? runs[1] : []
            self.runLength = runLength
            self.halves = halves
        }

        /// Whether the table of `count` objects is built in two halves.
        static func splits(count: Int, splittingTables: Bool) -> Bool {
            splittingTables && count >= TableBuilder.parallelThreshold
        }

        /// What reading an entity's ids does besides (see ``read(_:schema:splittingTables:lookingUp:)``).
        enum Lookup: Sendable {
            /// Nothing.
            case none
            /// Each id is looked up in these slots by id (a journal fold's): the positions
            /// found are returned, each with its slot.
            case slots([ObjectKey: Int])
            /// The entity's objects are all dropped afterwards (a cleared entity): no id is read.
            case skipped
        }

        /// A position whose id a ``Lookup/slots(_:)`` lookup found, with the slot it found.
        typealias Found = (position: Int, slot: Int)

        /// The ids of every entity's `objects`; when `splittingTables`, a large entity's are read
        /// in two runs on two threads.
        ///
        /// - Complexity: O(objects), one id read per object.
        static func read(_ objects: [[any Entity]], schema: Schema, splittingTables: Bool) -> [LoadedIDs] {
            read(objects, schema: schema, splittingTables: splittingTables, lookingUp: []).ids
        }

        /// The ids of every entity's `objects`, as ``read(_:schema:splittingTables:)``, each
        /// also looked up as `lookups` (per entity index; missing ones are ``Lookup/none``) says
        /// while it is at hand, so that no id is read twice.
        ///
        /// - Returns: the ids (none for a ``Lookup/skipped`` entity), and per entity index the
        ///   positions found, ascending.
        /// - Complexity: O(objects), one id read per object, plus a dictionary lookup per
        ///   object of each entity looked up.
        static func read(
            _ objects: [[any Entity]], schema: Schema, splittingTables: Bool, lookingUp lookups: [Lookup]
        ) -> (ids: [LoadedIDs], found: [[Found]]) {
            // One piece per run: (entity, run, range, whether the entity's table is split).
            var planned: [(entity: Int, run: Int, range: Range<Int>, split: Bool)] = []
            var runLengths = Array(repeating: 0, count: objects.count)
            for entity in objects.indices {
                var skipped = false
                if entity < lookups.count, case .skipped = lookups[entity] { skipped = true }
                let count = skipped ? 0 : objects[entity].count
                let split = splits(count: count, splittingTables: splittingTables)
                let runs = split ? 2 : 1
                let length = max(1, (count + runs - 1) / runs)
                runLengths[entity] = length
                for run in 0..<runs { planned.append((entity, run, min(count, run * length)..<min(count, (run + 1) * length), split)) }
            }
            let pieces = planned
            typealias Piece = (ids: [ObjectKey], halves: [[Int]], found: [Found])
            let read = inJobs(pieces.count, inParallel: splittingTables) { index -> Piece in
                let piece = pieces[index]
                let key = schema.entities[piece.entity].key
                var slots: [ObjectKey: Int]? = nil
                if piece.entity < lookups.count, case .slots(let found) = lookups[piece.entity] { slots = found }
                var halves: [[Int]] = []
                var found: [Found] = []
                if piece.split {
                    halves = [[], []]
                    halves[0].reserveCapacity(piece.range.count / 2 + piece.range.count / 8)
                    halves[1].reserveCapacity(piece.range.count / 2 + piece.range.count / 8)
                }
                let ids = Self.ids(of: objects[piece.entity], in: piece.range, key: key)
                for (offset, id) in ids.enumerated() {
                    let position = piece.range.lowerBound + offset
                    if piece.split { halves[TableBuilder.half(of: id)].append(position) }
                    if let slots, let slot = slots[id] { found.append((position, slot)) }
                }
                return (ids, halves, found)
            }
            var result: [LoadedIDs] = []
            result.reserveCapacity(objects.count)
            var allFound: [[Found]] = []
            allFound.reserveCapacity(objects.count)
            var next = 0
            for entity in objects.indices {
                var runs: [[ObjectKey]] = []
                var halves: [[Int]] = []
                var found: [Found] = []
                while next < pieces.count && pieces[next].entity == entity {
                    let piece = read[next]
                    runs.append(piece.ids)
                    if halves.isEmpty { halves = piece.halves } else {
                        for half in halves.indices { halves[half] += piece.halves[half] }
                    }
                    found += piece.found
                    next += 1
                }
                result.append(LoadedIDs(runs: runs, runLength: runLengths[entity], halves: halves))
                allFound.append(found)
            }
            return (result, allFound)
        }

        /// Follows a change of the objects these are the ids of: the objects at `deleted`
        /// (ascending) removed, the kept ones moved down in order, and objects of the ids
        /// `appended` added at the end. An object replaced in its place keeps its id: nothing
        /// to do.
        ///
        /// - Complexity: O(ids) when `deleted` is not empty (no id is hashed), plus
        ///   O(`appended`) (each appended id hashed when the table is built in halves).
        mutating func remove(_ deleted: [Int], appending appended: [ObjectKey]) {
            if !deleted.isEmpty {
                var next = 0
                // Each run compacted in place, by swaps, which copy no id.
                func compact(_ run: inout [ObjectKey], from offset: Int) {
                    var kept = 0
                    for index in run.indices {
                        if next < deleted.count, deleted[next] == offset + index {
                            next += 1
                            continue
                        }
                        if kept != index { run.swapAt(kept, index) }
                        kept += 1
                    }
                    run.removeLast(run.count - kept)
                }
                compact(&first, from: 0)
                compact(&rest, from: runLength)
                for half in halves.indices {
                    // A kept position moves down by the number of deleted ones before it.
                    var before = 0, moved: [Int] = []
                    moved.reserveCapacity(halves[half].count)
                    for position in halves[half] {
                        while before < deleted.count, deleted[before] < position { before += 1 }
                        if before < deleted.count, deleted[before] == position { continue }
                        moved.append(position - before)
                    }
                    halves[half] = moved
                }
            }
            runLength = first.count
            guard !appended.isEmpty else { return }
            if !halves.isEmpty {
                for (offset, id) in appended.enumerated() { halves[TableBuilder.half(of: id)].append(count + offset) }
            }
            if rest.isEmpty { first += appended } else { rest += appended }
        }

        /// The ids of `values[range]`, each object read through the array's own subscript in a
        /// loop that does nothing else: an element read through a buffer pointer, or in a loop
        /// that also writes captured variables, is copied (its box retained and released) first.
        private static func ids(of values: [any Entity], in range: Range<Int>, key: (any Entity) -> ObjectKey) -> [ObjectKey] {
            var ids: [ObjectKey] = []
            ids.reserveCapacity(range.count)
            for position in range { ids.append(key(values[position])) }
            return ids
        }

        /// Makes the halves present exactly when the table is built in halves (`splitting`):
        /// they were read for another count of objects when the ids were changed since.
        ///
        /// - Complexity: O(1) when they are already as `splitting` says, otherwise O(ids).
        mutating func settleHalves(splitting: Bool) {
            let hasHalves = !halves.isEmpty
            guard splitting != hasHalves else { return }
            guard splitting else {
                halves = []
                return
            }
            var halves: [[Int]] = [[], []]
            for position in 0..<count { halves[TableBuilder.half(of: self[position])].append(position) }
            self.halves = halves
        }
    }

    /// The table of `values` (or of the half of their ids `half` names), every object at
    /// `number`; a failure at the first id met twice.
    private static func loadedTable(_ values: [any Entity], ids: LoadedIDs, entity: EntityDescription, number: UInt64, half: Int?) -> LoadJob.Result {
        var table = TreeDictionary<ObjectKey, StoredObject>()
        func insert(_ index: Int) -> LoadJob.Result? {
            let key = ids[index]
            guard table.updateValue(StoredObject(value: values[index], version: number), forKey: key) == nil else {
                return .failure(PositionedLoadProblem(
                    position: (entity.index, index, 0), problem: LoadProblem(entity: entity.name, id: key.description, message: "the id appears twice")))
            }
            return nil
        }
        if let half {
            for index in ids.halves[half] { if let failure = insert(index) { return failure } }
        } else {
            for index in values.indices { if let failure = insert(index) { return failure } }
        }
        return .table(table)
    }

    /// Sorted index `position` of `values`, the objects of `entity`. With an id held twice
    /// (which the table reports) the index is left empty.
    private static func loadedSortedIndex(_ values: [any Entity], ids: LoadedIDs, entity: EntityDescription, position: Int) -> IndexTree {
        let index = entity.indexes[position]
        var entries: [IndexTree.Entry] = []
        entries.reserveCapacity(values.count)
        // The array's own subscript: an element read through a buffer pointer is copied (a
        // retain and a release of its box, contended by the other jobs reading the same objects)
        // before it is passed on.
        for position in values.indices { entries.append(IndexTree.Entry(key: index.key(values[position]), id: ids[position])) }
        sort(&entries)
        // Equal entries (an id held twice with the same value) are neighbours once sorted.
        for next in entries.indices.dropFirst() where entries[next - 1].id == entries[next].id { return IndexTree() }
        return IndexTree(sorted: entries)
    }

    /// The unique values of `values`, the objects of `entity`, one object at a time; a failure
    /// at the first value held twice.
    private static func loadedUniqueValues(_ values: [any Entity], ids: LoadedIDs, entity: EntityDescription) -> LoadJob.Result {
        var unique = entity.constraints.map { _ in TreeDictionary<ObjectKey, ObjectKey>() }
        for position in values.indices {
            let key = ids[position]
            for (index, constraint) in entity.constraints.enumerated() {
                guard let value = constraint.key(values[position]) else { continue }
                if let other = unique[index].updateValue(key, forKey: value) {
                    return .failure(PositionedLoadProblem(
                        position: (entity.index, position, 1),
                        problem: LoadProblem(entity: entity.name, id: key.description, message: "its \(constraint.name) \(value) is also held by \(other)")))
                }
            }
        }
        return .unique(unique)
    }

    /// The inverse index of `relationship` over `values`, the objects of its source entity:
    /// the sources are grouped by target first, then each target's set is built on its own,
    /// instead of one update of the persistent map per reference.
    ///
    /// - Complexity: O(references), plus O(t) persistent-map inserts for t targets.
    private static func inverseIndex(
        of values: [any Entity], ids: LoadedIDs, relationship: RelationshipDescription
    ) -> TreeDictionary<ObjectKey, TreeSet<ObjectKey>> {
        var sourcesByTarget: [ObjectKey: [ObjectKey]] = [:]
        // The array's own subscript, as in `loadedSortedIndex`: no copy of each object.
        for position in values.indices {
            let targets = relationship.targets(values[position])
            guard !targets.isEmpty else { continue }
            let key = ids[position]
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
