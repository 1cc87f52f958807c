import Foundation
import HashTreeCollections

extension GraphVersion {
    // MARK: - Sorted index maintenance

    /// Moves the object `key` of `entity` from `old` to `new` in the entity's sorted indexes
    /// (either may be `nil`: an insert or a delete).
    ///
    /// - Complexity: O(indexes × log n) expected.
    mutating func resort(entity: Int, key: ObjectKey, old: StoredObject?, new: StoredObject?, schema: Schema) {
        let indexes = schema.entities[entity].indexes
        guard !indexes.isEmpty else { return }
        for (position, index) in indexes.enumerated() {
            let newKey = new.map { index.key($0.value) }
            if let old {
                let oldKey = index.key(old.value)
                if let newKey {
                    // Same indexed values: the entry stays as it is (it does not hold the object).
                    if IndexKey.compare(oldKey, newKey) == 0 { continue }
                    // One walk for the remove and the insert; an absent old entry (which a
                    // version in step with its table never has) still leaves the new one in.
                    if sorted[entity][position].move(id: key, from: oldKey, to: newKey) { continue }
                } else {
                    sorted[entity][position].remove(key: oldKey, id: key)
                }
            }
            if let newKey { sorted[entity][position].insert(IndexTree.Entry(key: newKey, id: key)) }
        }
    }

    /// Brings the sorted indexes of every entity a commit changed from `base` in step with the
    /// tables of this version.
    ///
    /// An entity whose table was empty before is indexed in one sorted build; a batch of new
    /// objects is sorted and joined to each index as one tree; otherwise each changed object
    /// moves on its own.
    ///
    /// - Complexity: O(indexes × k log n) for k changed objects; O(indexes × k log(n / k + 1))
    ///   plus the sort for a batch of k new ones.
    mutating func resortChanged(from base: GraphVersion, change: GraphChange, schema: Schema) {
        for entity in schema.entities where !entity.indexes.isEmpty {
            let name = entity.name
            let keyLists = [change.inserted[name], change.updated[name], change.deleted[name]]
            guard change.dropped[name] != nil || keyLists.contains(where: { !($0?.isEmpty ?? true) }) else { continue }
            let table = tables[entity.index]
            if table.isEmpty || base.tables[entity.index].isEmpty {
                sorted[entity.index] = Self.sortedIndexes(of: table, entity: entity)
                continue
            }
            let before = base.tables[entity.index]
            // An id listed twice (which a change never does today) must still move once.
            var seen: Set<ObjectKey>? = keyLists.filter { !($0?.isEmpty ?? true) }.count > 1 ? [] : nil
            var lists = keyLists
            if let inserted = change.inserted[name], inserted.count >= Self.batchInsertThreshold {
                // A batch of new objects joins each index as one sorted tree.
                let added = inserted.compactMap { key in before[key] == nil ? table[key].map { (key, $0) } : nil }
                let batches = added.count == inserted.count ? entity.indexes.map { index in
                    added.map { index.entry($0.0, $0.1) }.sorted { IndexTree.Entry.compare($0, $1) < 0 }
                } : []
                // Distinct ids (the sorted build needs distinct entries); otherwise one by one.
                if let first = batches.first, zip(first, first.dropFirst()).allSatisfy({ $0.id != $1.id }) {
                    for (position, entries) in batches.enumerated() {
                        sorted[entity.index][position].formUnion(IndexTree(sorted: entries))
                    }
                    if seen != nil { seen!.formUnion(inserted) }
                    lists[0] = nil
                }
            }
            for keys in lists {
                for key in keys ?? [] {
                    if seen != nil, !seen!.insert(key).inserted { continue }
                    resort(entity: entity.index, key: key, old: before[key], new: table[key], schema: schema)
                }
            }
        }
    }

    /// From how many new objects of one entity a commit adds them to each index as one sorted
    /// tree (``IndexTree/formUnion(_:)``) instead of one insert each.
    static var batchInsertThreshold: Int { 32 }

    /// Builds the sorted indexes again if a store's loading path left any out of step with its
    /// table (counts differ); every path through ``loaded(_:number:schema:)`` and journal
    /// replay keeps them, so this is a safety net that costs O(indexes) when they are right.
    mutating func ensureSortedIndexes(schema: Schema) {
        let isInStep = schema.entities.allSatisfy { entity in
            sorted[entity.index].count == entity.indexes.count && sorted[entity.index].allSatisfy { $0.count == tables[entity.index].count }
        }
        if !isInStep { sorted = Self.buildSortedIndexes(tables, schema: schema) }
    }

    /// The sorted indexes of every entity of `tables`, built in parallel (one task per index).
    ///
    /// - Complexity: O(n log n) per index, spread over the available processors.
    static func buildSortedIndexes(_ tables: [TreeDictionary<ObjectKey, StoredObject>], schema: Schema) -> [[IndexTree]] {
        let jobs = schema.entities.flatMap { entity in entity.indexes.indices.map { (entity.index, $0) } }
        var result = schema.entities.map { Array(repeating: IndexTree(), count: $0.indexes.count) }
        guard !jobs.isEmpty else { return result }
        let trees = inJobs(jobs.count, inParallel: true) { job in
            let (entity, position) = jobs[job]
            return sortedIndex(of: tables[entity], index: schema.entities[entity].indexes[position])
        }
        for (job, (entity, position)) in jobs.enumerated() { result[entity][position] = trees[job] }
        return result
    }

    static func sortedIndexes(of table: TreeDictionary<ObjectKey, StoredObject>, entity: EntityDescription) -> [IndexTree] {
        entity.indexes.map { sortedIndex(of: table, index: $0) }
    }

    /// One index of `table`, built by sorting (by words where the values allow: see
    /// ``IndexSortKeys``).
    ///
    /// - Complexity: O(n log n).
    static func sortedIndex(of table: TreeDictionary<ObjectKey, StoredObject>, index: IndexDescription) -> IndexTree {
        var entries = table.map { index.entry($0.key, $0.value) }
        return sortedIndex(of: &entries)
    }

    /// The index holding `entries` (distinct ids, in any order), built by sorting them in
    /// place: by words where their values allow (see ``IndexSortKeys``), else by comparing
    /// entries.
    ///
    /// - Complexity: O(n log n).
    static func sortedIndex(of entries: inout [IndexTree.Entry]) -> IndexTree {
        sort(&entries)
        return IndexTree(sorted: entries)
    }

    /// Sorts `entries` into index order: by words where their values allow (see
    /// ``IndexSortKeys``), else by comparing entries.
    ///
    /// - Complexity: O(n log n).
    static func sort(_ entries: inout [IndexTree.Entry]) {
        if !IndexSortKeys.sort(&entries) { entries.sort { IndexTree.Entry.compare($0, $1) < 0 } }
    }

    /// Checks every sorted index's own invariants and that it holds exactly the objects of its
    /// table under their current values.
    ///
    /// - Throws: ``GraphStoreError/invariantViolation(_:)`` naming the index.
    /// - Complexity: O(n log n) per index.
    func checkSortedIndexes(schema: Schema) throws {
        for entity in schema.entities {
            for (position, index) in entity.indexes.enumerated() {
                let tree = sorted[entity.index][position]
                tree.checkInvariants()
                let expected = Self.sortedIndex(of: tables[entity.index], index: index).entries
                let actual = tree.entries
                guard expected.count == actual.count,
                      zip(expected, actual).allSatisfy({ IndexTree.Entry.compare($0, $1) == 0 })
                else {
                    throw GraphStoreError.invariantViolation("sorted index \(entity.name).\(index.name) differs from a rebuild (\(actual.count) entries, rebuilt \(expected.count))")
                }
            }
        }
    }
}
