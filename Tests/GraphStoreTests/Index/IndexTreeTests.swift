import Foundation
import PropertyBased
import Testing

@testable import GraphStore
import GraphStoreTestSupport

/// The persistent weight-balanced tree behind sorted indexes: random inserts and removals against a sorted
/// array, with every invariant checked, ranks of prefixes, and old versions left untouched.
@Suite struct IndexTreeTests {
    static func entry(_ id: Int, _ value: Int?) -> IndexTree.Entry {
        IndexTree.Entry(key: IndexKey([IndexValue(value)]), id: ObjectKey(id))
    }

    @Test func randomChangesKeepOrderCountsAndOldVersions() async {
        await propertyCheck(count: 60, input: Gen<UInt64>.bitSet) { seed in
            var random = SplitMix64(seed: seed)
            var tree = IndexTree()
            var model: [Int: Int?] = [:]
            var snapshots: [(IndexTree, [Int])] = []
            for step in 0..<300 {
                let id = Int.random(in: 0..<120, using: &random)
                if let old = model[id] {
                    let removed = tree.remove(Self.entry(id, old))
                    #expect(removed)
                    model[id] = nil
                    if Bool.random(using: &random) {
                        let value: Int? = Int.random(in: 0..<8, using: &random) == 0 ? nil : Int.random(in: -5..<15, using: &random)
                        tree.insert(Self.entry(id, value))
                        model[id] = .some(value)
                    }
                } else {
                    let value: Int? = Int.random(in: 0..<8, using: &random) == 0 ? nil : Int.random(in: -5..<15, using: &random)
                    tree.insert(Self.entry(id, value))
                    model[id] = .some(value)
                }
                let removedAbsent = tree.remove(Self.entry(1_000 + step, 0))
                #expect(!removedAbsent, "removing an absent entry changes nothing")
                if step % 50 == 0 { snapshots.append((tree, tree.entries.map { $0.id.value(as: Int.self)! })) }
            }
            tree.checkInvariants()
            // Sorted by value (nil first), then id.
            let expected = IndexTreeMoveTests.sortedIDs(model)
            #expect(tree.entries.map { $0.id.value(as: Int.self)! } == expected)
            #expect(tree.count == model.count)
            // Ranks of a prefix: entries strictly before and up to a value.
            for probe in -6..<16 {
                let below = model.values.filter { $0 == nil || $0! < probe }.count
                let upTo = model.values.filter { $0 == nil || $0! <= probe }.count
                #expect(tree.rank(of: [.int(Int64(probe))], orEqual: false) == below)
                #expect(tree.rank(of: [.int(Int64(probe))], orEqual: true) == upTo)
            }
            #expect(tree.rank(of: [.null], orEqual: true) == model.values.filter { $0 == nil }.count)
            // Older versions still read as they were.
            for (old, ids) in snapshots {
                old.checkInvariants()
                #expect(old.entries.map { $0.id.value(as: Int.self)! } == ids)
            }
            // A walk of a rank range, both ways.
            let all = tree.entries.map { $0.id }
            let low = all.isEmpty ? 0 : Int.random(in: 0..<all.count, using: &random)
            let high = all.isEmpty ? 0 : Int.random(in: low...all.count, using: &random)
            var forward: [ObjectKey] = [], backward: [ObjectKey] = []
            tree.forEach(in: low..<high) { forward.append($0.id); return true }
            tree.forEach(in: low..<high, reversed: true) { backward.append($0.id); return true }
            #expect(forward == Array(all[low..<high]))
            #expect(backward == Array(all[low..<high].reversed()))
        }
    }

    @Test func sortedBuildEqualsInsertions() {
        var random = SplitMix64(seed: 7)
        let entries = (0..<500).map { Self.entry($0, Int.random(in: 0..<20, using: &random)) }
            .sorted { IndexTree.Entry.compare($0, $1) < 0 }
        let built = IndexTree(sorted: entries)
        var inserted = IndexTree()
        for entry in entries.shuffled(using: &random) { inserted.insert(entry) }
        built.checkInvariants()
        inserted.checkInvariants()
        #expect(built.entries.map(\.id) == inserted.entries.map(\.id))
        #expect(built.count == 500 && inserted.count == 500)
        // A sorted build is perfectly balanced: its middle entry at the root, 9 levels for 500.
        #expect(built.root?.entry.id == entries[250].id)
        #expect(built.depths().maximum == 9)
    }

    @Test func unionEqualsInsertionsAndKeepsBothOperands() async {
        await propertyCheck(count: 40, input: Gen<UInt64>.bitSet) { seed in
            var random = SplitMix64(seed: seed)
            let ids = Array(0..<Int.random(in: 0..<400, using: &random)).shuffled(using: &random)
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
            #expect(union.entries.map(\.id) == inserted.entries.map(\.id))
            #expect(union.count == inserted.count)
            #expect(base.entries.map(\.id) == baseIDs)
            #expect(batch.entries.map(\.id) == batchIDs)
        }
    }

    @Test func walkStopsWhenAsked() {
        let tree = IndexTree(sorted: (0..<100).map { Self.entry($0, $0) })
        var seen = 0
        tree.forEach(in: 0..<100, reversed: true) { _ in
            seen += 1
            return seen < 20
        }
        #expect(seen == 20)
    }
}
