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
    @Test func aFullDiskMakesSaveThrowAndCommitNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let mountPoint = directory.file("tmpfs")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        guard let tmpfs = SQLiteTmpfs.mount(at: mountPoint, sizeKiB: 512) else {
            #expect(getuid() != 0, "mounting a tmpfs failed although running as root")
            return
        }
        defer { tmpfs.unmount() }
        let url = mountPoint.appendingPathComponent("store.sqlite")
        let container = try SQLiteTestKit.open(url)
        var events = container.storeEvents.makeAsyncIterator()
        for index in 0..<10 { try SQLiteJournalTestKit.saveNote("before \(index)", in: container.mainContext) }
        await SQLiteJournalTestKit.waitUntilWritten(10, events: &events)
        try await container.flush()
        let expected = try SQLiteJournalTestKit.noteTexts(container)

        let filler = mountPoint.appendingPathComponent("filler")
        try Self.fillUp(filler)
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
        try FileManager.default.removeItem(at: filler)
        try container.mainContext.save()
        #expect(container.version == 11)
        try await container.close()

        let reopened = try SQLiteTestKit.open(url)
        #expect(reopened.count(of: Note.self) == 11)
        #expect(try SQLiteJournalTestKit.noteTexts(reopened).filter { $0.hasPrefix("before") } == expected)
        try await reopened.close()
    }

    /// Writes zeros to `url` until the file system is full.
    private static func fillUp(_ url: URL) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                try #require(errno == ENOSPC, "filling up: errno \(errno)")
                return
            }
        }
    }
}

/// A small tmpfs mounted on a directory, for a real `ENOSPC`. Mounting needs root on Linux;
/// ``mount(at:sizeKiB:)`` returns `nil` where it is not possible. (The snapshot suites have
/// the same helper in their own target.)
final class SQLiteTmpfs: Sendable {
    let url: URL

    private init(url: URL) {
        self.url = url
    }

    /// Mounts a tmpfs of `sizeKiB` on `directory` (which must exist), or `nil` when the system
    /// does not allow it.
    static func mount(at directory: URL, sizeKiB: Int) -> SQLiteTmpfs? {
        #if os(Linux)
        guard Glibc.mount("tmpfs", directory.path, "tmpfs", 0, "size=\(sizeKiB)k,mode=0755") == 0 else { return nil }
        return SQLiteTmpfs(url: directory)
        #else
        return nil
        #endif
    }

    /// Unmounts, detaching lazily if still busy.
    func unmount() {
        #if os(Linux)
        if umount2(url.path, 0) != 0 { _ = umount2(url.path, Int32(MNT_DETACH)) }
        #endif
    }
}
