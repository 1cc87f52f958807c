import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// An observer whose fetch threw yields the next results that fetch again, even when they equal
/// the results before the error: a consumer showing the error (``FetchedResults/error``) must
/// learn that fetching works again, not wait for the results to change.
@Suite struct ObserveAfterErrorTests {
    typealias Item = IndexedFetchPropertyTests.Item

    static func item(_ id: Int, rank: Int?) -> Item {
        Item(id: id, group: 0, score: 0, date: Date(timeIntervalSinceReferenceDate: Double(id)), name: "n\(id)", rank: rank, ratio: 0)
    }

    @Test func theResultsAfterAnErrorAreYieldedEvenWhenUnchanged() async throws {
        let container = try GraphContainer(for: [Item.self], store: .inMemory)
        // Before the fix the observer skipped the unchanged results and waited for ever.
        let (first, threw, afterError, changed) = try await withTimeout(seconds: deadlockBound) {
            let context = container.newBackgroundContext()
            context.insert(Self.item(1, rank: 5))
            try context.save()
            // Throws on an item without a rank.
            let descriptor = FetchDescriptor<Item>(predicate: #Predicate { $0.rank! > 0 }, sortBy: [SortDescriptor(\.id)])
            var iterator = container.observe(descriptor).makeAsyncIterator()
            let first = try await iterator.next()?.map(\.id)

            context.insert(Self.item(2, rank: nil))
            try context.save()
            var threw = false
            do { _ = try await iterator.next() } catch is GraphStoreError { threw = true }

            // One commit: the item that made it throw goes, one that does not match comes.
            context.delete(Item.self, id: 2)
            context.insert(Self.item(3, rank: -1))
            try context.save()
            let afterError = try await iterator.next()?.map(\.id)

            context.insert(Self.item(4, rank: 7))
            try context.save()
            let changed = try await iterator.next()?.map(\.id)
            return (first, threw, afterError, changed)
        }
        #expect(first == [1])
        #expect(threw)
        #expect(afterError == [1], "the results after the error were not yielded")
        #expect(changed == [1, 4])
    }
}
