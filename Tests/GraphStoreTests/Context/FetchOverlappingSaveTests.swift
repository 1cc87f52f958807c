import Foundation
@testable import GraphStore
import GraphStoreTestSupport
import Testing

/// A fetch runs without the context's lock: it reads the table, then sorts and filters, then
/// records what it read. A save of the same context in between settles the ids it wrote; the
/// fetch's older reading must not replace that, or the context's next save of those ids is a
/// conflict with its own save (thrown under `.error`, the change silently dropped under
/// `.storeWins`).
@Suite(.serialized) struct FetchOverlappingSaveTests {
    /// A sort key whose comparison can be held, so that a fetch pauses between reading the
    /// table and recording what it read.
    struct HeldKey: Codable, Hashable, Sendable, Comparable {
        var value: Int
        static func < (a: HeldKey, b: HeldKey) -> Bool {
            SortGate.shared.pass()
            return a.value < b.value
        }
    }

    /// Holds the first comparison made while armed, until released.
    final class SortGate: Sendable {
        static let shared = SortGate()
        private let armed = Guarded(false)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        func arm() { armed.withLock { $0 = true } }

        func pass() {
            let hold = armed.withLock { armed in
                defer { armed = false }
                return armed
            }
            guard hold else { return }
            entered.signal()
            release.wait()
        }
    }

    struct Ranked: Entity, Hashable {
        var id: Int
        var rank: HeldKey
        var text: String
    }

    /// A container holding two ranked objects, and a background context of `policy`.
    private func setUp(_ policy: MergePolicy) throws -> (GraphContainer, GraphContext) {
        let container = try GraphContainer(for: [Ranked.self], store: .inMemory)
        container.mainContext.insert(Ranked(id: 1, rank: HeldKey(value: 1), text: "v0"))
        container.mainContext.insert(Ranked(id: 2, rank: HeldKey(value: 2), text: "v0"))
        try container.mainContext.save()
        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        return (container, context)
    }

    /// Runs `fetch` on another thread, holds it inside its sort, runs `meanwhile`, then lets it
    /// finish. A thread of its own, not a task: this test blocks while it waits, and with the
    /// task pool full of tests doing the same, a task might never start.
    private func holdingAFetch(_ fetch: @escaping @Sendable () throws -> Void, meanwhile: () throws -> Void) async throws {
        SortGate.shared.arm()
        let outcome = Guarded<Result<Void, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            outcome.withLock { $0 = Result { try fetch() } }
            finished.signal()
        }.start()
        #expect(SortGate.shared.entered.wait(timeout: .now() + 60) == .success)
        try meanwhile()
        SortGate.shared.release.signal()
        finished.wait()
        try outcome.withLock { $0 }?.get()
    }

    @Test(arguments: [MergePolicy.error, .storeWins])
    func aFetchOfEveryObjectDuringTheContextsSave(policy: MergePolicy) async throws {
        let (container, context) = try setUp(policy)
        var copy = try #require(context.model(Ranked.self, id: 1))
        copy.text = "first"
        context.insert(copy)
        try await holdingAFetch({ _ = try context.fetch(FetchDescriptor<Ranked>(sortBy: [SortDescriptor(\.rank)])) }) {
            try context.save()
        }
        copy.text = "second"
        context.insert(copy)
        try context.save()
        #expect(container.newBackgroundContext().model(Ranked.self, id: 1)?.text == "second")
    }

    @Test(arguments: [MergePolicy.error, .storeWins])
    func aPredicateFetchDuringTheContextsSave(policy: MergePolicy) async throws {
        let (container, context) = try setUp(policy)
        var copy = try #require(context.model(Ranked.self, id: 1))
        let bound = HeldKey(value: 10)
        try await holdingAFetch({ _ = try context.fetch(FetchDescriptor<Ranked>(predicate: #Predicate { $0.rank < bound })) }) {
            copy.text = "first"
            context.insert(copy)
            try context.save()
        }
        copy.text = "second"
        context.insert(copy)
        try context.save()
        #expect(container.newBackgroundContext().model(Ranked.self, id: 1)?.text == "second")
    }

    /// The context's save deletes every object while the fetch is held: the fetch's reading of
    /// the table from before does not bring them back as the base of a re-insert.
    @Test func aFetchDuringTheContextsDeleteOfEveryObject() async throws {
        let (container, context) = try setUp(.error)
        let object = try #require(context.model(Ranked.self, id: 2))
        try await holdingAFetch({ _ = try context.fetch(FetchDescriptor<Ranked>(sortBy: [SortDescriptor(\.rank)])) }) {
            try context.delete(model: Ranked.self)
            try context.save()
        }
        #expect(container.count(of: Ranked.self) == 0)
        context.insert(object)
        try context.save()
        #expect(container.newBackgroundContext().model(Ranked.self, id: 2)?.text == "v0")
    }

    /// The context had not read the entity before its save: what the save wrote is settled all
    /// the same while a fetch runs, and the fetch's older table does not stand for it.
    @Test(arguments: [MergePolicy.error, .storeWins])
    func aFetchDuringASaveOfAnUnreadEntity(policy: MergePolicy) async throws {
        let (container, context) = try setUp(policy)
        context.insert(Ranked(id: 1, rank: HeldKey(value: 1), text: "first"))
        try await holdingAFetch({ _ = try context.fetch(FetchDescriptor<Ranked>(sortBy: [SortDescriptor(\.rank)])) }) {
            try context.save()
        }
        context.insert(Ranked(id: 1, rank: HeldKey(value: 1), text: "second"))
        try context.save()
        #expect(container.newBackgroundContext().model(Ranked.self, id: 1)?.text == "second")
    }

    /// A save whose deletions pass the number of records a context keeps, while a fetch runs:
    /// pruning keeps them until the fetch has recorded, so a re-insert is no conflict.
    @Test(arguments: [MergePolicy.error, .storeWins, .mergeByProperty])
    func aFetchDuringALargeOwnDelete(policy: MergePolicy) async throws {
        let container = try GraphContainer(for: [Ranked.self], store: .inMemory)
        let objects = (1...5_000).map { Ranked(id: $0, rank: HeldKey(value: $0), text: "v0") }
        container.mainContext.insert(contentsOf: objects)
        try container.mainContext.save()
        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        _ = try context.fetch(FetchDescriptor<Ranked>())
        try await holdingAFetch({ _ = try context.fetch(FetchDescriptor<Ranked>(sortBy: [SortDescriptor(\.rank)])) }) {
            for object in objects { context.delete(object) }
            try context.save()
        }
        #expect(container.count(of: Ranked.self) == 0)
        var again = objects[0]
        again.text = "re-inserted"
        context.insert(again)
        try context.save()
        #expect(container.newBackgroundContext().model(Ranked.self, id: 1)?.text == "re-inserted")
    }
}
