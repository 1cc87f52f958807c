import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

extension CoreDataModelImportTests {
    /// What the generated types read from the migrated snapshot.
    static func check(_ container: GraphContainer) async throws {
        let context = container.mainContext
        let groceries = try #require(context.model(Note.self, id: 1))
        #expect(groceries.isArchived && groceries.rating == 5 && groceries.views == .max && groceries.ratio == 1.5)
        #expect(groceries.createdAt == Date(timeIntervalSinceReferenceDate: 700_000_000.5))
        #expect(groceries.uuid == CoreDataModelTestKit.noteUUID && groceries.link == URL(string: "https://example.com/a"))
        #expect(groceries.price == Decimal(string: "19.99") && groceries.image == CoreDataModelTestKit.inlineImage)
        #expect(groceries.folder == 1 && groceries.tags == [1, 2])
        #expect(context.model(Note.self, id: 3)?.image == CoreDataModelTestKit.externalImage)
        #expect(context.model(Folder.self, id: 1)?.notes == [3, 1])
        #expect(try context.fetch(FetchDescriptor<Tag>()).map(\.name).sorted() == ["linux", "swift"])
        #expect(try context.fetchCount(FetchDescriptor<Item>()) == 1)
        // The delete rules came along: deleting the folder cascades to its notes.
        context.delete(Folder.self, id: 1)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Note>()) == 1)
    }
}
