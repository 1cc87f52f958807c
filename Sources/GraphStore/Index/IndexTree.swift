/// A persistent, structurally shared sorted multiset of index entries: a counted B+tree.
///
/// Leaves hold up to ``leafCapacity`` entries inline in one contiguous buffer; inner nodes hold
/// up to ``innerCapacity`` children, each with its subtree's entry count and a lower bound of
/// its entries (so a walk down reads one buffer per level and a rank is a sum of counts). Every
/// node is a copy-on-write array: a change copies only the nodes on its path that another
/// version shares and changes the rest in place, so keeping a version is O(1), old versions
/// never change, and a change is O(log n). For 100,000 entries a tree is five levels deep
/// where a treap was about 23, and a commit that moves an entry copies five buffers instead of
/// about 23 nodes; but copying an inner node retains each of its children and copies each
/// child's bound, so the fan-outs are small (32 entries, 8 children: measured against 64/16,
/// 64/8 and 16/8, 16/4). Entries are ordered by key, then by id
/// (``ObjectKey/indexOrder(_:_:)``), so no two compare equal.
///
/// Every node but the root holds at least a quarter of its capacity, and every leaf is at the
/// same depth: ``checkInvariants()`` checks both.
struct IndexTree: Sendable {
    /// One object's place in an index: its indexed values and its id. The object itself is
    /// read from the table of the same version, so a commit that changes no indexed value of an
    /// object leaves every index as it was.
    struct Entry: Sendable {
        let key: IndexKey
        let id: ObjectKey

        static func compare(_ a: Entry, _ b: Entry) -> Int {
            let order = IndexKey.compare(a.key, b.key)
            return order != 0 ? order : ObjectKey.indexOrder(a.id, b.id)
        }
    }

    /// A node: a leaf's entries in order, or an inner node's children in order.
    enum Node: Sendable {
        case leaf(ContiguousArray<Entry>)
        case inner(ContiguousArray<Slot>)

        /// Entries of a leaf or children of an inner node.
        var width: Int {
            switch self {
            case .leaf(let entries): entries.count
            case .inner(let slots): slots.count
            }
        }
    }

    /// One child of an inner node.
    struct Slot: Sendable {
        /// Not after any entry of `node`, and after every entry of the slot before it: what a
        /// walk compares to choose a child.
        var first: Entry
        /// The number of entries under `node`.
        var count: Int
        var node: Node
    }

    /// The most entries a leaf holds.
    static var leafCapacity: Int { 32 }
    /// The most children an inner node holds.
    static var innerCapacity: Int { 8 }
    /// The fewest entries a leaf other than the root holds.
    static var leafMinimum: Int { max(1, leafCapacity / 4) }
    /// The fewest children an inner node other than the root holds.
    static var innerMinimum: Int { max(2, innerCapacity / 4) }

    private var root: Node = .leaf([])

    /// The number of entries.
    ///
    /// - Complexity: O(1).
    private(set) var count = 0
    var isEmpty: Bool { count == 0 }

    init() {}

    // MARK: - Changing

    /// Adds `entry`; an entry for the same key and id must not be present.
    ///
    /// - Complexity: O(log n).
    mutating func insert(_ entry: Entry) {
        Self.insert(entry, into: &root)
        count += 1
        fixRoot()
    }

    /// Removes the entry equal to `entry` (same key and id); returns whether there was one.
    ///
    /// - Complexity: O(log n).
    @discardableResult
    mutating func remove(_ entry: Entry) -> Bool {
        // Look before changing: removing an absent entry copies nothing.
        guard Self.contains(entry, in: root) else { return false }
        Self.remove(entry, from: &root)
        count -= 1
        fixRoot()
        return true
    }

    /// Removes the entry with `key` and `id`; returns whether there was one.
    ///
    /// - Complexity: O(log n).
    @discardableResult
    mutating func remove(key: IndexKey, id: ObjectKey) -> Bool {
        remove(Entry(key: key, id: id))
    }

    /// Moves the entry for `id` from `oldKey` to `newKey`: a remove and an insert in one walk.
    /// Returns `false`, changing no entry, when there is no entry with `oldKey` and `id`; an
    /// entry with `newKey` and `id` must not be present.
    ///
    /// The two walks share the path down to the node where the old and the new entry part;
    /// when both lie in one leaf, as for a date moved by a second, only that path is copied.
    ///
    /// - Complexity: O(log n).
    @discardableResult
    mutating func move(id: ObjectKey, from oldKey: IndexKey, to newKey: IndexKey) -> Bool {
        // No walk to look first: a commit moves entries that are there. An absent one leaves
        // a copy of the path with the same entries.
        guard Self.move(Entry(key: oldKey, id: id), to: Entry(key: newKey, id: id), in: &root) else { return false }
        fixRoot()
        return true
    }

    /// Adds every entry of `other`, none of which may be present.
    ///
    /// Inserts them in order: after the first, the path each one walks is mostly this tree's
    /// own (copied already), so it changes in place, and only the leaves and inner nodes the
    /// batch reaches for the first time are copied.
    ///
    /// - Complexity: O(k log n), for k entries in `other`.
    mutating func formUnion(_ other: IndexTree) {
        if isEmpty {
            self = other
            return
        }
        other.forEach(in: 0..<other.count) { entry in
            insert(entry)
            return true
        }
    }

    /// A tree of `entries`, which must be sorted and distinct, with full leaves and inner
    /// nodes.
    ///
    /// - Complexity: O(n).
    init(sorted entries: [Entry]) {
        count = entries.count
        guard entries.count > Self.leafCapacity else {
            root = .leaf(ContiguousArray(entries))
            return
        }
        var level = Self.evenParts(of: entries.count, capacity: Self.leafCapacity).map { range in
            Slot(first: entries[range.lowerBound], count: range.count, node: .leaf(ContiguousArray(entries[range])))
        }
        while level.count > Self.innerCapacity {
            level = Self.evenParts(of: level.count, capacity: Self.innerCapacity).map { range in
                Slot(first: level[range.lowerBound].first, count: level[range].reduce(0) { $0 + $1.count }, node: .inner(ContiguousArray(level[range])))
            }
        }
        root = .inner(ContiguousArray(level))
    }

    /// `0..<count` cut into the fewest parts of at most `capacity`, whose sizes differ by at
    /// most one (so each is at least half full).
    private static func evenParts(of count: Int, capacity: Int) -> [Range<Int>] {
        let parts = (count + capacity - 1) / capacity
        return (0..<parts).map { part in (part * count / parts)..<((part + 1) * count / parts) }
    }

    // MARK: - Node operations

    /// The position in `entries` of the first entry not before `entry`.
    @inline(__always)
    private static func lowerBound(_ entry: Entry, in entries: ContiguousArray<Entry>) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if Entry.compare(entries[middle], entry) < 0 { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The position of the child of `slots` whose entries would hold `entry`.
    @inline(__always)
    private static func child(for entry: Entry, in slots: ContiguousArray<Slot>) -> Int {
        var low = 1, high = slots.count
        while low < high {
            let middle = (low + high) / 2
            if Entry.compare(slots[middle].first, entry) <= 0 { low = middle + 1 } else { high = middle }
        }
        return low - 1
    }

    /// `entries` with `entry` inserted at `position`, without the doubling of capacity an
    /// insert into a full array would make.
    @inline(__always)
    private static func insert(_ entry: Entry, at position: Int, in entries: inout ContiguousArray<Entry>) {
        if entries.count < entries.capacity {
            entries.insert(entry, at: position)
            return
        }
        var grown = ContiguousArray<Entry>()
        grown.reserveCapacity(entries.count + 1)
        grown.append(contentsOf: entries[..<position])
        grown.append(entry)
        grown.append(contentsOf: entries[position...])
        entries = grown
    }

    // Each operation takes a node's array out of the node before changing it, so that the
    // array is uniquely referenced (and changed in place) when no other version holds it.

    private static func insert(_ entry: Entry, into node: inout Node) {
        switch node {
        case .leaf(var entries):
            node = .leaf([])
            insert(entry, at: lowerBound(entry, in: entries), in: &entries)
            node = .leaf(entries)
        case .inner(var slots):
            node = .leaf([])
            let position = child(for: entry, in: slots)
            if position == 0, Entry.compare(entry, slots[0].first) < 0 { slots[0].first = entry }
            insert(entry, into: &slots[position].node)
            slots[position].count += 1
            fix(&slots, at: position)
            node = .inner(slots)
        }
    }

    /// Removes `entry`, which is present, from `node`.
    private static func remove(_ entry: Entry, from node: inout Node) {
        switch node {
        case .leaf(var entries):
            node = .leaf([])
            entries.remove(at: lowerBound(entry, in: entries))
            node = .leaf(entries)
        case .inner(var slots):
            node = .leaf([])
            let position = child(for: entry, in: slots)
            remove(entry, from: &slots[position].node)
            slots[position].count -= 1
            fix(&slots, at: position)
            node = .inner(slots)
        }
    }

    private static func contains(_ entry: Entry, in node: Node) -> Bool {
        var node = node
        while true {
            switch node {
            case .leaf(let entries):
                let position = lowerBound(entry, in: entries)
                return position < entries.count && Entry.compare(entries[position], entry) == 0
            case .inner(let slots):
                node = slots[child(for: entry, in: slots)].node
            }
        }
    }

    /// Moves `old` to `new` in `node`; `false`, with the same entries, when `old` is not there.
    private static func move(_ old: Entry, to new: Entry, in node: inout Node) -> Bool {
        switch node {
        case .leaf(var entries):
            node = .leaf([])
            let position = lowerBound(old, in: entries)
            let found = position < entries.count && Entry.compare(entries[position], old) == 0
            if found {
                entries.remove(at: position)
                entries.insert(new, at: lowerBound(new, in: entries))
            }
            node = .leaf(entries)
            return found
        case .inner(var slots):
            let from = child(for: old, in: slots)
            let to = child(for: new, in: slots)
            if from == to {
                node = .leaf([])
                let found = move(old, to: new, in: &slots[from].node)
                if found, to == 0, Entry.compare(new, slots[0].first) < 0 { slots[0].first = new }
                fix(&slots, at: from)
                node = .inner(slots)
                return found
            } else {
                guard contains(old, in: slots[from].node) else { return false }
                node = .leaf([])
                remove(old, from: &slots[from].node)
                slots[from].count -= 1
                fix(&slots, at: from)
                let into = child(for: new, in: slots)
                if into == 0, Entry.compare(new, slots[0].first) < 0 { slots[0].first = new }
                insert(new, into: &slots[into].node)
                slots[into].count += 1
                fix(&slots, at: into)
                node = .inner(slots)
                return true
            }
        }
    }

    /// Splits the child at `position` of `slots` when it is over capacity, or merges it with
    /// (or shares out with) a neighbour when it is under a quarter of its capacity.
    private static func fix(_ slots: inout ContiguousArray<Slot>, at position: Int) {
        let node = slots[position].node
        let (width, capacity, minimum): (Int, Int, Int)
        switch node {
        case .leaf(let entries): (width, capacity, minimum) = (entries.count, leafCapacity, leafMinimum)
        case .inner(let children): (width, capacity, minimum) = (children.count, innerCapacity, innerMinimum)
        }
        if width > capacity {
            let (left, right) = halves(of: node, first: slots[position].first)
            slots[position] = left
            slots.insert(right, at: position + 1)
        } else if width < minimum, slots.count > 1 {
            let low = position + 1 < slots.count ? position : position - 1
            let joined = joining(slots[low], slots[low + 1])
            if joined.node.width <= capacity {
                slots[low] = joined
                slots.remove(at: low + 1)
            } else {
                let (left, right) = halves(of: joined.node, first: joined.first)
                slots[low] = left
                slots[low + 1] = right
            }
        }
    }

    /// The entries or children of `node` in two slots of half each.
    private static func halves(of node: Node, first: Entry) -> (Slot, Slot) {
        switch node {
        case .leaf(let entries):
            let middle = entries.count / 2
            let left = ContiguousArray(entries[..<middle]), right = ContiguousArray(entries[middle...])
            return (Slot(first: first, count: left.count, node: .leaf(left)), Slot(first: right[0], count: right.count, node: .leaf(right)))
        case .inner(let slots):
            let middle = slots.count / 2
            let left = ContiguousArray(slots[..<middle]), right = ContiguousArray(slots[middle...])
            return (Slot(first: first, count: left.reduce(0) { $0 + $1.count }, node: .inner(left)),
                    Slot(first: right[0].first, count: right.reduce(0) { $0 + $1.count }, node: .inner(right)))
        }
    }

    /// One slot holding the entries or children of two neighbouring slots of one level.
    private static func joining(_ a: Slot, _ b: Slot) -> Slot {
        switch (a.node, b.node) {
        case (.leaf(let left), .leaf(let right)):
            var joined = ContiguousArray<Entry>()
            joined.reserveCapacity(left.count + right.count)
            joined.append(contentsOf: left)
            joined.append(contentsOf: right)
            return Slot(first: a.first, count: joined.count, node: .leaf(joined))
        case (.inner(let left), .inner(let right)):
            var joined = ContiguousArray<Slot>()
            joined.reserveCapacity(left.count + right.count)
            joined.append(contentsOf: left)
            joined.append(contentsOf: right)
            // The right node's first child is now after the left node's children: its bound
            // must be after them too, as the parent's bound for the right node is.
            joined[left.count].first = b.first
            return Slot(first: a.first, count: a.count + b.count, node: .inner(joined))
        default:
            preconditionFailure("IndexTree: neighbours at different depths")
        }
    }

    /// A root over capacity gets a new root above it; an inner root with one child gives way
    /// to that child.
    private mutating func fixRoot() {
        while true {
            let width = root.width
            switch root {
            case .leaf(let entries) where width > Self.leafCapacity:
                let (left, right) = Self.halves(of: root, first: entries[0])
                root = .inner([left, right])
            case .inner(let slots) where width > Self.innerCapacity:
                let (left, right) = Self.halves(of: root, first: slots[0].first)
                root = .inner([left, right])
            case .inner(let slots) where width == 1:
                root = slots[0].node
            default:
                return
            }
        }
    }

    // MARK: - Reading

    /// The number of entries whose key, compared on `prefix`'s length, is before `prefix`
    /// (`orEqual`: before or equal).
    ///
    /// - Complexity: O(log n).
    func rank(of prefix: [IndexValue], orEqual: Bool) -> Int {
        @inline(__always) func isBefore(_ entry: Entry) -> Bool {
            let order = entry.key.compare(prefix: prefix)
            return order < 0 || (orEqual && order == 0)
        }
        var node = root
        var rank = 0
        while true {
            switch node {
            case .leaf(let entries):
                var low = 0, high = entries.count
                while low < high {
                    let middle = (low + high) / 2
                    if isBefore(entries[middle]) { low = middle + 1 } else { high = middle }
                }
                return rank + low
            case .inner(let slots):
                // Every entry of the children before the last whose bound is before `prefix`
                // is before it too; every entry after that child is not.
                var low = 1, high = slots.count
                while low < high {
                    let middle = (low + high) / 2
                    if isBefore(slots[middle].first) { low = middle + 1 } else { high = middle }
                }
                for position in 0..<(low - 1) { rank += slots[position].count }
                node = slots[low - 1].node
            }
        }
    }

    /// Calls `body` with the entries at ranks `range`, in order or (`reversed`) in reverse,
    /// until it returns `false`.
    ///
    /// - Complexity: O(log n + visited).
    func forEach(in range: Range<Int>, reversed: Bool = false, _ body: (Entry) throws -> Bool) rethrows {
        let range = range.clamped(to: 0..<count)
        guard !range.isEmpty else { return }
        _ = try Self.visit(root, offset: 0, range: range, reversed: reversed, body)
    }

    private static func visit(_ node: Node, offset: Int, range: Range<Int>, reversed: Bool, _ body: (Entry) throws -> Bool) rethrows -> Bool {
        switch node {
        case .leaf(let entries):
            let low = max(range.lowerBound - offset, 0), high = min(range.upperBound - offset, entries.count)
            guard low < high else { return true }
            if reversed {
                for position in (low..<high).reversed() where try !body(entries[position]) { return false }
            } else {
                for position in low..<high where try !body(entries[position]) { return false }
            }
            return true
        case .inner(let slots):
            if reversed {
                var end = offset
                for slot in slots { end += slot.count }
                for slot in slots.reversed() {
                    let start = end - slot.count
                    if start < range.upperBound, end > range.lowerBound,
                       try !visit(slot.node, offset: start, range: range, reversed: true, body) { return false }
                    if start <= range.lowerBound { break }
                    end = start
                }
            } else {
                var start = offset
                for slot in slots {
                    if start >= range.upperBound { break }
                    if start + slot.count > range.lowerBound,
                       try !visit(slot.node, offset: start, range: range, reversed: false, body) { return false }
                    start += slot.count
                }
            }
            return true
        }
    }

    /// Every entry, in order.
    var entries: [Entry] {
        var result: [Entry] = []
        result.reserveCapacity(count)
        forEach(in: 0..<count) { result.append($0); return true }
        return result
    }

    /// The number of levels: 1 for a tree that is one leaf.
    var height: Int {
        var node = root
        var height = 1
        while case .inner(let slots) = node {
            node = slots[0].node
            height += 1
        }
        return height
    }

    // MARK: - Invariants

    /// Checks order, the bounds inner nodes keep for their children, subtree counts, that every
    /// leaf is at the same depth and that every node but the root is at least a quarter full
    /// and none over capacity; a precondition failure names the first broken one.
    ///
    /// - Complexity: O(n).
    func checkInvariants() {
        var leafDepth: Int?
        var previous: Entry?
        /// Checks `node` and returns its entry count and its first entry.
        func check(_ node: Node, depth: Int, isRoot: Bool, low: Entry?) -> Int {
            switch node {
            case .leaf(let entries):
                precondition(entries.count <= Self.leafCapacity, "IndexTree: leaf over capacity")
                precondition(isRoot || entries.count >= Self.leafMinimum, "IndexTree: leaf under-full")
                if leafDepth == nil { leafDepth = depth }
                precondition(leafDepth == depth, "IndexTree: leaves at different depths")
                for entry in entries {
                    if let low { precondition(Entry.compare(low, entry) <= 0, "IndexTree: entry before its bound") }
                    if let previous { precondition(Entry.compare(previous, entry) < 0, "IndexTree: entries out of order") }
                    previous = entry
                }
                return entries.count
            case .inner(let slots):
                precondition(slots.count <= Self.innerCapacity, "IndexTree: inner node over capacity")
                precondition(slots.count >= (isRoot ? 2 : Self.innerMinimum), "IndexTree: inner node under-full")
                var total = 0
                for (position, slot) in slots.enumerated() {
                    if let low { precondition(Entry.compare(low, slot.first) <= 0, "IndexTree: bound before its parent's") }
                    if position > 0, let previous {
                        precondition(Entry.compare(previous, slot.first) < 0, "IndexTree: bound not after the entries before it")
                    }
                    let count = check(slot.node, depth: depth + 1, isRoot: false, low: slot.first)
                    precondition(count == slot.count, "IndexTree: wrong subtree count")
                    total += count
                }
                return total
            }
        }
        precondition(check(root, depth: 0, isRoot: true, low: nil) == count, "IndexTree: wrong count")
    }
}
