/// A persistent, structurally shared sorted multiset of index entries: a treap with subtree
/// counts (an order-statistic tree).
///
/// Nodes are immutable and shared between versions; an insert or remove copies only the path
/// it walks, so keeping a version is O(1) and a change is O(log n) expected. A node's
/// priority is a hash of its id, so the shape does not depend on insertion order. Entries are
/// ordered by key, then by id (``ObjectKey/indexOrder(_:_:)``), so no two compare equal.
struct IndexTree: Sendable {
    /// One object's place in an index: its indexed values, its id and the object itself (so a
    /// walk needs no table lookup).
    ///
    /// A class, so that the nodes a change copies along its path share the entry with one
    /// reference instead of copying about 100 bytes and retaining the key, the id and the object
    /// in every copy: a commit copies some 20 nodes per index for each object it moves.
    final class Entry: Sendable {
        let key: IndexKey
        let id: ObjectKey
        let object: StoredObject

        init(key: IndexKey, id: ObjectKey, object: StoredObject) {
            self.key = key
            self.id = id
            self.object = object
        }

        static func compare(_ a: Entry, _ b: Entry) -> Int {
            if a === b { return 0 }
            let order = IndexKey.compare(a.key, b.key)
            return order != 0 ? order : ObjectKey.indexOrder(a.id, b.id)
        }
    }

    final class Node: Sendable {
        let entry: Entry
        let priority: Int
        let left: Node?
        let right: Node?
        let count: Int

        init(_ entry: Entry, priority: Int, left: Node?, right: Node?) {
            self.entry = entry
            self.priority = priority
            self.left = left
            self.right = right
            count = 1 + (left?.count ?? 0) + (right?.count ?? 0)
        }

        func with(left: Node?, right: Node?) -> Node {
            Node(entry, priority: priority, left: left, right: right)
        }
    }

    private(set) var root: Node?

    init() {}

    /// The number of entries.
    ///
    /// - Complexity: O(1).
    var count: Int { root?.count ?? 0 }
    var isEmpty: Bool { root == nil }

    static func priority(of id: ObjectKey) -> Int { id._rawHashValue(seed: 0x1D3) }

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

    /// Puts `entry` in place of the entry with the same key and id (a new version of the
    /// same object whose indexed values did not change); returns whether there was one.
    ///
    /// - Complexity: O(log n) expected: one path copied, no rebalancing.
    @discardableResult
    mutating func replace(_ entry: Entry) -> Bool {
        var found = false
        root = Self.replacing(entry, in: root, found: &found)
        return found
    }

    private static func replacing(_ entry: Entry, in node: Node?, found: inout Bool) -> Node? {
        guard let node else { return nil }
        let order = Entry.compare(entry, node.entry)
        if order == 0 {
            found = true
            return Node(entry, priority: node.priority, left: node.left, right: node.right)
        }
        if order < 0 {
            let left = replacing(entry, in: node.left, found: &found)
            return found ? node.with(left: left, right: node.right) : node
        }
        let right = replacing(entry, in: node.right, found: &found)
        return found ? node.with(left: node.left, right: right) : node
    }

    private static func inserting(_ leaf: Node, into node: Node?) -> Node {
        guard let node else { return leaf }
        if leaf.priority > node.priority {
            let (less, greater) = split(node, at: leaf.entry)
            return leaf.with(left: less, right: greater)
        }
        if Entry.compare(leaf.entry, node.entry) < 0 {
            return node.with(left: inserting(leaf, into: node.left), right: node.right)
        }
        return node.with(left: node.left, right: inserting(leaf, into: node.right))
    }

    /// The entries of `node` before and after `entry` (which it does not contain).
    private static func split(_ node: Node?, at entry: Entry) -> (Node?, Node?) {
        guard let node else { return (nil, nil) }
        if Entry.compare(entry, node.entry) < 0 {
            let (less, greater) = split(node.left, at: entry)
            return (less, node.with(left: greater, right: node.right))
        }
        let (less, greater) = split(node.right, at: entry)
        return (node.with(left: node.left, right: less), greater)
    }

    private static func removing(key: IndexKey, id: ObjectKey, from node: Node?, found: inout Bool) -> Node? {
        guard let node else { return nil }
        var order = IndexKey.compare(key, node.entry.key)
        if order == 0 { order = ObjectKey.indexOrder(id, node.entry.id) }
        if order == 0 {
            found = true
            return join(node.left, node.right)
        }
        if order < 0 {
            let left = removing(key: key, id: id, from: node.left, found: &found)
            return found ? node.with(left: left, right: node.right) : node
        }
        let right = removing(key: key, id: id, from: node.right, found: &found)
        return found ? node.with(left: node.left, right: right) : node
    }

    /// Joins two trees whose every entry of `a` precedes every entry of `b`.
    private static func join(_ a: Node?, _ b: Node?) -> Node? {
        guard let a else { return b }
        guard let b else { return a }
        if a.priority > b.priority { return a.with(left: a.left, right: join(a.right, b)) }
        return b.with(left: join(a, b.left), right: b.right)
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
            let order = current.entry.key.compare(prefix: prefix)
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
        _ = try Self.visit(root, offset: 0, range: range, reversed: reversed, body)
    }

    private static func visit(_ node: Node?, offset: Int, range: Range<Int>, reversed: Bool, _ body: (Entry) throws -> Bool) rethrows -> Bool {
        guard let node else { return true }
        let leftCount = node.left?.count ?? 0
        let position = offset + leftCount
        guard offset < range.upperBound, offset + node.count > range.lowerBound else { return true }
        if reversed {
            if try !visit(node.right, offset: position + 1, range: range, reversed: true, body) { return false }
            if range.contains(position), try !body(node.entry) { return false }
            return try visit(node.left, offset: offset, range: range, reversed: true, body)
        }
        if try !visit(node.left, offset: offset, range: range, reversed: false, body) { return false }
        if range.contains(position), try !body(node.entry) { return false }
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
