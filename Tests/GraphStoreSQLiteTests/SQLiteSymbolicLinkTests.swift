import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A SQLite store opened through a symbolic link keeps its journal beside the file the link
/// points to, where an open by the file's own name finds it.
@Suite struct SQLiteSymbolicLinkTests {
    @Test func theJournalOfAStoreOpenedThroughALinkIsTheFiles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite"), link = directory.file("link.sqlite")
        let first = try SQLiteTestKit.open(url)
        first.mainContext.insert(ExampleModel.Tag(name: "first"))
        try first.mainContext.save()
        try await first.close()
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)

        let container = try SQLiteTestKit.open(link)
        container.mainContext.insert(ExampleModel.Tag(name: "through the link"))
        try container.mainContext.save()
        #expect(FileManager.default.fileExists(atPath: url.path + ".journal"))
        #expect(!FileManager.default.fileExists(atPath: link.path + ".journal"))
        #expect(throws: GraphStoreError.self) { _ = try SQLiteTestKit.open(url) }
        try await container.close()

        let reopened = try SQLiteTestKit.open(url)
        #expect(Set(try reopened.mainContext.fetch(FetchDescriptor<ExampleModel.Tag>()).map(\.name)) == ["first", "through the link"])
        try await reopened.close()
    }
}
