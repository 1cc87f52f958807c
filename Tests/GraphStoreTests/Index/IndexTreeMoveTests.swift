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

    /// The tree's shape as a preorder list of ids with their subtree counts.
    static func shape(_ tree: IndexTree) -> [String] {
        var result: [String] = []
        func visit(_ node: IndexTree.Node?) {
            guard let node else { return result.append("-") }
            result.append("\(node.entry.id):\(node.count)")
            visit(node.left)
            visit(node.right)
        }
        visit(tree.root)
        return result
    }

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

    @Test func randomMovesMatchRemoveAndInsertAndKeepOldVersions() async {
        await propertyCheck(count: 60, input: Gen<UInt64>.bitSet) { seed in
            var random = SplitMix64(seed: seed)
            let size = Int.random(in: 0..<200, using: &random)
            // Values far apart, so that a move by one passes no other entry, and close, so that
            // a move passes many.
            let spread = Bool.random(using: &random) ? 10 : 100_000
            var model: [Int: Int?] = [:]
            var tree = IndexTree()
            for id in 0..<size {
                let value: Int? = id % 9 == 0 ? nil : Int.random(in: 0..<spread, using: &random) * 3
                model[id] = .some(value)
                tree.insert(Self.entry(id, value))
            }
            var snapshots: [(IndexTree, [Int], [String])] = []
            for step in 0..<150 where size > 0 {
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
                var expected = tree
                expected.remove(Self.entry(id, old))
                expected.insert(Self.entry(id, new))
                let before = (tree, Self.shape(tree))
                let moved = tree.move(id: ObjectKey(id), from: Self.key(old), to: Self.key(new))
                #expect(moved)
                model[id] = .some(new)
                tree.checkInvariants()
                expected.checkInvariants()
                #expect(tree.entries.map(\.id) == expected.entries.map(\.id), "a move is a remove and an insert")
                #expect(Self.shape(before.0) == before.1, "the version moved from is unchanged")
                if step % 30 == 0 { snapshots.append((tree, Self.sortedIDs(model), Self.shape(tree))) }
            }
            #expect(tree.entries.map { $0.id.value(as: Int.self)! } == Self.sortedIDs(model))
            #expect(tree.count == model.count)
            for (old, ids, shape) in snapshots {
                old.checkInvariants()
                #expect(old.entries.map { $0.id.value(as: Int.self)! } == ids)
                #expect(Self.shape(old) == shape)
            }
        }
    }

    @Test func movingAnAbsentEntryChangesNothing() {
        var tree = IndexTree(sorted: (0..<50).map { Self.entry($0, $0 * 2) })
        let shape = Self.shape(tree)
        let wrongKey = tree.move(id: ObjectKey(7), from: Self.key(15), to: Self.key(3))
        #expect(!wrongKey, "id 7 is at 14")
        let absentID = tree.move(id: ObjectKey(70), from: Self.key(140), to: Self.key(1))
        #expect(!absentID, "no id 70")
        #expect(Self.shape(tree) == shape)
        var empty = IndexTree()
        let fromEmpty = empty.move(id: ObjectKey(1), from: Self.key(1), to: Self.key(2))
        #expect(!fromEmpty)
        #expect(empty.isEmpty)
    }

    @Test func movesToEitherEndAndPastEveryEntry() {
        var tree = IndexTree(sorted: (0..<64).map { Self.entry($0, $0) })
        var model: [Int: Int?] = Dictionary(uniqueKeysWithValues: (0..<64).map { ($0, .some($0)) })
        for (id, value) in [(0, 1_000), (63, -1), (32, nil), (0, 31), (5, 5_000), (63, 64)] as [(Int, Int?)] {
            let moved = tree.move(id: ObjectKey(id), from: Self.key(model[id]!), to: Self.key(value))
            #expect(moved)
            model[id] = .some(value)
            tree.checkInvariants()
            #expect(tree.entries.map { $0.id.value(as: Int.self)! } == Self.sortedIDs(model))
        }
    }
}
