import Foundation
import PropertyBased
import Testing

@testable import GraphStore
import GraphStoreTestSupport

/// ``IndexTree/move(id:from:to:)``, the one-walk remove and insert a commit uses for a changed
/// object: random moves, near and far, against a sorted array and against a remove followed by
/// an insert, with every invariant checked and old versions left untouched.
@Suite struct IndexTreeMoveTests {
    static func entry(_ id: Int, _ value: Int?) -> IndexTree.Entry {
        IndexTree.Entry(key: key(value), id: ObjectKey(id))
    }

    static func key(_ value: Int?) -> IndexKey { IndexKey([IndexValue(value)]) }

    static func sortedIDs(_ model: [Int: Int?]) -> [Int] {
        model.sorted { a, b in
            switch (a.value, b.value) {
            case (nil, nil): return a.key < b.key
            case (nil, _): return true
            case (_, nil): return false
            case (let x?, let y?): return x != y ? x < y : a.key < b.key
            }
        }.map(\.key)
    }

    static func checkRandomMoves(seed: UInt64, maximumSize: Int, steps: Int, checkEvery: Int) {
        var random = SplitMix64(seed: seed)
        let size = Int.random(in: 0..<maximumSize, using: &random)
        // Values far apart, so that a move by one passes no other entry, and close, so that
        // a move passes many.
        let spread = Bool.random(using: &random) ? 10 : 100_000
        var model: [Int: Int?] = [:]
        var entries: [IndexTree.Entry] = []
        for id in 0..<size {
            let value: Int? = id % 9 == 0 ? nil : Int.random(in: 0..<spread, using: &random) * 3
            model[id] = .some(value)
            entries.append(Self.entry(id, value))
        }
        // Half the trees start packed from a sorted build, half from inserts.
        var tree = IndexTree()
        if Bool.random(using: &random) {
            tree = IndexTree(sorted: entries.sorted { IndexTree.Entry.compare($0, $1) < 0 })
        } else {
            for entry in entries { tree.insert(entry) }
        }
        var snapshots: [(IndexTree, [Int])] = []
        for step in 0..<steps where size > 0 {
            let id = Int.random(in: 0..<size, using: &random)
            let old = model[id]!
            let new: Int?
            switch Int.random(in: 0..<4, using: &random) {
            case 0: new = nil
            case 1: new = (old ?? 0) + 1
            case 2: new = (old ?? 0) - 1
            default: new = Int.random(in: 0..<spread, using: &random) * 3
            }
            if old == new { continue }
            let check = step % checkEvery == 0
            var expected = tree
            if check {
                expected.remove(Self.entry(id, old))
                expected.insert(Self.entry(id, new))
            }
            let before = check ? (tree, IndexTreeTests.ids(tree)) : nil
            let moved = tree.move(id: ObjectKey(id), from: Self.key(old), to: Self.key(new))
            #expect(moved)
            model[id] = .some(new)
            if check, let before {
                tree.checkInvariants()
                #expect(tree.count == size)
                #expect(IndexTreeTests.ids(tree) == IndexTreeTests.ids(expected), "a move equals a remove and an insert")
                #expect(IndexTreeTests.ids(before.0) == before.1, "the version moved from is unchanged")
                before.0.checkInvariants()
                snapshots.append((tree, Self.sortedIDs(model)))
            }
        }
        tree.checkInvariants()
        #expect(tree.height <= IndexTreeTests.maximumHeight(tree.count))
        #expect(IndexTreeTests.ids(tree) == Self.sortedIDs(model))
        #expect(tree.count == model.count)
        for (old, ids) in snapshots {
            old.checkInvariants()
            #expect(IndexTreeTests.ids(old) == ids)
        }
    }

    @Test func randomMovesMatchRemoveAndInsertAndKeepOldVersions() async {
        await propertyCheck(count: 60, input: Gen<UInt64>.bitSet) { seed in
            Self.checkRandomMoves(seed: seed, maximumSize: 200, steps: 150, checkEvery: 1)
        }
    }

    /// Trees of several levels, where a move may leave one leaf for another under a different
    /// inner node, splitting and merging on the way.
    @Test func randomMovesInDeepTrees() {
        for seed in 1...6 as ClosedRange<UInt64> {
            Self.checkRandomMoves(seed: seed, maximumSize: 8_000, steps: 6_000, checkEvery: 500)
        }
    }

    @Test func movingAnAbsentEntryChangesNothing() {
        for size in [50, 3_000] {
            var tree = IndexTree(sorted: (0..<size).map { Self.entry($0, $0 * 2) })
            let ids = IndexTreeTests.ids(tree)
            let wrongKey = tree.move(id: ObjectKey(7), from: Self.key(15), to: Self.key(3))
            #expect(!wrongKey, "id 7 is at 14")
            let absentID = tree.move(id: ObjectKey(size + 20), from: Self.key(140), to: Self.key(1))
            #expect(!absentID, "no such id")
            tree.checkInvariants()
            #expect(tree.count == size)
            #expect(IndexTreeTests.ids(tree) == ids)
        }
        var empty = IndexTree()
        let fromEmpty = empty.move(id: ObjectKey(1), from: Self.key(1), to: Self.key(2))
        #expect(!fromEmpty)
        #expect(empty.isEmpty)
    }

    @Test func movesToEitherEndAndPastEveryEntry() {
        for size in [64, 2_000] {
            var tree = IndexTree(sorted: (0..<size).map { Self.entry($0, $0) })
            var model: [Int: Int?] = Dictionary(uniqueKeysWithValues: (0..<size).map { ($0, .some($0)) })
            let last = size - 1
            for (id, value) in [(0, 100_000), (last, -1), (size / 2, nil), (0, size / 2 - 1), (5, 500_000), (last, size), (1, -5), (2, -6)] as [(Int, Int?)] {
                let moved = tree.move(id: ObjectKey(id), from: Self.key(model[id]!), to: Self.key(value))
                #expect(moved)
                model[id] = .some(value)
                tree.checkInvariants()
                #expect(IndexTreeTests.ids(tree) == Self.sortedIDs(model))
                #expect(tree.rank(of: [.null], orEqual: true) == model.values.filter { $0 == nil }.count)
            }
        }
    }
}
