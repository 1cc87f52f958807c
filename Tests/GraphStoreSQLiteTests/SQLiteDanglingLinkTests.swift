import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A SQLite store opened through a symbolic link whose target does not exist yet is the file
/// the link names: SQLite creates that file, the journal is beside it, the link stays a link,
/// and both names are one store.
@Suite struct SQLiteDanglingLinkTests {
    private func tagNames(_ container: GraphContainer) throws -> Set<String> {
        Set(try container.mainContext.fetch(FetchDescriptor<ExampleModel.Tag>()).map(\.name))
    }

    @Test func aLinkToADatabaseNotYetCreatedIsFollowed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let volume = directory.file("volume")
        try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
        let target = volume.appendingPathComponent("store.sqlite"), link = directory.file("store.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "volume/store.sqlite")

        let container = try SQLiteTestKit.open(link)
        container.mainContext.insert(ExampleModel.Tag(name: "through the link"))
        try container.mainContext.save()
        #expect(FileManager.default.fileExists(atPath: target.path + ".journal"))
        #expect(!FileManager.default.fileExists(atPath: link.path + ".journal"))
        #expect(throws: GraphStoreError.self) { _ = try SQLiteTestKit.open(target) }
        try await container.close()

        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil, "the link was replaced by a file")
        #expect(try directory.entries() == ["store.sqlite", "volume"], "nothing is created beside the link")
        let reopened = try SQLiteTestKit.open(target)
        #expect(try tagNames(reopened) == ["through the link"])
        try await reopened.close()
    }

    @Test func aLinkLoopIsAClearErrorAndCreatesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = directory.file("a.sqlite"), second = directory.file("b.sqlite")
        try FileManager.default.createSymbolicLink(atPath: first.path, withDestinationPath: "b.sqlite")
        try FileManager.default.createSymbolicLink(atPath: second.path, withDestinationPath: "a.sqlite")

        let error = #expect(throws: GraphStoreError.self) { _ = try SQLiteTestKit.open(first) }
        guard case .fileOperationFailed(let path, _, let reason)? = error else {
            Issue.record("expected fileOperationFailed, got \(String(describing: error))")
            return
        }
        #expect(path == first.path)
        #expect(reason.contains("loop"), "\(reason)")
        #expect(try directory.entries() == ["a.sqlite", "b.sqlite"])
    }
}
