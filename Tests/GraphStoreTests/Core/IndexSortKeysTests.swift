import Foundation
import PropertyBased
import Testing

@testable import GraphStore
import GraphStoreTestSupport

/// Sorting index entries by words gives exactly the order of comparing the entries, for every
/// kind of value and id, including the values that have no words (nil, NaN, mixed kinds).
@Suite struct IndexSortKeysTests {
    /// `entries` sorted both ways, as ids and values in order.
    private static func expectSameOrder(_ entries: [IndexTree.Entry], _ comment: Comment? = nil) {
        let expected = entries.sorted { IndexTree.Entry.compare($0, $1) < 0 }
        let sorted = IndexSortKeys.sorted(entries) ?? entries.sorted { IndexTree.Entry.compare($0, $1) < 0 }
        #expect(sorted.count == expected.count)
        // Ids are distinct, so the same ids in the same order is the same order (a NaN date is
        // not equal to itself under `compare`).
        let same = zip(sorted, expected).allSatisfy { $0.id == $1.id }
        #expect(same, comment)
    }

    private static func value(_ kind: Int, using random: inout SplitMix64) -> IndexValue {
        switch kind {
        case 0: IndexValue(Int.random(in: -3..<4, using: &random))
        case 1: IndexValue(Int64.random(in: .min ... .max, using: &random))
        case 2:
            IndexValue(Date(timeIntervalSinceReferenceDate: [-1.5, -0.0, 0.0, 2, 1e9, -1e9, .infinity, -.infinity][Int.random(in: 0..<8, using: &random)]))
        case 3: IndexValue([-0.0, 0.0, 1.25, -7, .greatestFiniteMagnitude, .leastNonzeroMagnitude][Int.random(in: 0..<6, using: &random)])
        case 4: IndexValue(["", "a", "B", "blog1", "blog10", "é", "e\u{301}", "z", "ß"][Int.random(in: 0..<9, using: &random)])
        default: IndexValue(Optional<Int>.none)
        }
    }

    private static func id(_ kind: Int, _ number: Int) -> ObjectKey {
        switch kind {
        case 0: ObjectKey(Int64(number) - 50)
        case 1: ObjectKey(number)
        case 2: ObjectKey(Int32(number))
        case 3: ObjectKey(UUID(uuidString: String(format: "%08X-0000-4000-8000-%012X", (number * 2_654_435_761) & 0xFFFF_FFFF, number))!)
        default: ObjectKey("id\(number)")
        }
    }

    @Test func wordsOrderAsEntriesCompare() async {
        await propertyCheck(count: 200, input: Gen<UInt64>.bitSet) { seed in
            var random = SplitMix64(seed: seed)
            let components = Int.random(in: 1...3, using: &random)
            // One kind per column (as a property has), with now and then a nil or a NaN.
            let kinds = (0..<components).map { _ in Int.random(in: 0..<5, using: &random) }
            let idKind = Int.random(in: 0..<5, using: &random)
            let count = Int.random(in: 0..<80, using: &random)
            let entries = (0..<count).map { number in
                let values = kinds.map { kind in
                    guard Int.random(in: 0..<40, using: &random) == 0 else { return Self.value(kind, using: &random) }
                    // A nil, or a NaN in a column of doubles or dates.
                    switch kind {
                    case 2: return IndexValue(Date(timeIntervalSinceReferenceDate: .nan))
                    case 3: return IndexValue(Double.nan)
                    default: return IndexValue(Optional<Int>.none)
                    }
                }
                return IndexTree.Entry(key: IndexKey(values), id: Self.id(idKind, number))
            }
            Self.expectSameOrder(entries, "kinds \(kinds), id kind \(idKind)")
        }
    }

    @Test func canonicallyEquivalentStringsTieOnTheirIds() {
        let entries = [
            IndexTree.Entry(key: IndexKey([IndexValue("e\u{301}")]), id: ObjectKey(2)),
            IndexTree.Entry(key: IndexKey([IndexValue("é")]), id: ObjectKey(1)),
            IndexTree.Entry(key: IndexKey([IndexValue("f")]), id: ObjectKey(0)),
        ]
        let sorted = IndexSortKeys.sorted(entries)
        #expect(sorted?.map { $0.id.value(as: Int.self)! } == [0, 1, 2], "é after f; its two spellings tie, in id order")
    }
}
