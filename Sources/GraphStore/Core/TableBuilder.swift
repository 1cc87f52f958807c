import Foundation
import HashTreeCollections

/// Builds a new entity table from a large batch of logged upserts on two threads.
///
/// A hash trie puts a key under the root slot its hash's lowest bits name, so keys whose hash
/// differs in one of those bits never share a subtree. Each thread builds the trie of one half
/// of the keys, split on that bit; merging the two tries then only joins two roots, without
/// visiting any object. If the trie's layout ever changed, the merge would still be correct,
/// just no longer nearly free.
enum TableBuilder {
    /// The fewest changes worth a second thread: below this the hand-over costs more than it
    /// saves.
    static let parallelThreshold = 16_384

    /// The table holding the last upsert of each id in `entries`, every object at `version`,
    /// and the ids in order of first change.
    ///
    /// - Precondition: every entry is an upsert.
    /// - Complexity: O(k log k) for k entries, spread over two threads.
    static func build(
        _ entries: [PendingLog.Entry], version: UInt64
    ) -> (table: TreeDictionary<ObjectKey, StoredObject>, inserted: [ObjectKey]) {
        let count = entries.count
        // Per half: its table, and the indexes of the entries that first named an id, ascending.
        let halves = Guarded<[(TreeDictionary<ObjectKey, StoredObject>, [Int])]>([([:], []), ([:], [])])
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            var table = TreeDictionary<ObjectKey, StoredObject>()
            var firsts: [Int] = []
            firsts.reserveCapacity(count / 2 + count / 8)
            let bit = half == 0 ? 0 : rootSplitBit
            for index in 0..<count where entries[index].key._rawHashValue(seed: 0) & rootSplitBit == bit {
                guard case .upsert(let value) = entries[index].kind else { preconditionFailure("a built change is an upsert") }
                if table.updateValue(StoredObject(value: value, version: version), forKey: entries[index].key) == nil {
                    firsts.append(index)
                }
            }
            halves.withLock { $0[half] = (table, firsts) }
        }
        let ((first, firstIndexes), (second, secondIndexes)) = halves.withLock { halves in
            defer { halves = [] }
            return (halves[0], halves[1])
        }
        var table = first
        table.merge(second) { _, new in new }
        // The two ascending index lists, merged: ids in order of first change.
        var inserted: [ObjectKey] = []
        inserted.reserveCapacity(firstIndexes.count + secondIndexes.count)
        var i = 0, j = 0
        while i < firstIndexes.count || j < secondIndexes.count {
            if j == secondIndexes.count || (i < firstIndexes.count && firstIndexes[i] < secondIndexes[j]) {
                inserted.append(entries[firstIndexes[i]].key)
                i += 1
            } else {
                inserted.append(entries[secondIndexes[j]].key)
                j += 1
            }
        }
        return (table, inserted)
    }

    /// Which half of a table split on ``rootSplitBit`` holds `key`: 0 or 1.
    static func half(of key: ObjectKey) -> Int {
        key._rawHashValue(seed: 0) & rootSplitBit == 0 ? 0 : 1
    }

    /// The hash bit that splits the root's 32 slots into two halves.
    private static let rootSplitBit = 1 << 4
}
