import Foundation
import PropertyBased
import Testing

@testable import GraphStore
import GraphStoreTestSupport

/// The persistent B+tree behind sorted indexes: random inserts and removals against a sorted
/// array, with every invariant checked (order, bounds, counts, fill, one depth for all
/// leaves), ranks of prefixes, and old versions left untouched.
@Suite struct IndexTreeTests {
    static func entry(_ id: Int, _ value: Int?) -> IndexTree.Entry {
        IndexTree.Entry(key: IndexKey([IndexValue(value)]), id: ObjectKey(id))
    }

    static func ids(_ tree: IndexTree) -> [Int] { tree.entries.map { $0.id.value(as: Int.self)! } }

    /// The most levels a tree of `count` entries may have when every node but the root is at
    /// least a quarter full.
    static func maximumHeight(_ count: Int) -> Int {
        var height = 1
        var reach = 2 * (IndexTree.leafCapacity / 4)
        while reach <= count {
            reach *= IndexTree.innerCapacity / 4
            height += 1
        }
        return height
    }

    /// Random inserts and removals of `ids` ids with values in `values`, checked against a
    /// dictionary model: order, counts, ranks, walks, balance and the versions kept on the way.
    static func checkRandomChanges(seed: UInt64, ids: Int, values: Int, steps: Int, checkEvery: Int) {
        var random = SplitMix64(seed: seed)
        var tree = IndexTree()
        var model: [Int: Int?] = [:]
        var snapshots: [(IndexTree, [Int])] = []
        func randomValue() -> Int? {
            Int.random(in: 0..<8, using: &random) == 0 ? nil : Int.random(in: -5..<values, using: &random)
        }
        for step in 0..<steps {
            let id = Int.random(in: 0..<ids, using: &random)
            if let old = model[id] {
                let removed = tree.remove(Self.entry(id, old))
                #expect(removed)
                model[id] = nil
                if Bool.random(using: &random) {
                    let value = randomValue()
                    tree.insert(Self.entry(id, value))
                    model[id] = .some(value)
                }
            } else {
                let value = randomValue()
                tree.insert(Self.entry(id, value))
                model[id] = .some(value)
            }
            let before = tree.count
            let removedAbsent = tree.remove(Self.entry(ids + step, 0))
            #expect(!removedAbsent, "removing an absent entry changes nothing")
            #expect(tree.count == before)
            if step % checkEvery == 0 {
                tree.checkInvariants()
                snapshots.append((tree, Self.ids(tree)))
            }
        }
        tree.checkInvariants()
        #expect(tree.height <= Self.maximumHeight(tree.count))
        // Sorted by value (nil first), then id.
        #expect(Self.ids(tree) == IndexTreeMoveTests.sortedIDs(model))
        #expect(tree.count == model.count)
        // Ranks of a prefix: entries strictly before and up to a value.
        for probe in -6...(values + 1) {
            let below = model.values.filter { $0 == nil || $0! < probe }.count
            let upTo = model.values.filter { $0 == nil || $0! <= probe }.count
            #expect(tree.rank(of: [.int(Int64(probe))], orEqual: false) == below)
            #expect(tree.rank(of: [.int(Int64(probe))], orEqual: true) == upTo)
        }
        #expect(tree.rank(of: [.null], orEqual: true) == model.values.filter { $0 == nil }.count)
        #expect(tree.rank(of: [.null], orEqual: false) == 0)
        // Older versions still read as they were.
        for (old, ids) in snapshots {
            old.checkInvariants()
            #expect(Self.ids(old) == ids)
        }
        // Walks of rank ranges, both ways.
        let all = tree.entries.map { $0.id }
        for _ in 0..<5 {
            let low = all.isEmpty ? 0 : Int.random(in: 0..<all.count, using: &random)
            let high = all.isEmpty ? 0 : Int.random(in: low...all.count, using: &random)
            var forward: [ObjectKey] = [], backward: [ObjectKey] = []
            tree.forEach(in: low..<high) { forward.append($0.id); return true }
            tree.forEach(in: low..<high, reversed: true) { backward.append($0.id); return true }
            #expect(forward == Array(all[low..<high]))
            #expect(backward == Array(all[low..<high].reversed()))
        }
    }

    @Test func randomChangesKeepOrderCountsAndOldVersions() async {
        await propertyCheck(count: 60, input: Gen<UInt64>.bitSet) { seed in
            Self.checkRandomChanges(seed: seed, ids: 120, values: 15, steps: 300, checkEvery: 50)
        }
    }

    /// Enough entries for three and four levels, so that inner nodes split, merge and share
    /// out children, and few distinct values, so that runs of equal keys cross leaves.
    @Test(arguments: [(4_000, 10), (6_000, 100_000)])
    func randomChangesInDeepTrees(ids: Int, values: Int) {
        for seed in 1...3 as ClosedRange<UInt64> {
            Self.checkRandomChanges(seed: seed, ids: ids, values: values, steps: 20_000, checkEvery: 2_000)
        }
    }

    @Test func growingAndShrinkingKeepsItBalanced() {
        var random = SplitMix64(seed: 11)
        var tree = IndexTree()
        let ids = Array(0..<20_000).shuffled(using: &random)
        for (step, id) in ids.enumerated() {
            tree.insert(Self.entry(id, id % 97))
            if step % 4_000 == 0 { tree.checkInvariants() }
        }
        tree.checkInvariants()
        #expect(tree.count == ids.count)
        #expect(tree.height >= 3)
        #expect(tree.height <= Self.maximumHeight(tree.count))
        let full = tree
        for (step, id) in ids.shuffled(using: &random).enumerated() {
            let removed = tree.remove(Self.entry(id, id % 97))
            #expect(removed)
            if step % 4_000 == 0 {
                tree.checkInvariants()
                #expect(tree.height <= Self.maximumHeight(tree.count))
            }
        }
        tree.checkInvariants()
        #expect(tree.isEmpty)
        #expect(tree.height == 1)
        full.checkInvariants()
        #expect(full.count == ids.count)
        #expect(Self.ids(full).count == ids.count)
    }

    @Test func sortedBuildEqualsInsertions() {
        var random = SplitMix64(seed: 7)
        for size in [0, 1, 63, 64, 65, 500, 1_024, 1_025, 5_000, 17_000] {
            let entries = (0..<size).map { Self.entry($0, Int.random(in: 0..<20, using: &random)) }
                .sorted { IndexTree.Entry.compare($0, $1) < 0 }
            let built = IndexTree(sorted: entries)
            var inserted = IndexTree()
            for entry in entries.shuffled(using: &random) { inserted.insert(entry) }
            built.checkInvariants()
            inserted.checkInvariants()
            #expect(built.count == size)
            #expect(built.entries.map(\.id) == inserted.entries.map(\.id))
            #expect(built.height <= Self.maximumHeight(size))
            // A sorted build packs its nodes: no more levels than full nodes need.
            var fullHeight = 1, reach = IndexTree.leafCapacity
            while reach < size { reach *= IndexTree.innerCapacity; fullHeight += 1 }
            #expect(built.height == fullHeight, "\(size) entries")
        }
    }

    @Test func unionEqualsInsertionsAndKeepsBothOperands() async {
        await propertyCheck(count: 40, input: Gen<UInt64>.bitSet) { seed in
            var random = SplitMix64(seed: seed)
            let ids = Array(0..<Int.random(in: 0..<3_000, using: &random)).shuffled(using: &random)
            let split = ids.isEmpty ? 0 : Int.random(in: 0...ids.count, using: &random)
            let entries = ids.map { Self.entry($0, Int.random(in: 0..<6, using: &random) == 0 ? nil : Int.random(in: 0..<30, using: &random)) }
            var base = IndexTree()
            for entry in entries[..<split] { base.insert(entry) }
            let batch = IndexTree(sorted: entries[split...].sorted { IndexTree.Entry.compare($0, $1) < 0 })
            let baseIDs = base.entries.map(\.id), batchIDs = batch.entries.map(\.id)
            var union = base
            union.formUnion(batch)
            var inserted = base
            for entry in entries[split...] { inserted.insert(entry) }
            union.checkInvariants()
            #expect(union.count == entries.count)
            #expect(union.entries.map(\.id) == inserted.entries.map(\.id))
            base.checkInvariants()
            batch.checkInvariants()
            #expect(base.entries.map(\.id) == baseIDs)
            #expect(batch.entries.map(\.id) == batchIDs)
        }
    }

    @Test func walkStopsWhenAsked() {
        let tree = IndexTree(sorted: (0..<1_000).map { Self.entry($0, $0) })
        for reversed in [false, true] {
            var seen: [Int] = []
            tree.forEach(in: 100..<900, reversed: reversed) { entry in
                seen.append(entry.id.value(as: Int.self)!)
                return seen.count < 200
            }
            #expect(seen == (reversed ? Array((700..<900).reversed()) : Array(100..<300)))
        }
        var none = 0
        tree.forEach(in: 1_000..<1_200) { _ in none += 1; return true }
        #expect(none == 0, "ranks past the end visit nothing")
    }
}
