import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// A store opened through a symbolic link is the file the link points to: one lock, one
/// journal, and writes that replace the file, not the link.
@Suite struct SymbolicLinkStoreTests {
    private func texts(_ container: GraphContainer) throws -> Set<String> {
        Set(try container.mainContext.fetch(FetchDescriptor<Note>()).map(\.text))
    }

    /// A closed store holding the note "first", and a link to it.
    private func makeStore(in directory: TemporaryDirectory) async throws -> (url: URL, link: URL) {
        let url = directory.file("store.json.gz"), link = directory.file("link.json.gz")
        let first = try GraphContainer(for: exampleModel, store: .file(url))
        first.mainContext.insert(Note(text: "first", createdAt: Fixtures.epoch))
        try first.mainContext.save()
        try await first.close()
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        return (url, link)
    }

    @Test func aSecondContainerThroughALinkIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, link) = try await makeStore(in: directory)
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(throws: GraphStoreError.storeLocked(path: url.path)) {
            _ = try GraphContainer(for: exampleModel, store: .file(link))
        }
        try await container.close()
    }

    @Test func savesThroughALinkReachItsFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, link) = try await makeStore(in: directory)
        let throughLink = try GraphContainer(for: exampleModel, store: .file(link))
        throughLink.mainContext.insert(Note(text: "saved through the link", createdAt: Fixtures.epoch))
        try throughLink.mainContext.save()
        try await throughLink.close()

        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil, "the link was replaced by a file")
        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(try texts(reopened) == ["first", "saved through the link"])
        try await reopened.close()
    }

    /// The journal a killed app leaves after saving through a link is the file's: opening the
    /// file by its own name replays it.
    @Test func aJournalWrittenThroughALinkIsTheFiles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, link) = try await makeStore(in: directory)
        let app = try GraphContainer(for: exampleModel, store: .file(link, coalescingInterval: .seconds(3600)))
        app.mainContext.insert(Note(text: "only in the journal", createdAt: Fixtures.epoch))
        try app.mainContext.save()
        #expect(FileManager.default.fileExists(atPath: url.path + ".journal"))
        #expect(!FileManager.default.fileExists(atPath: link.path + ".journal"))
        let crashed = try TemporaryDirectory()
        defer { crashed.remove() }
        let copy = try JournalStoreTests.crashCopy(of: url, into: crashed)
        try await app.close()

        let reopened = try GraphContainer(for: exampleModel, store: .file(copy))
        #expect(try texts(reopened) == ["first", "only in the journal"])
        try await reopened.close()
    }
}
