import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A fetch of every object of a large table reads its two halves on two threads into one
/// array. It must return every object exactly once, as the one-thread fetch does, whatever the
/// count's parity, and leave pending changes and limits to the one-thread path.
@Suite struct FetchAllTests {
    @Test(arguments: [20_000, 25_001])
    func everyObjectOnceFromBothHalves(count: Int) async throws {
        let posts = Fixtures.posts(count)
        try await withContainer(.inMemory) { container in
            let context = container.newBackgroundContext()
            context.insert(contentsOf: posts)
            try context.save()
            let fetched = try container.mainContext.fetch(FetchDescriptor<Post>())
            #expect(fetched.count == count)
            #expect(fetched.sorted { $0.id < $1.id } == posts)

            // With a pending change and with a limit, the one-thread path gives the same objects.
            var changed = posts[7]
            changed.summary = "pending"
            container.mainContext.insert(changed)
            let overlaid = try container.mainContext.fetch(FetchDescriptor<Post>())
            #expect(overlaid.count == count)
            #expect(overlaid.first { $0.id == changed.id }?.summary == "pending")
            container.mainContext.rollback()
            var limited = FetchDescriptor<Post>()
            limited.fetchLimit = count - 1
            #expect(try Set(container.mainContext.fetch(limited).map(\.id)).count == count - 1)
        }
    }
}
