/// A persistent, structurally shared sorted multiset of index entries: a treap with subtree
/// counts (an order-statistic tree).
///
/// Nodes are immutable and shared between versions; an insert or remove copies only the path
/// it walks, so keeping a version is O(1) and a change is O(log n) expected. A node's
/// priority is a hash of its id, so the shape does not depend on insertion order. Entries are
/// ordered by key, then by id (``ObjectKey/indexOrder(_:_:)``), so no two compare equal.
struct IndexTree: Sendable {
    /// One object's place in an index: its indexed values and its id. The object itself is
    /// read from the table of the same version, so a commit that changes no indexed value of an
    /// object leaves every index as it was, and a node stays small (112 bytes as allocated for
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

    /// A node: one entry, its priority, its subtree count and its children.
    ///
    /// The entry is held as its parts so that the 32-bit priority and count sit in the padding
    /// after the key's first value and after the id: 88 bytes laid out, 96 as allocated,
    /// instead of 104 and 112 with the entry, a word-sized priority and count as fields.
    final class Node: Sendable {
        /// The key's first value.
        let first: IndexValue
        private let storedPriority: UInt32
        let id: ObjectKey
        private let storedCount: UInt32
        /// The key's further values (a compound index).
        let rest: [IndexValue]
        let left: Node?
        let right: Node?

        var priority: Int { Int(storedPriority) }
        /// The number of entries in this node's subtree.
        var count: Int { Int(storedCount) }
        var key: IndexKey { IndexKey(first: first, rest: rest) }
        var entry: Entry { Entry(key: key, id: id) }

        private init(first: IndexValue, rest: [IndexValue], id: ObjectKey, priority: Int, left: Node?, right: Node?, count: Int) {
            self.first = first
            self.rest = rest
            self.id = id
            storedPriority = UInt32(truncatingIfNeeded: priority)
            self.left = left
            self.right = right
            precondition(count <= Int(UInt32.max), "IndexTree: more than \(UInt32.max) entries")
            storedCount = UInt32(truncatingIfNeeded: count)
        }

        convenience init(_ entry: Entry, priority: Int, left: Node?, right: Node?) {
            self.init(first: entry.key.first, rest: entry.key.rest, id: entry.id, priority: priority, left: left, right: right,
                      count: 1 + (left?.count ?? 0) + (right?.count ?? 0))
        }

        /// A node whose subtree count is known (one more or one fewer than the node it copies),
        /// so building it reads neither child: on a path copy the child not on the path is
        /// usually not in the cache.
        convenience init(_ entry: Entry, priority: Int, left: Node?, right: Node?, count: Int) {
            self.init(first: entry.key.first, rest: entry.key.rest, id: entry.id, priority: priority, left: left, right: right, count: count)
        }

        func with(left: Node?, right: Node?) -> Node {
            Node(first: first, rest: rest, id: id, priority: priority, left: left, right: right, count: 1 + (left?.count ?? 0) + (right?.count ?? 0))
        }

        /// A copy with new children whose entries number `count - self.count` more.
        func with(left: Node?, right: Node?, countChange: Int) -> Node {
            Node(first: first, rest: rest, id: id, priority: priority, left: left, right: right, count: count + countChange)
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

    /// A hash of `id`, 32 bits wide (the width a node keeps).
    static func priority(of id: ObjectKey) -> Int { Int(UInt32(truncatingIfNeeded: id._rawHashValue(seed: 0x1D3))) }

    // MARK: - Changing

    /// Adds `entry`; an entry for the same key and id must not be present.
    ///
    /// - Complexity: O(log n) expected.
    mutating func insert(_ entry: Entry) {
        root = Self.inserting(Node(entry, priority: Self.priority(of: entry.id), left: nil, right: nil), into: root)
    }

    /// Removes the entry equal to `entry` (same key and id); returns whether there was one.
    ///
    /// - Complexity: O(log n) expected.
    @discardableResult
    mutating func remove(_ entry: Entry) -> Bool {
        remove(key: entry.key, id: entry.id)
    }

    /// Removes the entry with `key` and `id`; returns whether there was one.
    ///
    /// - Complexity: O(log n) expected.
    @discardableResult
    mutating func remove(key: IndexKey, id: ObjectKey) -> Bool {
        var found = false
        root = Self.removing(key: key, id: id, from: root, found: &found)
        return found
    }

    private static func inserting(_ leaf: Node, into node: Node?) -> Node {
        guard let node else { return leaf }
        if leaf.priority > node.priority {
            let (less, greater) = split(node, at: leaf.entry)
            return leaf.with(left: less, right: greater)
        }
        if node.order(of: leaf) < 0 {
            return node.with(left: inserting(leaf, into: node.left), right: node.right, countChange: 1)
        }
        return node.with(left: node.left, right: inserting(leaf, into: node.right), countChange: 1)
    }

    /// The entries of `node` before and after `entry` (which it does not contain).
    private static func split(_ node: Node?, at entry: Entry) -> (Node?, Node?) {
        guard let node else { return (nil, nil) }
        if node.order(of: entry) < 0 {
            let (less, greater) = split(node.left, at: entry)
            return (less, node.with(left: greater, right: node.right))
        }
        let (less, greater) = split(node.right, at: entry)
        return (node.with(left: node.left, right: less), greater)
    }

    private static func removing(key: IndexKey, id: ObjectKey, from node: Node?, found: inout Bool) -> Node? {
        guard let node else { return nil }
        let order = node.order(of: key, id: id)
        if order == 0 {
            found = true
            return join(node.left, node.right)
        }
        if order < 0 {
            let left = removing(key: key, id: id, from: node.left, found: &found)
            return found ? node.with(left: left, right: node.right, countChange: -1) : node
        }
        let right = removing(key: key, id: id, from: node.right, found: &found)
        return found ? node.with(left: node.left, right: right, countChange: -1) : node
    }

    /// Joins two trees whose every entry of `a` precedes every entry of `b`.
    private static func join(_ a: Node?, _ b: Node?) -> Node? {
        guard let a else { return b }
        guard let b else { return a }
        if a.priority > b.priority { return a.with(left: a.left, right: join(a.right, b)) }
        return b.with(left: join(a, b.left), right: b.right)
    }

    /// Moves the entry for `id` from `oldKey` to `newKey`: a remove and an insert in one walk.
    /// Returns `false`, changing nothing, when there is no entry with `oldKey` and `id`; an
    /// entry with `newKey` and `id` must not be present.
    ///
    /// The new entry has the old one's priority (a hash of the id), so the two walks share the
    /// path down to the node whose key lies between the old and the new entry, which is copied
    /// once. When no other entry lies between the two, as for a date moved by a second, the
    /// shape stays as it is and only the path to the entry is copied: half the nodes of a
    /// remove and an insert, and half the nodes the old version frees later.
    ///
    /// - Complexity: O(log n) expected; O(d + log m) node copies, for d the depth of the node
    ///   where the old and the new entry part and m the entries of its subtree.
    @discardableResult
    mutating func move(id: ObjectKey, from oldKey: IndexKey, to newKey: IndexKey) -> Bool {
        guard let root else { return false }
        let new = Entry(key: newKey, id: id)
        guard let moved = Self.moving(key: oldKey, id: id, to: new, in: root) else { return false }
        self.root = moved
        return true
    }

    /// `node` with the entry `key`/`id` moved to `new`, or `nil` when that entry is not in it.
    private static func moving(key: IndexKey, id: ObjectKey, to new: Entry, in node: Node) -> Node? {
        let old = node.order(of: key, id: id)
        if old == 0 { return replacing(node, with: new) }
        let order = node.order(of: new)
        if old < 0, order < 0 {
            guard let left = node.left, let moved = moving(key: key, id: id, to: new, in: left) else { return nil }
            return node.with(left: moved, right: node.right, countChange: 0)
        }
        if old > 0, order >= 0 {
            guard let right = node.right, let moved = moving(key: key, id: id, to: new, in: right) else { return nil }
            return node.with(left: node.left, right: moved, countChange: 0)
        }
        // The walks part here: out of one side, into the other. The moved entry was below
        // `node`, so its priority is not above `node`'s and it stays below it.
        var found = false
        let leaf = Node(new, priority: priority(of: id), left: nil, right: nil)
        if old < 0 {
            let left = removing(key: key, id: id, from: node.left, found: &found)
            return found ? node.with(left: left, right: inserting(leaf, into: node.right), countChange: 0) : nil
        }
        let right = removing(key: key, id: id, from: node.right, found: &found)
        return found ? node.with(left: inserting(leaf, into: node.left), right: right, countChange: 0) : nil
    }

    /// `node` with its own entry replaced by `new` (same id, so the same priority, which is at
    /// least that of every entry below). Unless an entry of a subtree passes the new one, the
    /// shape stays; otherwise the subtree it crosses is split at `new`.
    private static func replacing(_ node: Node, with new: Entry) -> Node {
        if let left = node.left, last(left).order(of: new) < 0 {
            let (less, greater) = split(left, at: new)
            return Node(new, priority: node.priority, left: less, right: join(greater, node.right), count: node.count)
        }
        if let right = node.right, first(right).order(of: new) > 0 {
            let (less, greater) = split(right, at: new)
            return Node(new, priority: node.priority, left: join(node.left, less), right: greater, count: node.count)
        }
        return Node(new, priority: node.priority, left: node.left, right: node.right, count: node.count)
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
    /// - Complexity: O(k log(n / k + 1)) expected, for k entries in `other`.
    mutating func formUnion(_ other: IndexTree) {
        root = Self.union(root, other.root)
    }

    private static func union(_ a: Node?, _ b: Node?) -> Node? {
        guard let a else { return b }
        guard let b else { return a }
        if a.priority < b.priority { return union(b, a) }
        let (less, greater) = split(b, at: a.entry)
        return a.with(left: union(a.left, less), right: union(a.right, greater))
    }

    /// A tree of `entries`, which must be sorted and distinct.
    ///
    /// - Complexity: O(n log n) expected.
    init(sorted entries: [Entry]) {
        let priorities = entries.map { Self.priority(of: $0.id) }
        func build(_ range: Range<Int>) -> Node? {
            guard !range.isEmpty else { return nil }
            var top = range.lowerBound
            for position in range where priorities[position] > priorities[top] { top = position }
            return Node(entries[top], priority: priorities[top], left: build(range.lowerBound..<top), right: build((top + 1)..<range.upperBound))
        }
        root = build(entries.indices)
    }

    // MARK: - Reading

    /// The number of entries whose key, compared on `prefix`'s length, is before `prefix`
    /// (`orEqual`: before or equal).
    ///
    /// - Complexity: O(log n) expected.
    func rank(of prefix: [IndexValue], orEqual: Bool) -> Int {
        var node = root
        var rank = 0
        while let current = node {
            let order = current.compare(prefix: prefix)
            if order < 0 || (orEqual && order == 0) {
                rank += (current.left?.count ?? 0) + 1
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
        let leftCount = node.left?.count ?? 0
        let position = offset + leftCount
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

    /// Checks order, heap order of priorities and subtree counts; a precondition failure names
    /// the first broken one.
    ///
    /// - Complexity: O(n).
    func checkInvariants() {
        func check(_ node: Node?, low: Entry?, high: Entry?) -> Int {
            guard let node else { return 0 }
            if let low { precondition(Entry.compare(low, node.entry) < 0, "IndexTree: entries out of order") }
            if let high { precondition(Entry.compare(node.entry, high) < 0, "IndexTree: entries out of order") }
            precondition(node.priority == Self.priority(of: node.entry.id), "IndexTree: wrong priority")
            if let left = node.left { precondition(left.priority <= node.priority, "IndexTree: heap order broken") }
            if let right = node.right { precondition(right.priority <= node.priority, "IndexTree: heap order broken") }
            let count = 1 + check(node.left, low: low, high: node.entry) + check(node.right, low: node.entry, high: high)
            precondition(count == node.count, "IndexTree: wrong subtree count")
            return count
        }
        _ = check(root, low: nil, high: nil)
    }
}
