import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// The README's example, run as written against the in-memory store. The code between the
/// markers is the README's block, verbatim, so a test can compare the two.
@Suite struct ReadmeExampleTests {
    @Test func readmeExampleRuns() async throws {
        // README-EXAMPLE-BEGIN
        let container = try GraphContainer(for: [Post.self, Note.self, Tag.self], store: .inMemory)
        let main = container.mainContext
        main.insert(Note(text: "hi", createdAt: .now, tagIDs: []))   // insert-or-replace by id
        try main.save()

        let recent = try main.fetch(FetchDescriptor<Note>(
            predicate: #Predicate { $0.text.contains("hi") },
            sortBy: [SortDescriptor(\.createdAt, order: .reverse)], fetchLimit: 20))

        try await container.performBackgroundTask { ctx in   // a new background context; saved by you
            ctx.insert(Tag(name: "swift"))
            try ctx.save()
        }
        try await container.flush()   // returns when every commit so far is durable
        // README-EXAMPLE-END

        try container.checkInvariants()
        #expect(recent.map(\.text) == ["hi"])
        #expect(container.version == 2)
        #expect(container.count(of: Note.self) == 1)
        let tags = try main.fetch(FetchDescriptor<ExampleModel.Tag>())
        #expect(tags.map(\.name) == ["swift"])
        #expect(container.storeStatus.durableVersion == 2)
    }
}
