import ExampleModel
import Foundation
import Observation
import Testing

@testable import GraphStore

/// `FetchedResults`: results at once, observed changes on the main actor after a commit that
/// changes them, none after one that does not, and an end on release and on close.
@MainActor @Suite struct FetchedResultsTests {
    nonisolated static func post(_ id: Int64, minute: Double, blog: String = "a") -> Post {
        Post(id: id, blogName: blog, date: Date(timeIntervalSinceReferenceDate: minute * 60), summary: "post \(id)")
    }

    nonisolated static let newest = FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 2)

    /// The ids of `results.objects` after each change an observer is told of, in order.
    static func observedChanges(of results: FetchedResults<Post>) -> AsyncStream<[Int64]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [Int64].self)
        track(results, continuation)
        return stream
    }

    static func track(_ results: FetchedResults<Post>, _ continuation: AsyncStream<[Int64]>.Continuation) {
        withObservationTracking {
            _ = results.objects
        } onChange: {
            // Called before the assignment: read the value once it is made, then track again.
            Task { @MainActor in
                continuation.yield(results.objects.map(\.id))
                track(results, continuation)
            }
        }
    }

    @Test func holdsTheResultsAtOnce() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let context = container.mainContext
        context.insert(Self.post(1, minute: 1))
        context.insert(Self.post(2, minute: 2))
        context.insert(Self.post(3, minute: 3))
        try context.save()
        let results = try FetchedResults(Self.newest, in: container)
        #expect(results.objects.map(\.id) == [3, 2])
        #expect(results.lastDifference == FetchedResultsDifference(inserted: [0, 1]))
        #expect(results.error == nil)
    }

    @Test func aCommitThatChangesTheResultsFiresTheObservation() async throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let context = container.mainContext
        context.insert(Self.post(1, minute: 1))
        try context.save()
        let results = try FetchedResults(Self.newest, in: container)
        let (fired, firedContinuation) = AsyncStream.makeStream(of: Void.self)
        withObservationTracking {
            _ = results.objects
        } onChange: {
            firedContinuation.yield()
        }
        context.insert(Self.post(2, minute: 2))
        try context.save()
        var waiting = fired.makeAsyncIterator()
        await waiting.next()
        // The assignment that fired the observation ran on the main actor before this resumed.
        #expect(results.objects.map(\.id) == [2, 1])
        #expect(results.lastDifference == FetchedResultsDifference(inserted: [0]))
    }

    @Test func aCommitThatLeavesTheResultsAloneChangesNothing() async throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let context = container.mainContext
        context.insert(Self.post(1, minute: 1))
        context.insert(Self.post(2, minute: 2))
        try context.save()
        let results = try FetchedResults(Self.newest, in: container)
        let before = results.objects
        var changes = Self.observedChanges(of: results).makeAsyncIterator()
        // Another entity, then a post outside the window: neither changes the results.
        context.insert(Tag(name: "swift"))
        try context.save()
        context.insert(Self.post(0, minute: 0))
        try context.save()
        #expect(results.objects.map(\.id) == before.map(\.id))
        // Then one that does. Had either commit above assigned `objects`, the observer would
        // have been told of that first, with the old ids.
        var moved = Self.post(1, minute: 3)
        moved.summary = "moved up"
        context.insert(moved)
        try context.save()
        #expect(await changes.next() == [1, 2])
        #expect(results.objects.first?.summary == "moved up")
        #expect(results.lastDifference == FetchedResultsDifference(moved: [.init(from: 1, to: 0)]))
        // An update in place is reported as such.
        var edited = results.objects[1]
        edited.summary = "edited"
        context.insert(edited)
        try context.save()
        #expect(await changes.next() == [1, 2])
        #expect(results.objects[1].summary == "edited")
        #expect(results.lastDifference == FetchedResultsDifference(updated: [1]))
    }

    @Test func stopsObservingWhenReleased() async throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        var results: FetchedResults<Post>? = try FetchedResults(Self.newest, in: container)
        let isAlive = { [weak results] in results != nil }
        let observation = try #require(results?.observation)
        #expect(container.core.openSignalCount == 1)
        results = nil
        #expect(!isAlive(), "the observing task does not keep the results alive")
        await observation.value
        #expect(container.core.openSignalCount == 0)
    }

    @Test func stopsObservingWhenTheContainerCloses() async throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let context = container.mainContext
        context.insert(Self.post(1, minute: 1))
        try context.save()
        let results = try FetchedResults(Self.newest, in: container)
        let observation = try #require(results.observation)
        try await container.close()
        await observation.value
        #expect(results.objects.map(\.id) == [1], "the last results are kept")
        // A container closed before the results are made: they hold the results and end at once.
        let late = try FetchedResults(Self.newest, in: container)
        #expect(late.objects.map(\.id) == [1])
        await late.observation?.value
    }
}

/// `container.observeChanges(_:)`: the observed results with their differences.
@Suite struct ObserveChangesTests {
    @Test func yieldsEveryObjectInsertedThenTheDifferenceOfEachChange() async throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let context = container.mainContext
        for id in 1...4 { context.insert(FetchedResultsTests.post(Int64(id), minute: Double(id))) }
        try context.save()
        let all = FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)])
        var changes = container.observeChanges(all).makeAsyncIterator()
        let first = try #require(try await changes.next())
        #expect(first.objects.map(\.id) == [4, 3, 2, 1])
        #expect(first.difference == FetchedResultsDifference(inserted: [0, 1, 2, 3]))
        // Post 1 to the top, post 2 deleted, post 5 inserted after 3, post 3 edited in place.
        context.insert(FetchedResultsTests.post(1, minute: 10))
        context.delete(Post.self, id: 2)
        context.insert(FetchedResultsTests.post(5, minute: 2.5))
        context.insert(FetchedResultsTests.post(3, minute: 3, blog: "b"))
        try context.save()
        let next = try #require(try await changes.next())
        #expect(next.objects.map(\.id) == [1, 4, 3, 5])
        #expect(next.difference == FetchedResultsDifference(
            removed: [2], inserted: [3], moved: [.init(from: 3, to: 0)], updated: [2]))
        try await container.close()
        #expect(try await changes.next()?.objects == nil)
    }
}
