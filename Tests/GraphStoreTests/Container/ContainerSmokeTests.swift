import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// The shortest path through the API: insert, save, fetch, delete with a delete rule.
@Suite struct ContainerSmokeTests {
    static let tag = Tag(name: "swift")
    static let notes = [
        Note(text: "hi there", createdAt: Fixtures.epoch, tagIDs: [tag.id]),
        Note(text: "bye", createdAt: Fixtures.epoch.addingTimeInterval(1), tagIDs: []),
    ]

    @Test(arguments: StoreKind.allCases)
    func insertSaveFetchDelete(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let main = container.mainContext
            main.insert(Self.tag)
            for note in Self.notes { main.insert(note) }
            #expect(main.hasChanges)
            try main.save()
            try container.checkInvariants()
            #expect(!main.hasChanges)
            #expect(container.version == 1)
            #expect(container.count(of: Note.self) == 2)

            let found = try main.fetch(FetchDescriptor<Note>(
                predicate: #Predicate { $0.text.contains("hi") },
                sortBy: [SortDescriptor(\.createdAt, order: .reverse)], fetchLimit: 20))
            #expect(found == [Self.notes[0]])

            main.delete(Self.tag)
            try main.save()
            try container.checkInvariants()
            #expect(container.count(of: Tag.self) == 0)
            #expect(try main.fetch(FetchDescriptor<Note>()).allSatisfy { $0.tagIDs.isEmpty })
        }
    }

    @Test(arguments: StoreKind.allCases)
    func saveWithoutChangesCommitsNothing(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try container.mainContext.save()
            try container.checkInvariants()
            #expect(container.version == 0)
        }
    }
}
