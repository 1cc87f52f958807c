import ExampleModel
import Foundation
import Testing

@testable import GraphStore

/// `container.observe(_:)`: current results at once, new results after each commit that
/// changes them, bursts coalesced, ends on close and on cancellation.
@Suite struct ObserveTests {
    static func post(_ id: Int64, minute: Double, blog: String = "a") -> Post {
        Post(id: id, blogName: blog, date: Date(timeIntervalSinceReferenceDate: minute * 60), summary: "post \(id)")
    }

    static let newest = FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 2)

    @Test func yieldsCurrentResultsThenResultsAfterEachChangingCommit() async throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let context = container.mainContext
        context.insert(Self.post(1, minute: 1))
        try context.save()
        var iterator = container.observe(Self.newest).makeAsyncIterator()
        #expect(try await iterator.next()?.map(\.id) == [1])
        // A commit of another entity, then one that changes nothing observed (an old post
        // outside the window), then one that does: the next element is the last one's results.
        context.insert(Tag(name: "swift"))
        try context.save()
        context.insert(Self.post(2, minute: 2))
        try context.save()
        #expect(try await iterator.next()?.map(\.id) == [2, 1])
        context.insert(Self.post(0, minute: 0))
        try context.save()
        context.insert(Self.post(3, minute: 3, blog: "b"))
        try context.save()
        let next = try await iterator.next()
        #expect(next?.map(\.id) == [3, 2])
        #expect(next?.first?.blogName == "b")
        // An update of an object in the results is a change of the results.
        context.insert(Self.post(3, minute: 3, blog: "c"))
        try context.save()
        #expect(try await iterator.next()?.first?.blogName == "c")
    }

    @Test func aBurstOfCommitsCoalescesToTheLatestResults() async throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let context = container.mainContext
        var iterator = container.observe(Self.newest).makeAsyncIterator()
        #expect(try await iterator.next()?.isEmpty == true)
        for id in 1...50 {
            context.insert(Self.post(Int64(id), minute: Double(id)))
            try context.save()
        }
        #expect(try await iterator.next()?.map(\.id) == [50, 49])
    }

    @Test func endsWhenTheContainerCloses() async throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        var iterator = container.observe(Self.newest).makeAsyncIterator()
        _ = try await iterator.next()
        try await container.close()
        #expect(try await iterator.next() == nil)
        var late = container.observe(Self.newest).makeAsyncIterator()
        _ = try await late.next()
        #expect(try await late.next() == nil)
    }

    @Test func endsWhenTheTaskIsCancelled() async throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let observer = Task {
            var count = 0
            for try await _ in container.observe(Self.newest) {
                count += 1
                startedContinuation.yield()
            }
            return count
        }
        var waiting = started.makeAsyncIterator()
        await waiting.next()
        observer.cancel()
        #expect(try await observer.value == 1)
    }
}

/// `context.model(_:unique:_:)`: find-or-create by a unique key, with pending changes.
@Suite struct UniqueLookupTests {
    @Test func findsTheHolderAsTheContextSeesIt() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let context = container.mainContext
        let swift = Tag(name: "swift")
        context.insert(swift)
        #expect(context.model(Tag.self, unique: \.name, "swift")?.id == swift.id, "pending insert")
        try context.save()
        let other = container.newBackgroundContext()
        #expect(other.model(Tag.self, unique: \.name, "swift")?.id == swift.id, "stored")
        #expect(other.model(Tag.self, unique: \.name, "rust") == nil)
        var renamed = swift
        renamed.name = "swiftlang"
        other.insert(renamed)
        #expect(other.model(Tag.self, unique: \.name, "swift") == nil, "renamed away")
        #expect(other.model(Tag.self, unique: \.name, "swiftlang")?.id == swift.id, "renamed to")
        other.rollback()
        other.delete(Tag.self, id: swift.id)
        #expect(other.model(Tag.self, unique: \.name, "swift") == nil, "deleted")
        let child = other.newChildContext()
        #expect(child.model(Tag.self, unique: \.name, "swift") == nil, "deleted in the parent")
    }
}
