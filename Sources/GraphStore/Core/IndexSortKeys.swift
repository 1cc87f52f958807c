import Foundation

/// Sorts the entries of a sorted index being built from scratch (when a store opens) by plain
/// unsigned integers instead of comparing ``IndexTree/Entry`` values.
///
/// Each entry gets up to four 64-bit words whose lexicographic order is the entries' order
/// under ``IndexTree/Entry/compare(_:_:)``: one per leading indexed value that maps to a word
/// exactly (integers, dates and doubles without NaN, strings by their rank among the column's
/// distinct strings), then the id's words (integer and UUID ids). Comparing entries sorted
/// 50,000 posts' indexes mostly in retains and releases of the enum payloads; comparing words
/// needs none. Where the words leave a tie (a column or an id that has no words), the entries
/// themselves are compared, so the order is always exactly that of sorting the entries.
enum IndexSortKeys {
    /// The words of one entry and its position in the unsorted entries.
    private struct Slot {
        var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0, w3: UInt64 = 0
        var position: Int32 = 0

        /// Three-way order of the words alone.
        @inline(__always)
        static func order(_ a: Slot, _ b: Slot) -> Int {
            if a.w0 != b.w0 { return a.w0 < b.w0 ? -1 : 1 }
            if a.w1 != b.w1 { return a.w1 < b.w1 ? -1 : 1 }
            if a.w2 != b.w2 { return a.w2 < b.w2 ? -1 : 1 }
            if a.w3 != b.w3 { return a.w3 < b.w3 ? -1 : 1 }
            return 0
        }

        @inline(__always)
        subscript(word: Int) -> UInt64 {
            get {
                switch word {
                case 0: w0
                case 1: w1
                case 2: w2
                default: w3
                }
            }
            set {
                switch word {
                case 0: w0 = newValue
                case 1: w1 = newValue
                case 2: w2 = newValue
                default: w3 = newValue
                }
            }
        }
    }

    /// `entries` in the order of ``IndexTree/Entry/compare(_:_:)``, or `nil` when no leading
    /// value maps to words (the caller sorts the entries themselves).
    ///
    /// - Complexity: O(n log n) word comparisons, plus O(d log d) string comparisons for d
    ///   distinct strings in a leading string column and one hash of each of its strings.
    static func sorted(_ entries: [IndexTree.Entry]) -> [IndexTree.Entry]? {
        var sorted = entries
        return sort(&sorted) ? sorted : nil
    }

    /// Sorts `entries` in place into the order of ``IndexTree/Entry/compare(_:_:)``; `false`,
    /// leaving them as they were, when no leading value maps to words (the caller sorts them
    /// itself).
    ///
    /// - Complexity: as ``sorted(_:)``; O(n) memory besides the entries.
    static func sort(_ entries: inout [IndexTree.Entry]) -> Bool {
        guard let order = order(of: entries) else { return false }
        // Follow each cycle of the permutation with swaps: no second array of entries. The
        // buffer's swaps move the entries' bytes, where the array's copy them (a retain and a
        // release of each key's payload per swap).
        var next = order
        entries.withUnsafeMutableBufferPointer { entries in
            for start in next.indices where next[start] >= 0 {
                var position = start
                while Int(next[position]) != start {
                    let source = Int(next[position])
                    entries.swapAt(position, source)
                    next[position] = -1
                    position = source
                }
                next[position] = -1
            }
        }
        return true
    }

    /// For each position of the sorted entries, the position of its entry in `entries`.
    private static func order(of entries: [IndexTree.Entry]) -> [Int32]? {
        let count = entries.count
        guard count > 1, count <= Int(Int32.max), let first = entries.first else { return nil }
        let components = first.key.count
        var slots = [Slot](repeating: Slot(), count: count)
        for position in 0..<count { slots[position].position = Int32(position) }
        var words = 0
        // Leading values, as long as each maps to one word.
        while words < components, words < 4, fill(&slots, word: words, column: words, of: entries) { words += 1 }
        guard words > 0 else { return nil }
        // A column that stopped the words may have written some of its own: they must not count.
        if words < 4 { for position in 0..<count { slots[position][words] = 0 } }
        // Every value in words: the ids break ties, when they have words of their own.
        var exact = false
        if words == components, let idWords = idWordCount(entries), words + idWords <= 4 {
            for position in 0..<count {
                let (_, high, low) = entries[position].id.orderWords()!
                slots[position][words] = high
                if idWords == 2 { slots[position][words + 1] = low }
            }
            exact = true
        }
        if exact {
            slots.sort { Slot.order($0, $1) < 0 }
        } else {
            entries.withUnsafeBufferPointer { entries in
                slots.sort { a, b in
                    let order = Slot.order(a, b)
                    if order != 0 { return order < 0 }
                    return IndexTree.Entry.compare(entries[Int(a.position)], entries[Int(b.position)]) < 0
                }
            }
        }
        return slots.map(\.position)
    }

    /// How many words the ids of `entries` take (1 for integers, 2 for UUIDs), or `nil` when
    /// some id has none or the ids are of different kinds (ordered by other rules).
    private static func idWordCount(_ entries: [IndexTree.Entry]) -> Int? {
        guard let kind = entries.first?.id.orderWords()?.kind else { return nil }
        for entry in entries {
            guard entry.id.orderWords()?.kind == kind else { return nil }
        }
        return kind == 4 ? 2 : 1
    }

    /// Sets word `word` of every slot to the word of the entry's value `column`; `false` (the
    /// word of some slots written, which the caller clears) when the column holds values
    /// of different kinds, `nil`s, NaNs, or values of another type.
    private static func fill(_ slots: inout [Slot], word: Int, column: Int, of entries: [IndexTree.Entry]) -> Bool {
        switch entries[0].key[column] {
        case .int:
            for position in entries.indices {
                guard case .int(let value) = entries[position].key[column] else { return false }
                slots[position][word] = UInt64(bitPattern: value) ^ (1 << 63)
            }
            return true
        case .date:
            for position in entries.indices {
                guard case .date(let value) = entries[position].key[column], let bits = orderBits(value.timeIntervalSinceReferenceDate) else { return false }
                slots[position][word] = bits
            }
            return true
        case .double:
            for position in entries.indices {
                guard case .double(let value) = entries[position].key[column], let bits = orderBits(value) else { return false }
                slots[position][word] = bits
            }
            return true
        case .string:
            return fillStrings(&slots, word: word, column: column, of: entries)
        case .null, .other:
            return false
        }
    }

    /// A string column as ranks: equal strings (`==`, as `Dictionary` hashes them) share one,
    /// and ranks follow `<` among the distinct strings.
    private static func fillStrings(_ slots: inout [Slot], word: Int, column: Int, of entries: [IndexTree.Entry]) -> Bool {
        var ranks: [String: UInt64] = [:]
        var distinct: [String] = []
        var ids = [Int32](repeating: 0, count: entries.count)
        for position in entries.indices {
            guard case .string(let value) = entries[position].key[column] else { return false }
            if let known = ranks[value] {
                ids[position] = Int32(truncatingIfNeeded: known)
            } else {
                ranks[value] = UInt64(distinct.count)
                ids[position] = Int32(distinct.count)
                distinct.append(value)
            }
        }
        // Distinct strings in order; their rank replaces their number of first appearance.
        let order = distinct.indices.sorted { distinct[$0] < distinct[$1] }
        var rankOfNumber = [UInt64](repeating: 0, count: distinct.count)
        for (rank, number) in order.enumerated() { rankOfNumber[number] = UInt64(rank) }
        for position in entries.indices { slots[position][word] = rankOfNumber[Int(ids[position])] }
        return true
    }

    /// A word whose unsigned order is the order of `value` under `<` and `==` (`-0.0` and `0.0`
    /// are one word); `nil` for NaN, which ``IndexValue`` orders by its own rule.
    @inline(__always)
    private static func orderBits(_ value: Double) -> UInt64? {
        guard !value.isNaN else { return nil }
        let bits = (value == 0 ? 0.0 : value).bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }
}
