import Foundation
import Testing

@testable import GraphStore

/// Which index the planner picks, and when it refuses: the property test checks results, this
/// checks that the index is actually used.
@Suite struct IndexPlanTests {
    typealias Item = IndexedFetchPropertyTests.Item

    static var entity: EntityDescription { Schema([Item.self]).entities[0] }

    static func plan(_ descriptor: FetchDescriptor<Item>) -> IndexPlan? {
        IndexPlan.make(for: descriptor, entity: entity)
    }

    @Test func equalityAndRangeUseACompoundIndexExactly() throws {
        let g = 2, d = Date(timeIntervalSinceReferenceDate: 60)
        let plan = try #require(Self.plan(FetchDescriptor(predicate: #Predicate { $0.group == g && $0.date > d })))
        #expect(plan.index == 1)
        #expect(plan.isExact)
    }

    @Test func newestFirstWalksTheDateIndexBackwards() throws {
        let plan = try #require(Self.plan(FetchDescriptor(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20)))
        #expect(plan.index == 0)
        #expect(plan.isOrdered)
        #expect(plan.isReversed)
    }

    @Test func equalityThenSortOnTheNextProperty() throws {
        let g = 1
        let plan = try #require(Self.plan(FetchDescriptor(
            predicate: #Predicate { $0.group == g }, sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20)))
        #expect(plan.index == 1)
        #expect(plan.isOrdered && plan.isReversed && plan.isExact)
    }

    @Test func residualPredicatesAreNotExact() throws {
        let d = Date(timeIntervalSinceReferenceDate: 60)
        let plan = try #require(Self.plan(FetchDescriptor(predicate: #Predicate { $0.date < d && $0.name.contains("x") })))
        #expect(plan.index == 0)
        #expect(!plan.isExact)
    }

    /// A count ignores the sort a fetch would walk in: it counts the range that is exactly
    /// the predicate instead of walking the whole date index.
    @Test func aCountTakesTheExactRangeOverTheSortOrder() throws {
        let s = 0.5
        let descriptor = FetchDescriptor<Item>(predicate: #Predicate { $0.score > s }, sortBy: [SortDescriptor(\.date)])
        let fetching = try #require(Self.plan(descriptor))
        #expect(fetching.index == 0 && fetching.isOrdered && !fetching.isExact)
        let counting = try #require(IndexPlan.make(for: descriptor, entity: Self.entity, counting: true))
        #expect(counting.index == 2 && counting.isExact)
    }

    @Test func disjunctionsAndUnindexedPropertiesScan() {
        let g = 1, h = 2
        #expect(Self.plan(FetchDescriptor(predicate: #Predicate { $0.group == g || $0.group == h })) == nil)
        #expect(Self.plan(FetchDescriptor(predicate: #Predicate { $0.name.contains("x") })) == nil)
        #expect(Self.plan(FetchDescriptor(sortBy: [SortDescriptor(\.name, comparator: .lexical)], fetchLimit: 3)) == nil)
        #expect(Self.plan(FetchDescriptor(sortBy: [SortDescriptor(\.date), SortDescriptor(\.group, order: .reverse)])) == nil)
    }

    @Test func pendingChangesShowAndHideInIndexedResults() throws {
        let container = try GraphContainer(for: [Item.self], store: .inMemory)
        let context = container.mainContext
        func item(_ id: Int, minute: Double, group: Int = 0) -> Item {
            Item(id: id, group: group, score: 0, date: Date(timeIntervalSinceReferenceDate: minute * 60), name: "n", rank: nil, ratio: 0)
        }
        for id in 0..<10 { context.insert(item(id, minute: Double(id))) }
        try context.save()
        let newest = FetchDescriptor<Item>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 3)
        #expect(try context.fetch(newest).map(\.id) == [9, 8, 7])
        context.insert(item(20, minute: 100))        // inserted: shows first
        context.delete(Item.self, id: 9)             // deleted: hides
        context.insert(item(8, minute: -1))          // changed: moves to the end
        #expect(try context.fetch(newest).map(\.id) == [20, 7, 6])
        let g = 0
        #expect(try context.fetchCount(FetchDescriptor<Item>(predicate: #Predicate<Item> { $0.group == g })) == 10)
        let other = container.newBackgroundContext()
        #expect(try other.fetch(newest).map(\.id) == [9, 8, 7])
        try context.save()
        #expect(try other.fetch(newest).map(\.id) == [20, 7, 6])
        try container.checkInvariants()
    }
}
