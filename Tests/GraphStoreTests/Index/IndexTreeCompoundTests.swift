import Foundation
import PropertyBased
import Testing

@testable import GraphStore
import GraphStoreTestSupport

/// A compound index in the sorted-index tree: keys of a string and an optional integer, compared by the
/// node on its parts in place (its first value, then its further values, then the id).
/// Random inserts, removals and moves against a sorted array, ranks of one- and two-value
/// prefixes, and old versions left untouched.
@Suite struct IndexTreeCompoundTests {
    struct Row: Hashable {
        var name: String
        var number: Int?
    }

    static func key(_ row: Row) -> IndexKey {
        IndexKey([IndexValue(row.name), row.number.map { IndexValue($0) } ?? .null])
    }

    static func precedes(_ a: (id: Int, row: Row), _ b: (id: Int, row: Row)) -> Bool {
        if a.row.name != b.row.name { return a.row.name < b.row.name }
        switch (a.row.number, b.row.number) {
        case (nil, nil): break
        case (nil, _): return true
        case (_, nil): return false
        case (let x?, let y?): if x != y { return x < y }
        }
        return a.id < b.id
    }

    static func ids(_ tree: IndexTree) -> [Int] { tree.entries.map { $0.id.value(as: Int.self)! } }

    static func randomRow(_ random: inout SplitMix64) -> Row {
        // Short and long names (a long one is stored out of line), few of them, so that
        // equal first values are common and the second value decides.
        let names = ["a", "b", "blog with a name longer than fifteen bytes", "é"]
        let number: Int? = Int.random(in: 0..<6, using: &random) == 0 ? nil : Int.random(in: -3..<4, using: &random)
        return Row(name: names[Int.random(in: 0..<names.count, using: &random)], number: number)
    }

    @Test func randomChangesMatchSortedModel() async {
        await propertyCheck(count: 50, input: Gen<UInt64>.bitSet) { seed in
            var random = SplitMix64(seed: seed)
            var tree = IndexTree()
            var model: [Int: Row] = [:]
            var snapshots: [(IndexTree, [Int])] = []
            for step in 0..<250 {
                let id = Int.random(in: 0..<80, using: &random)
                let row = Self.randomRow(&random)
                if let old = model[id] {
                    if Bool.random(using: &random) {
                        let moved = tree.move(id: ObjectKey(id), from: Self.key(old), to: Self.key(row))
                        #expect(moved)
                        model[id] = row
                    } else {
                        let removed = tree.remove(key: Self.key(old), id: ObjectKey(id))
                        #expect(removed)
                        model[id] = nil
                    }
                } else {
                    tree.insert(IndexTree.Entry(key: Self.key(row), id: ObjectKey(id)))
                    model[id] = row
                }
                if step % 40 == 0 { snapshots.append((tree, Self.ids(tree))) }
            }
            tree.checkInvariants()
            let expected = model.map { (id: $0.key, row: $0.value) }.sorted(by: Self.precedes).map(\.id)
            #expect(Self.ids(tree) == expected)
            #expect(tree.count == model.count)
            for name in ["", "a", "b", "blog with a name longer than fifteen bytes", "c", "é"] {
                let below = model.values.filter { $0.name < name }.count
                let upTo = model.values.filter { $0.name <= name }.count
                #expect(tree.rank(of: [IndexValue(name)], orEqual: false) == below)
                #expect(tree.rank(of: [IndexValue(name)], orEqual: true) == upTo)
                for number in -4..<5 {
                    let before = model.values.filter { $0.name < name || ($0.name == name && ($0.number ?? .min) < number) }.count
                    #expect(tree.rank(of: [IndexValue(name), IndexValue(number)], orEqual: false) == before)
                }
            }
            for (old, ids) in snapshots {
                old.checkInvariants()
                #expect(Self.ids(old) == ids)
            }
        }
    }
}
