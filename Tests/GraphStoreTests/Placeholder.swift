import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

@Suite struct SmokeTests {
    @Test func insertSaveFetch() throws {
        let container = try Fixtures.inMemoryContainer()
        let main = container.mainContext
        let tag = Tag(name: "swift")
        main.insert(tag)
        main.insert(Note(text: "hi there", createdAt: Fixtures.epoch, tagIDs: [tag.id]))
        main.insert(Note(text: "bye", createdAt: Fixtures.epoch.addingTimeInterval(1), tagIDs: []))
        #expect(main.hasChanges)
        try main.save()
        #expect(!main.hasChanges)
        let found = try main.fetch(FetchDescriptor<Note>(
            predicate: #Predicate { $0.text.contains("hi") },
            sortBy: [SortDescriptor(\.createdAt, order: .reverse)], fetchLimit: 20))
        #expect(found.map(\.text) == ["hi there"])
        main.delete(tag)
        try main.save()
        #expect(try main.fetch(FetchDescriptor<Note>()).allSatisfy { $0.tagIDs.isEmpty })
        try container._checkInvariants()
    }
}
