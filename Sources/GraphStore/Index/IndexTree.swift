import CZlib

/// A persistent, structurally shared sorted multiset of index entries: a weight-balanced tree
/// with subtree counts (an order-statistic tree), balanced as Adams' trees (Haskell's
/// `Data.Map`) by the counts its nodes keep anyway.
///
/// Nodes are immutable and shared between versions; an insert or remove copies only the path
/// it walks, so keeping a version is O(1) and a change is O(log n) worst case. Neither subtree
/// of a node weighs more than ``delta`` times the other (a subtree of c entries weighs c + 1),
/// so a tree of n entries is at most log₄⁄₃(n + 1) levels deep, and about log₂ n on average
/// whatever the order of the inserts: dates inserted in order, the common case, give a
/// balanced tree too. Entries are ordered by key, then by id
/// (``ObjectKey/indexOrder(_:_:)``), so no two compare equal.
struct IndexTree: Sendable {
    /// One object's place in an index: its indexed values and its id. The object itself is
    /// read from the table of the same version, so a commit that changes no indexed value of an
    /// object leaves every index as it was, and a node stays small (96 bytes as allocated for
    /// the common key types).
    ///
    /// Held inline in its node, so that a walk down a path reads one object per level: the
    /// walk that finds the entry to remove reads a path of nodes that are mostly not in the
    /// cache, and a second object per level doubled those misses.
    struct Entry: Sendable {
        let key: IndexKey
        let id: ObjectKey

        static func compare(_ a: Entry, _ b: Entry) -> Int {
            let order = IndexKey.compare(a.key, b.key)
            return order != 0 ? order : ObjectKey.indexOrder(a.id, b.id)
        }
    }

    /// A node: one entry, its subtree count, its left subtree's count and its children.
    ///
    /// The entry is held as its parts so that the two 32-bit counts sit in the padding after
    /// the key's first value and after the id: 88 bytes laid out, 96 as allocated. The left
    /// subtree's count is kept beside the node's own so that both children's counts are read
    /// from the node: the balance checks of a path copy and the rank walks read no child off
    /// the path, which is usually not in the cache.
    final class Node: Sendable {
        /// The key's first value.
        let first: IndexValue
        private let storedLeftCount: UInt32
        let id: ObjectKey
        private let storedCount: UInt32
        /// The key's further values (a compound index).
        let rest: [IndexValue]
        let left: Node?
        let right: Node?

        /// The number of entries in this node's subtree.
        var count: Int { Int(storedCount) }
        /// The number of entries in the left subtree.
        var leftCount: Int { Int(storedLeftCount) }
        /// The number of entries in the right subtree.
        var rightCount: Int { count - 1 - leftCount }
        var key: IndexKey { IndexKey(first: first, rest: rest) }
        var entry: Entry { Entry(key: key, id: id) }

        private init(first: IndexValue, rest: [IndexValue], id: ObjectKey, left: Node?, leftCount: Int, right: Node?, rightCount: Int) {
            self.first = first
            self.rest = rest
            self.id = id
            self.left = left
            self.right = right
            let count = 1 + leftCount + rightCount
            precondition(count <= Int(UInt32.max), "IndexTree: more than \(UInt32.max) entries")
            storedLeftCount = UInt32(truncatingIfNeeded: leftCount)
            storedCount = UInt32(truncatingIfNeeded: count)
        }

        /// A node of `entry` over `left` and `right`, whose counts the caller knows (so that
        /// building it reads neither child).
        convenience init(_ entry: Entry, left: Node?, leftCount: Int, right: Node?, rightCount: Int) {
            self.init(first: entry.key.first, rest: entry.key.rest, id: entry.id, left: left, leftCount: leftCount, right: right, rightCount: rightCount)
        }

        /// A leaf of `entry`.
        convenience init(_ entry: Entry) {
            self.init(entry, left: nil, leftCount: 0, right: nil, rightCount: 0)
        }

        /// A node of this node's entry over `left` and `right` of the given counts.
        @inline(__always)
        func with(left: Node?, _ leftCount: Int, right: Node?, _ rightCount: Int) -> Node {
            Node(first: first, rest: rest, id: id, left: left, leftCount: leftCount, right: right, rightCount: rightCount)
        }

        /// The order of the entry `first`/`rest`/`id` against this node's (negative: before
        /// it), reading the node's parts in place.
        @inline(__always)
        private func order(of first: IndexValue, _ rest: [IndexValue], _ id: ObjectKey) -> Int {
            var order = IndexValue.compare(first, self.first)
            if order == 0, !rest.isEmpty {
                for position in rest.indices {
                    order = IndexValue.compare(rest[position], self.rest[position])
                    if order != 0 { break }
                }
            }
            return order != 0 ? order : ObjectKey.indexOrder(id, self.id)
        }

        /// The order of `key`/`id` against this node's entry (negative: before it).
        @inline(__always)
        func order(of key: IndexKey, id: ObjectKey) -> Int { order(of: key.first, key.rest, id) }

        /// The order of `entry` against this node's entry (negative: before it).
        @inline(__always)
        func order(of entry: Entry) -> Int { order(of: entry.key.first, entry.key.rest, entry.id) }

        /// The order of `other`'s entry against this node's (negative: before it).
        @inline(__always)
        func order(of other: Node) -> Int { order(of: other.first, other.rest, other.id) }

        /// This node's key compared on `prefix`'s length with `prefix`, as
        /// ``IndexKey/compare(prefix:)``.
        func compare(prefix: [IndexValue]) -> Int {
            guard let head = prefix.first else { return 0 }
            let order = IndexValue.compare(first, head)
            if order != 0 { return order }
            for position in 1..<min(1 + rest.count, prefix.count) {
                let order = IndexValue.compare(rest[position - 1], prefix[position])
                if order != 0 { return order }
            }
            return 0
        }
    }

    private(set) var root: Node?

    init() {}

    /// The number of entries.
    ///
    /// - Complexity: O(1).
    var count: Int { root?.count ?? 0 }
    var isEmpty: Bool { root == nil }

    // MARK: - Balance

    /// How many times a subtree may outweigh its sibling (Adams' δ).
    static var delta: Int { 3 }
    /// The weight ratio below which a rotation is single rather than double (Adams' γ).
    static var gamma: Int { 2 }

    /// Whether a subtree of `b` entries may stand beside one of `a` entries: its weight
    /// (count + 1) is at most ``delta`` times that of `a`.
    @inline(__always)
    static func isBalanced(_ a: Int, _ b: Int) -> Bool { delta * (a + 1) >= b + 1 }

    /// Whether rebalancing a heavy child with an inner subtree of `inner` entries and an outer
    /// one of `outer` takes a single rotation (the inner one is light enough to move across).
    @inline(__always)
    private static func isSingle(inner: Int, outer: Int) -> Bool { inner + 1 < gamma * (outer + 1) }

    /// A node of `top`'s entry over `left` and `right` (of the given counts), rotated once or
    /// twice if one side outweighs the other; `left` and `right` are balanced trees that were
    /// balanced beside each other before one entry came or went on one side (or one on each).
    ///
    /// Reads neither child unless it rotates.
    private static func balanced(_ top: Node, _ left: Node?, _ leftCount: Int, _ right: Node?, _ rightCount: Int) -> Node {
        if !isBalanced(leftCount, rightCount), let right {
            // The right side is too heavy: rotate left.
            if isSingle(inner: right.leftCount, outer: right.rightCount) {
                let lower = top.with(left: left, leftCount, right: right.left, right.leftCount)
                return right.with(left: lower, leftCount + right.leftCount + 1, right: right.right, right.rightCount)
            }
            let inner = right.left!
            let lower = top.with(left: left, leftCount, right: inner.left, inner.leftCount)
            let upper = right.with(left: inner.right, inner.rightCount, right: right.right, right.rightCount)
            return inner.with(left: lower, leftCount + inner.leftCount + 1, right: upper, inner.rightCount + right.rightCount + 1)
        }
        if !isBalanced(rightCount, leftCount), let left {
            // The left side is too heavy: rotate right.
            if isSingle(inner: left.rightCount, outer: left.leftCount) {
                let lower = top.with(left: left.right, left.rightCount, right: right, rightCount)
                return left.with(left: left.left, left.leftCount, right: lower, left.rightCount + rightCount + 1)
            }
            let inner = left.right!
            let lower = top.with(left: inner.right, inner.rightCount, right: right, rightCount)
            let upper = left.with(left: left.left, left.leftCount, right: inner.left, inner.leftCount)
            return inner.with(left: upper, left.leftCount + inner.leftCount + 1, right: lower, inner.rightCount + rightCount + 1)
        }
        return top.with(left: left, leftCount, right: right, rightCount)
    }

    /// A tree of `left`, `top`'s entry and `right`, whose every entry of `left` precedes
    /// `top`'s and every entry of `right` follows it, whatever their sizes (Adams' `link`).
    ///
    /// - Complexity: O(|log(leftCount / rightCount)| + 1).
    private static func linked(_ top: Node, _ left: Node?, _ leftCount: Int, _ right: Node?, _ rightCount: Int) -> Node {
        if !isBalanced(leftCount, rightCount), let right {
            let lower = linked(top, left, leftCount, right.left, right.leftCount)
            return balanced(right, lower, leftCount + right.leftCount + 1, right.right, right.rightCount)
        }
        if !isBalanced(rightCount, leftCount), let left {
            let lower = linked(top, left.right, left.rightCount, right, rightCount)
            return balanced(left, left.left, left.leftCount, lower, left.rightCount + rightCount + 1)
        }
        return top.with(left: left, leftCount, right: right, rightCount)
    }

    /// A tree of `left` and `right`, whose every entry of `left` precedes every entry of
    /// `right`, whatever their sizes (Adams' `merge`).
    private static func merged(_ left: Node?, _ leftCount: Int, _ right: Node?, _ rightCount: Int) -> Node? {
        guard let left else { return right }
        guard let right else { return left }
        if !isBalanced(leftCount, rightCount) {
            let lower = merged(left, leftCount, right.left, right.leftCount)
            return balanced(right, lower, leftCount + right.leftCount, right.right, right.rightCount)
        }
        if !isBalanced(rightCount, leftCount) {
            let lower = merged(left.right, left.rightCount, right, rightCount)
            return balanced(left, left.left, left.leftCount, lower, left.rightCount + rightCount)
        }
        return glued(left, leftCount, right, rightCount)
    }

    /// A tree of `left` and `right`, the two children of a removed node (so balanced beside
    /// each other): the last entry of the heavier one takes the removed node's place, or the
    /// first (Adams' `glue`).
    private static func glued(_ left: Node?, _ leftCount: Int, _ right: Node?, _ rightCount: Int) -> Node? {
        guard let left else { return right }
        guard let right else { return left }
        if leftCount > rightCount {
            let (last, rest) = removingLast(left)
            return balanced(last, rest, leftCount - 1, right, rightCount)
        }
        let (first, rest) = removingFirst(right)
        return balanced(first, left, leftCount, rest, rightCount - 1)
    }

    /// The node of the first entry of `node` (its children are not part of the answer), and
    /// `node` without it.
    private static func removingFirst(_ node: Node) -> (Node, Node?) {
        guard let left = node.left else { return (node, node.right) }
        let (first, rest) = removingFirst(left)
        return (first, balanced(node, rest, node.leftCount - 1, node.right, node.rightCount))
    }

    /// The node of the last entry of `node` (its children are not part of the answer), and
    /// `node` without it.
    private static func removingLast(_ node: Node) -> (Node, Node?) {
        guard let right = node.right else { return (node, node.left) }
        let (last, rest) = removingLast(right)
        return (last, balanced(node, node.left, node.leftCount, rest, node.rightCount - 1))
    }

    // MARK: - Changing

    /// Adds `entry`; an entry for the same key and id must not be present.
    ///
    /// - Complexity: O(log n).
    mutating func insert(_ entry: Entry) {
        root = Self.inserting(Node(entry), into: root)
    }

    /// Removes the entry equal to `entry` (same key and id); returns whether there was one.
    ///
    /// - Complexity: O(log n).
    @discardableResult
    mutating func remove(_ entry: Entry) -> Bool {
        remove(key: entry.key, id: entry.id)
    }

    /// Removes the entry with `key` and `id`; returns whether there was one.
    ///
    /// - Complexity: O(log n).
    @discardableResult
    mutating func remove(key: IndexKey, id: ObjectKey) -> Bool {
        var found = false
        root = Self.removing(key: key, id: id, from: root, found: &found)
        return found
    }

    /// `node` with `leaf` (a node without children) added.
    private static func inserting(_ leaf: Node, into node: Node?) -> Node {
        guard let node else { return leaf }
        if node.order(of: leaf) < 0 {
            prefetch(node.right)
            return balanced(node, inserting(leaf, into: node.left), node.leftCount + 1, node.right, node.rightCount)
        }
        prefetch(node.left)
        return balanced(node, node.left, node.leftCount, inserting(leaf, into: node.right), node.rightCount + 1)
    }

    /// Asks the processor to load `node`'s header, whose reference count the path copy above
    /// will raise: a sibling off the walked path is seldom in the cache, and its load then
    /// overlaps the walk below instead of stalling each level's copy on the way back up.
    @inline(__always)
    private static func prefetch(_ node: Node?) {
        guard let node else { return }
        graphstore_prefetch(UnsafeRawPointer(Unmanaged.passUnretained(node).toOpaque()))
    }

    /// `node` without the entry `key`/`id`; `node` itself, with `found` left as it was, when
    /// that entry is not in it.
    private static func removing(key: IndexKey, id: ObjectKey, from node: Node?, found: inout Bool) -> Node? {
        guard let node else { return nil }
        let order = node.order(of: key, id: id)
        if order == 0 {
            found = true
            return glued(node.left, node.leftCount, node.right, node.rightCount)
        }
        if order < 0 {
            prefetch(node.right)
            let left = removing(key: key, id: id, from: node.left, found: &found)
            return found ? balanced(node, left, node.leftCount - 1, node.right, node.rightCount) : node
        }
        prefetch(node.left)
        let right = removing(key: key, id: id, from: node.right, found: &found)
        return found ? balanced(node, node.left, node.leftCount, right, node.rightCount - 1) : node
    }

    /// Moves the entry for `id` from `oldKey` to `newKey`: a remove and an insert in one walk.
    /// Returns `false`, changing nothing, when there is no entry with `oldKey` and `id`; an
    /// entry with `newKey` and `id` must not be present.
    ///
    /// The two walks share the path down to the node whose entry lies between the old and the
    /// new one, which is copied once; no node above it changes its count, so none above it is
    /// rebalanced. When no other entry lies between the two, as for a date moved by a second,
    /// only the path to the entry is copied: half the nodes of a remove and an insert, and half
    /// the nodes the old version frees later.
    ///
    /// - Complexity: O(log n); O(d + log m) node copies, for d the depth of the node where the
    ///   old and the new entry part and m the entries of its subtree.
    @discardableResult
    mutating func move(id: ObjectKey, from oldKey: IndexKey, to newKey: IndexKey) -> Bool {
        guard let root else { return false }
        guard let moved = Self.moving(key: oldKey, id: id, to: Node(Entry(key: newKey, id: id)), in: root) else { return false }
        self.root = moved
        return true
    }

    /// `node` with the entry `key`/`id` replaced by the entry of `new` (a node without
    /// children), or `nil` when that entry is not in it. The two must lie within the same
    /// bounds of `node`'s ancestors.
    private static func moving(key: IndexKey, id: ObjectKey, to new: Node, in node: Node) -> Node? {
        let old = node.order(of: key, id: id)
        if old == 0 { return replacing(node, with: new) }
        let order = node.order(of: new)
        if old < 0, order < 0 {
            prefetch(node.right)
            guard let left = node.left, let moved = moving(key: key, id: id, to: new, in: left) else { return nil }
            return node.with(left: moved, node.leftCount, right: node.right, node.rightCount)
        }
        if old > 0, order >= 0 {
            prefetch(node.left)
            guard let right = node.right, let moved = moving(key: key, id: id, to: new, in: right) else { return nil }
            return node.with(left: node.left, node.leftCount, right: moved, node.rightCount)
        }
        // The walks part here: out of one side, into the other, which may leave the two sides
        // out of balance by one entry each; the subtree's count, and so every node above, stays.
        var found = false
        if old < 0 {
            let left = removing(key: key, id: id, from: node.left, found: &found)
            guard found else { return nil }
            return linked(node, left, node.leftCount - 1, inserting(new, into: node.right), node.rightCount + 1)
        }
        let right = removing(key: key, id: id, from: node.right, found: &found)
        guard found else { return nil }
        return linked(node, inserting(new, into: node.left), node.leftCount + 1, right, node.rightCount - 1)
    }

    /// `node` with its own entry replaced by `new`'s. Unless an entry of a subtree passes the
    /// new one, the shape stays; otherwise the nearest entry of that subtree takes the node's
    /// place and, within the subtree, moves to the new entry (the subtree keeps its count).
    private static func replacing(_ node: Node, with new: Node) -> Node {
        if node.order(of: new) < 0 {
            if let left = node.left {
                let last = last(left)
                if last.order(of: new) < 0, let moved = moving(key: last.key, id: last.id, to: new, in: left) {
                    return last.with(left: moved, node.leftCount, right: node.right, node.rightCount)
                }
            }
        } else if let right = node.right {
            let first = first(right)
            if first.order(of: new) > 0, let moved = moving(key: first.key, id: first.id, to: new, in: right) {
                return first.with(left: node.left, node.leftCount, right: moved, node.rightCount)
            }
        }
        return new.with(left: node.left, node.leftCount, right: node.right, node.rightCount)
    }

    private static func first(_ node: Node) -> Node {
        var node = node
        while let left = node.left { node = left }
        return node
    }

    private static func last(_ node: Node) -> Node {
        var node = node
        while let right = node.right { node = right }
        return node
    }

    /// Adds every entry of `other`, none of which may be present.
    ///
    /// Cheaper than inserting them one by one for a batch: each node of the result is built
    /// once, where k inserts copy their k paths and most of the upper nodes again and again.
    ///
    /// - Complexity: O(k log(n / k + 1)), for k entries in `other`.
    mutating func formUnion(_ other: IndexTree) {
        root = Self.union(root, other.root)
    }

    /// The entries of `a` and `b` (disjoint): `b` split at each node of `a` it reaches
    /// (Adams' divide-and-conquer union, with `a` the larger tree in practice).
    private static func union(_ a: Node?, _ b: Node?) -> Node? {
        guard let a else { return b }
        guard let b else { return a }
        let (less, lessCount, greater, greaterCount) = split(b, at: a)
        let left = union(a.left, less), right = union(a.right, greater)
        return linked(a, left, a.leftCount + lessCount, right, a.rightCount + greaterCount)
    }

    /// The entries of `node` before and after the entry of `pivot` (which it does not
    /// contain), with their counts.
    private static func split(_ node: Node?, at pivot: Node) -> (Node?, Int, Node?, Int) {
        guard let node else { return (nil, 0, nil, 0) }
        // A side that nothing was split off is the node itself, not a copy: a batch of new
        // dates, after every entry, is split at each node of the tree it joins.
        if node.order(of: pivot) < 0 {
            let (less, lessCount, greater, greaterCount) = split(node.left, at: pivot)
            if less == nil { return (nil, 0, node, node.count) }
            return (less, lessCount, linked(node, greater, greaterCount, node.right, node.rightCount), greaterCount + 1 + node.rightCount)
        }
        let (less, lessCount, greater, greaterCount) = split(node.right, at: pivot)
        if greater == nil { return (node, node.count, nil, 0) }
        return (linked(node, node.left, node.leftCount, less, lessCount), node.leftCount + 1 + lessCount, greater, greaterCount)
    }

    /// A tree of `entries`, which must be sorted and distinct: perfectly balanced (the two
    /// subtrees of each node differ by at most one entry).
    ///
    /// - Complexity: O(n).
    init(sorted entries: [Entry]) {
        func build(_ range: Range<Int>) -> Node? {
            guard !range.isEmpty else { return nil }
            let middle = range.lowerBound + range.count / 2
            return Node(entries[middle], left: build(range.lowerBound..<middle), leftCount: middle - range.lowerBound,
                        right: build((middle + 1)..<range.upperBound), rightCount: range.upperBound - middle - 1)
        }
        root = build(entries.indices)
    }

    // MARK: - Reading

    /// The number of entries whose key, compared on `prefix`'s length, is before `prefix`
    /// (`orEqual`: before or equal).
    ///
    /// - Complexity: O(log n).
    func rank(of prefix: [IndexValue], orEqual: Bool) -> Int {
        var node = root
        var rank = 0
        while let current = node {
            let order = current.compare(prefix: prefix)
            if order < 0 || (orEqual && order == 0) {
                rank += current.leftCount + 1
                node = current.right
            } else {
                node = current.left
            }
        }
        return rank
    }

    /// Calls `body` with the entries at ranks `range`, in order or (`reversed`) in reverse,
    /// until it returns `false`.
    ///
    /// - Complexity: O(log n + visited).
    func forEach(in range: Range<Int>, reversed: Bool = false, _ body: (Entry) throws -> Bool) rethrows {
        guard !range.isEmpty else { return }
        _ = try Self.visit(root, offset: 0, range: range, reversed: reversed) { try body($0.entry) }
    }

    /// Calls `body` with the ids of the entries at ranks `range`, in order or (`reversed`) in
    /// reverse, until it returns `false`: as ``forEach(in:reversed:_:)``, without building
    /// each entry from its node's parts (a copy of its key) for a caller that reads only ids.
    ///
    /// - Complexity: O(log n + visited).
    func forEachID(in range: Range<Int>, reversed: Bool = false, _ body: (ObjectKey) throws -> Bool) rethrows {
        guard !range.isEmpty else { return }
        _ = try Self.visit(root, offset: 0, range: range, reversed: reversed) { try body($0.id) }
    }

    private static func visit(_ node: Node?, offset: Int, range: Range<Int>, reversed: Bool, _ body: (Node) throws -> Bool) rethrows -> Bool {
        guard let node else { return true }
        let position = offset + node.leftCount
        guard offset < range.upperBound, offset + node.count > range.lowerBound else { return true }
        if reversed {
            if try !visit(node.right, offset: position + 1, range: range, reversed: true, body) { return false }
            if range.contains(position), try !body(node) { return false }
            return try visit(node.left, offset: offset, range: range, reversed: true, body)
        }
        if try !visit(node.left, offset: offset, range: range, reversed: false, body) { return false }
        if range.contains(position), try !body(node) { return false }
        return try visit(node.right, offset: position + 1, range: range, reversed: false, body)
    }

    /// Every entry, in order.
    var entries: [Entry] {
        var result: [Entry] = []
        result.reserveCapacity(count)
        forEach(in: 0..<count) { result.append($0); return true }
        return result
    }

    // MARK: - Invariants

    /// Checks order, subtree counts (each node's own and its left subtree's) and weight
    /// balance (neither subtree of a node weighs more than ``delta`` times the other); a
    /// precondition failure names the first broken one.
    ///
    /// - Complexity: O(n).
    func checkInvariants() {
        func check(_ node: Node?, low: Entry?, high: Entry?) -> Int {
            guard let node else { return 0 }
            if let low { precondition(Entry.compare(low, node.entry) < 0, "IndexTree: entries out of order") }
            if let high { precondition(Entry.compare(node.entry, high) < 0, "IndexTree: entries out of order") }
            let left = check(node.left, low: low, high: node.entry)
            let right = check(node.right, low: node.entry, high: high)
            precondition(left == node.leftCount, "IndexTree: wrong left subtree count")
            precondition(1 + left + right == node.count, "IndexTree: wrong subtree count")
            precondition(Self.isBalanced(left, right) && Self.isBalanced(right, left), "IndexTree: weight balance broken")
            return node.count
        }
        _ = check(root, low: nil, high: nil)
    }

    /// The average and the greatest depth of an entry (the root's is 1), for tests and
    /// measurements of the shape.
    ///
    /// - Complexity: O(n).
    func depths() -> (average: Double, maximum: Int) {
        var total = 0, maximum = 0
        func visit(_ node: Node?, depth: Int) {
            guard let node else { return }
            total += depth
            maximum = max(maximum, depth)
            visit(node.left, depth: depth + 1)
            visit(node.right, depth: depth + 1)
        }
        visit(root, depth: 1)
        return (count == 0 ? 0 : Double(total) / Double(count), maximum)
    }
}
