import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A named pipe where a snapshot store or its journal is expected, directly or through a
/// symbolic link, is refused when the container opens, naming it: opening a pipe for reading
/// waits for a writer, so the open used to block forever.
@Suite(.timeLimit(.minutes(1))) struct SpecialFileStoreTests {
    private func expectRefused(_ url: URL, naming path: String, _ open: () throws -> GraphContainer) {
        do {
            let container = try open()
            Issue.record("a container opened on \(url.lastPathComponent)")
            _ = container
        } catch GraphStoreError.fileOperationFailed(let named, _, let reason) {
            #expect(named == path)
            #expect(reason.contains("not a regular file"), "\(reason)")
        } catch {
            Issue.record("expected fileOperationFailed naming \(path), got \(error)")
        }
    }

    @Test func aPipeAsTheStoreIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pipe = directory.file("store.json.gz"), link = directory.file("link.json.gz")
        try #require(mkfifo(pipe.path, 0o600) == 0)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: pipe)
        // Through the link, the store is the file it names (as for every store opened so).
        for url in [pipe, link] {
            expectRefused(url, naming: pipe.path) { try GraphContainer(for: exampleModel, store: .file(url)) }
        }
        #expect(try FileStatus.of(path: pipe.path).get().isRegular == false, "the refused open replaced the pipe")
    }

    @Test func aPipeAsTheJournalIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let first = try GraphContainer(for: exampleModel, store: .file(url))
        first.mainContext.insert(Note(text: "kept", createdAt: Fixtures.epoch))
        try first.mainContext.save()
        try await first.close()
        let snapshot = try Data(contentsOf: url)
        let journal = directory.file("store.json.gz.journal")
        try #require(mkfifo(journal.path, 0o600) == 0)
        expectRefused(url, naming: journal.path) { try GraphContainer(for: exampleModel, store: .file(url)) }
        #expect(try Data(contentsOf: url) == snapshot, "the refused open changed the store")

        try FileManager.default.removeItem(at: journal)
        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(try reopened.mainContext.fetch(FetchDescriptor<Note>()).map(\.text) == ["kept"])
        try await reopened.close()
    }

    /// The lock file beside the store is opened for writing, or for reading when it cannot be
    /// written; opening a pipe for reading alone would wait for a writer.
    @Test func aPipeAsTheLockFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz"), lock = directory.file("store.json.gz.lock")
        try #require(mkfifo(lock.path, 0o600) == 0)
        expectRefused(url, naming: lock.path) { try GraphContainer(for: exampleModel, store: .file(url)) }
        #expect(!FileManager.default.fileExists(atPath: url.path), "the refused open wrote a store")
    }
}
