import PropertyBased
import Testing

@testable import GraphStore

/// `FetchedResultsDifference`'s id-keyed diff: applying it to the old results gives the new
/// results, for random lists, and a single move is reported as at most one move.
@Suite struct FetchedResultsDifferenceTests {
    /// An element of a list: an id and the version of its values.
    struct Row: Hashable {
        var id: Int
        var version: Int
    }

    enum Edit {
        case remove(Int), insert(Int, at: Int), move(Int, to: Int), update(Int)
    }

    static let ids = Gen<Int>.int(in: 0...24).array(of: 0...20).map { distinct($0) }
    static let edit = Gen<Edit>.frequency(
        (weight: 1, gen: Gen<Int>.int(in: 0...30).map { Edit.remove($0) }),
        (weight: 1, gen: zip(Gen<Int>.int(in: 25...60), Gen<Int>.int(in: 0...30)).map { Edit.insert($0, at: $1) }),
        (weight: 2, gen: zip(Gen<Int>.int(in: 0...30), Gen<Int>.int(in: 0...30)).map { Edit.move($0, to: $1) }),
        (weight: 1, gen: Gen<Int>.int(in: 0...30).map { Edit.update($0) }))

    static func distinct(_ ids: [Int]) -> [Int] {
        var seen = Set<Int>()
        return ids.filter { seen.insert($0).inserted }
    }

    static func rows(_ ids: [Int]) -> [Row] {
        ids.map { Row(id: $0, version: 1) }
    }

    /// `old` with `edits` applied at offsets taken modulo the list's length.
    static func edited(_ old: [Row], _ edits: [Edit]) -> [Row] {
        var rows = old
        for edit in edits {
            switch edit {
            case .remove(let offset) where !rows.isEmpty:
                rows.remove(at: offset % rows.count)
            case .insert(let id, let offset) where !rows.contains { $0.id == id }:
                rows.insert(Row(id: id, version: 1), at: offset % (rows.count + 1))
            case .move(let from, let to) where !rows.isEmpty:
                let row = rows.remove(at: from % rows.count)
                rows.insert(row, at: to % (rows.count + 1))
            case .update(let offset) where !rows.isEmpty:
                rows[offset % rows.count].version += 1
            default:
                break
            }
        }
        return rows
    }

    static func difference(_ old: [Row], _ new: [Row]) -> FetchedResultsDifference {
        FetchedResultsDifference(from: old.map(\.id), to: new.map(\.id)) { from, to in old[from].version != new[to].version }
    }

    /// Removes every removed and moved-from element of `old`, then inserts every inserted and
    /// moved-to element of `new` in ascending order of offset, as a table view's batch update
    /// does, then reloads the updated ones from `new`. Rows compare by id and version, so a
    /// stayer whose new version was not reloaded is a difference.
    static func apply(_ difference: FetchedResultsDifference, to old: [Row], taking new: [Row]) -> [Row] {
        let gone = Set(difference.removed).union(difference.moved.map(\.from))
        var rows = old.indices.filter { !gone.contains($0) }.map { old[$0] }
        for offset in (difference.inserted + difference.moved.map(\.to)).sorted() {
            rows.insert(new[offset], at: offset)
        }
        for offset in difference.updated { rows[offset] = new[offset] }
        return rows
    }

    /// Every property a difference must have, checked against the lists it was computed from.
    static func check(_ difference: FetchedResultsDifference, _ old: [Row], _ new: [Row]) {
        #expect(apply(difference, to: old, taking: new) == new, "\(old.map(\.id)) → \(new.map(\.id)): \(difference)")
        #expect(difference.removed == difference.removed.sorted() && Set(difference.removed).count == difference.removed.count)
        #expect(difference.inserted == difference.inserted.sorted() && Set(difference.inserted).count == difference.inserted.count)
        #expect(difference.moved.map(\.to) == difference.moved.map(\.to).sorted())
        #expect(difference.updated == difference.updated.sorted())
        let oldIDs = Set(old.map(\.id)), newIDs = Set(new.map(\.id))
        #expect(Set(difference.removed.map { old[$0].id }) == oldIDs.subtracting(newIDs))
        #expect(Set(difference.inserted.map { new[$0].id }) == newIDs.subtracting(oldIDs))
        for move in difference.moved { #expect(old[move.from].id == new[move.to].id) }
        // Updated: exactly the objects that stayed (not moved) and changed version.
        let movedIDs = Set(difference.moved.map { new[$0.to].id })
        let versions = Dictionary(uniqueKeysWithValues: old.map { ($0.id, $0.version) })
        let changedStayers = new.indices.filter { offset in
            let row = new[offset]
            return versions[row.id].map { $0 != row.version } == true && !movedIDs.contains(row.id)
        }
        #expect(difference.updated == changedStayers)
    }

    @Test func applyingTheDifferenceToUnrelatedListsGivesTheNewList() async {
        await propertyCheck(count: 400, input: Self.ids, Self.ids) { oldIDs, newIDs in
            let old = Self.rows(oldIDs), new = Self.rows(newIDs)
            Self.check(Self.difference(old, new), old, new)
        }
    }

    @Test func applyingTheDifferenceToAnEditedListGivesTheNewList() async {
        await propertyCheck(count: 400, input: Self.ids, Self.edit.array(of: 0...8)) { oldIDs, edits in
            let old = Self.rows(oldIDs)
            let new = Self.edited(old, edits)
            Self.check(Self.difference(old, new), old, new)
        }
    }

    @Test func oneMoveAmongInsertionsAndRemovalsIsAtMostOneMove() async {
        let others = Gen<Edit>.frequency(
            (weight: 1, gen: Gen<Int>.int(in: 0...30).map { Edit.remove($0) }),
            (weight: 1, gen: zip(Gen<Int>.int(in: 25...60), Gen<Int>.int(in: 0...30)).map { Edit.insert($0, at: $1) }),
            (weight: 1, gen: Gen<Int>.int(in: 0...30).map { Edit.update($0) }))
        let move = zip(Gen<Int>.int(in: 0...30), Gen<Int>.int(in: 0...30)).map { Edit.move($0, to: $1) }
        await propertyCheck(count: 400, input: Self.ids, others.array(of: 0...6), move) { oldIDs, edits, move in
            let old = Self.rows(oldIDs)
            let new = Self.edited(old, edits + [move])
            let difference = Self.difference(old, new)
            Self.check(difference, old, new)
            #expect(difference.moved.count <= 1, "\(old.map(\.id)) → \(new.map(\.id)): \(difference.moved)")
        }
    }

    @Test func examples() {
        let a = Self.rows([1, 2, 3, 4, 5])
        // The last object to the front: one move, not five.
        #expect(Self.difference(a, Self.rows([5, 1, 2, 3, 4])) == FetchedResultsDifference(moved: [.init(from: 4, to: 0)]))
        #expect(Self.difference(a, Self.rows([2, 3, 4, 5, 1])) == FetchedResultsDifference(moved: [.init(from: 0, to: 4)]))
        // A block swap moves the shorter block.
        #expect(Self.difference(a, Self.rows([3, 4, 5, 1, 2])).moved.count == 2)
        // Insert at the front, remove at the end, update in the middle: no move.
        var changed = Self.rows([0, 1, 2, 3, 4])
        changed[3].version = 2
        #expect(Self.difference(a, changed) == FetchedResultsDifference(removed: [4], inserted: [0], updated: [3]))
        #expect(Self.difference([], a) == FetchedResultsDifference(inserted: [0, 1, 2, 3, 4]))
        #expect(Self.difference(a, []) == FetchedResultsDifference(removed: [0, 1, 2, 3, 4]))
        #expect(Self.difference(a, a).isEmpty)
    }
}
