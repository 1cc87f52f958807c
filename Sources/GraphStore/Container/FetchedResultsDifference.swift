/// How one list of fetched results became the next: the offsets an animated list removes,
/// inserts, moves and reloads, as `NSFetchedResultsController`'s delegate reports them.
///
/// Objects are told apart by id. Offsets follow the convention of batch updates in UIKit and
/// AppKit (`performBatchUpdates`): ``removed`` and the `from` of each ``moved`` are offsets in
/// the old results; ``inserted``, the `to` of each move and ``updated`` are offsets in the new
/// ones. Removing every removed and moved-from element of the old results, then inserting
/// every inserted and moved-to element of the new results at its offset, in ascending order,
/// gives the new results.
///
/// ```swift
/// for try await change in container.observeChanges(newest) {
///     tableView.performBatchUpdates {
///         posts = change.objects
///         tableView.deleteRows(at: change.difference.removed.map { IndexPath(row: $0, section: 0) }, with: .fade)
///         tableView.insertRows(at: change.difference.inserted.map { IndexPath(row: $0, section: 0) }, with: .fade)
///         for move in change.difference.moved {
///             tableView.moveRow(at: IndexPath(row: move.from, section: 0), to: IndexPath(row: move.to, section: 0))
///         }
///     }
///     tableView.reconfigureRows(at: change.difference.updated.map { IndexPath(row: $0, section: 0) })
/// }
/// ```
public struct FetchedResultsDifference: Hashable, Sendable {
    /// An object that changed place: it was at offset `from` in the old results and is at `to`
    /// in the new ones.
    public struct Move: Hashable, Sendable {
        /// The object's offset in the old results.
        public let from: Int
        /// The object's offset in the new results.
        public let to: Int

        /// A move from offset `from` in the old results to offset `to` in the new ones.
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// Offsets in the old results of the objects that left them, ascending.
    public let removed: [Int]
    /// Offsets in the new results of the objects that joined them, ascending.
    public let inserted: [Int]
    /// The objects that are in both results but changed place relative to the others,
    /// ascending by ``Move/to``. Their values may have changed too: read them from the new
    /// results.
    public let moved: [Move]
    /// Offsets in the new results of the objects that kept their place (relative to the other
    /// objects that stayed) but whose stored values changed, ascending: the rows to reload, as
    /// `NSFetchedResultsChangeType.update`.
    public let updated: [Int]

    /// A difference with the given offsets. GraphStore computes differences for you (see
    /// ``GraphContainer/observeChanges(_:)``); this initializer is for tests and previews.
    public init(removed: [Int] = [], inserted: [Int] = [], moved: [Move] = [], updated: [Int] = []) {
        self.removed = removed
        self.inserted = inserted
        self.moved = moved
        self.updated = updated
    }

    /// Whether nothing was removed, inserted, moved or updated.
    public var isEmpty: Bool {
        removed.isEmpty && inserted.isEmpty && moved.isEmpty && updated.isEmpty
    }
}

// MARK: - Computing a difference

extension FetchedResultsDifference {
    /// The difference from `old` to `new`, two lists of distinct keys; `isUpdated(from, to)`
    /// says whether the object at `old[from]`, also at `new[to]`, changed its values.
    ///
    /// Objects in both lists that keep their relative order stay; the others are moved. The
    /// stayers are chosen in one merge-like pass over the common objects in old and new
    /// order: where the two disagree, the object that jumped further is moved (on a tie, the one
    /// whose values changed). A single object
    /// moved (among any insertions and removals) is reported as at most one move; an arbitrary
    /// shuffle may be reported with more moves than the fewest possible (finding those is a
    /// longest increasing subsequence, O(n log n)), never with an invalid difference.
    ///
    /// - Complexity: O(old.count + new.count) expected (two dictionaries keyed by id), whatever
    ///   the number of changes; unlike `CollectionDifference`, which is O(n × d) for d changes.
    init<Key: Hashable>(from old: [Key], to new: [Key], isUpdated: (_ from: Int, _ to: Int) -> Bool) {
        var newOffsets = [Key: Int](minimumCapacity: new.count)
        for (offset, key) in new.enumerated() { newOffsets[key] = offset }
        assert(newOffsets.count == new.count, "keys in results are distinct")

        // The common objects, by their rank among the common objects of each list.
        var removed: [Int] = []
        var commonOldOffsets: [Int] = []            // old rank → old offset
        var oldRanks = [Key: Int](minimumCapacity: old.count)
        for (offset, key) in old.enumerated() {
            if newOffsets[key] == nil {
                removed.append(offset)
            } else {
                oldRanks[key] = commonOldOffsets.count
                commonOldOffsets.append(offset)
            }
        }
        assert(oldRanks.count + removed.count == old.count, "keys in results are distinct")
        var inserted: [Int] = []
        var commonNewOffsets: [Int] = []            // new rank → new offset
        var oldRankAtNewRank: [Int] = []            // new rank → old rank
        for (offset, key) in new.enumerated() {
            if let rank = oldRanks[key] {
                commonNewOffsets.append(offset)
                oldRankAtNewRank.append(rank)
            } else {
                inserted.append(offset)
            }
        }
        let count = commonOldOffsets.count
        var newRankAtOldRank = [Int](repeating: 0, count: count)
        for (newRank, oldRank) in oldRankAtNewRank.enumerated() { newRankAtOldRank[oldRank] = newRank }

        // One pass with a cursor in each order. Every common object before a cursor has been
        // matched (it stays) or marked moved, so the stayers keep their order in both lists.
        var isMoved = [Bool](repeating: false, count: count)   // by old rank
        var oldRank = 0, newRank = 0
        func isChanged(_ rank: Int) -> Bool {
            isUpdated(commonOldOffsets[rank], commonNewOffsets[newRankAtOldRank[rank]])
        }
        /// Whether the object next in the new order (old rank `candidate`) is the one that
        /// moved, rather than the object next in the old order: it comes from further ahead in
        /// the old order than the other goes in the new one; on a tie (two neighbours
        /// swapped), it is the one whose values changed, as when an edit moved it.
        func movesBack(_ candidate: Int) -> Bool {
            let ahead = candidate - oldRank, behind = newRankAtOldRank[oldRank] - newRank
            return ahead > behind || (ahead == behind && isChanged(candidate) && !isChanged(oldRank))
        }
        while oldRank < count, newRank < count {
            if isMoved[oldRank] {
                oldRank += 1
                continue
            }
            let candidate = oldRankAtNewRank[newRank]
            if isMoved[candidate] {
                newRank += 1
            } else if candidate == oldRank {
                oldRank += 1
                newRank += 1
            } else if movesBack(candidate) {
                isMoved[candidate] = true
                newRank += 1
            } else {
                isMoved[oldRank] = true
                oldRank += 1
            }
        }
        // When one cursor reaches the end, every object the other has not passed was marked.

        var moved: [Move] = []
        var updated: [Int] = []
        for (newRank, oldRank) in oldRankAtNewRank.enumerated() {
            let from = commonOldOffsets[oldRank], to = commonNewOffsets[newRank]
            if isMoved[oldRank] {
                moved.append(Move(from: from, to: to))
            } else if isUpdated(from, to) {
                updated.append(to)
            }
        }
        self.init(removed: removed, inserted: inserted, moved: moved, updated: updated)
    }

    /// The difference from no results to `count` results: every offset inserted.
    init(insertingAll count: Int) {
        self.init(inserted: Array(0..<count))
    }
}
