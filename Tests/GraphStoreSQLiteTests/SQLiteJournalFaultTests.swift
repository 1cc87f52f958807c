import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A journal append that the disk refuses makes `save()` throw and commit nothing, on a real
/// full file system (a small tmpfs; mounting one needs root).
@Suite struct SQLiteJournalFaultTests {
    @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
    func aFullDiskMakesSaveThrowAndCommitNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 512)
        let mountPoint = tmpfs.url
        defer { tmpfs.unmount() }
        let url = mountPoint.appendingPathComponent("store.sqlite")
        let container = try SQLiteTestKit.open(url)
        var events = container.storeEvents.makeAsyncIterator()
        for index in 0..<10 { try SQLiteJournalTestKit.saveNote("before \(index)", in: container.mainContext) }
        await SQLiteJournalTestKit.waitUntilWritten(10, events: &events)
        try await container.flush()
        let expected = try SQLiteJournalTestKit.noteTexts(container)

        let filler = try tmpfs.fillUp()
        container.mainContext.insert(Note(text: String(repeating: "does not fit ", count: 2_000), createdAt: Fixtures.epoch))
        let error = SQLiteTestKit.storeError { try container.mainContext.save() }
        guard case .fileOperationFailed(let path, _, let reason) = error else {
            Issue.record("expected fileOperationFailed, got \(String(describing: error))")
            return
        }
        #expect(path == SQLiteJournalTestKit.journal(of: url).path)
        #expect(reason.contains("space"))
        // Nothing committed; the context keeps its change to retry.
        #expect(container.version == 10)
        #expect(container.count(of: Note.self) == 10)
        #expect(try container.newBackgroundContext().fetch(FetchDescriptor<Note>()).map(\.text).sorted() == expected)
        #expect(container.mainContext.hasChanges)

        // Room again: the same save goes through.
        try tmpfs.removeFiller(filler)
        try container.mainContext.save()
        #expect(container.version == 11)
        try await container.close()

        let reopened = try SQLiteTestKit.open(url)
        #expect(reopened.count(of: Note.self) == 11)
        #expect(try SQLiteJournalTestKit.noteTexts(reopened).filter { $0.hasPrefix("before") } == expected)
        try await reopened.close()
    }
}
