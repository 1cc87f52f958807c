import Foundation
import Testing

@testable import GraphStore

/// `fetchLimit: .max` is a common way to say "no limit": the window's end (limit plus offset)
/// saturates instead of overflowing, and no buffer is sized by the limit, on the indexed and
/// the scanning path.
@Suite struct FetchLimitBoundsTests {
    typealias Item = IndexedFetchPropertyTests.Item

    static func item(_ id: Int) -> Item {
        Item(id: id, group: id % 3, score: 0, date: Date(timeIntervalSinceReferenceDate: Double(id)), name: "n\(id)", rank: nil, ratio: 0)
    }

    @Test(arguments: [0, 1, 3, Int.max])
    func theLargestLimitReturnsEveryMatchAfterTheOffset(offset: Int) throws {
        let container = try GraphContainer(for: [Item.self], store: .inMemory)
        let context = container.mainContext
        for id in 0..<5 { context.insert(Self.item(id)) }
        try context.save()
        let expected = Array((0..<5).dropFirst(min(offset, 5)))
        // Through the date index, then by scanning (no index sorts by name lexically).
        let indexed = FetchDescriptor<Item>(sortBy: [SortDescriptor(\.date)], fetchLimit: .max, fetchOffset: offset)
        #expect(try context.fetch(indexed).map(\.id) == expected)
        let scanned = FetchDescriptor<Item>(sortBy: [SortDescriptor(\.name, comparator: .lexical)], fetchLimit: .max, fetchOffset: offset)
        #expect(try context.fetch(scanned).map(\.id) == expected)
        let unsorted = FetchDescriptor<Item>(fetchLimit: .max, fetchOffset: offset)
        #expect(try context.fetch(unsorted).count == expected.count)
        #expect(try context.fetchCount(scanned) == expected.count)
    }
}
