import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// After a failed fsync of the journal, a later successful one proves nothing about the records
/// before it (the kernel reports a failed write-back once), so `flush()` returns only once a
/// transaction holds them.
@Suite struct SQLiteJournalFailedFsyncTests {
    struct Blocked: Error {}

    @Test func aFlushAfterAFailedFsyncWaitsForATransaction() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let faults = FaultInjectingFileSystem()
        let blocked = Guarded(false)
        var options = SQLiteStoreOptions()
        options.journalFileSystem = faults
        options.journalSyncInterval = .seconds(3600)
        options.beforeTransaction = { _ in if blocked.withLock({ $0 }) { throw Blocked() } }
        let container = try SQLiteTestKit.open(url, options: options)
        try SQLiteJournalTestKit.saveNote("a", in: container.mainContext)
        try await container.flush()

        // The database takes no rows for now, and the journal's fsync fails once.
        blocked.withLock { $0 = true }
        faults.inject(.fsync(errno: EIO))
        try SQLiteJournalTestKit.saveNote("b", in: container.mainContext)
        await #expect(throws: (any Error).self) { try await container.flush() }
        faults.clearFaults()
        // The journal's fsync succeeds now, but "b" is not known to be on the device: the flush
        // waits for the database, which still takes no rows.
        await #expect(throws: (any Error).self) { try await container.flush() }

        blocked.withLock { $0 = false }
        try await container.flush()
        // The database's files alone, without the journal, hold "b" (copied while the store is
        // open: its lock keeps other readers out).
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: url.path + suffix) {
            try FileManager.default.copyItem(atPath: url.path + suffix, toPath: scratch.file("copy.sqlite").path + suffix)
        }
        #expect(try await SQLiteJournalTestKit.pythonNoteTexts(scratch.file("copy.sqlite")) == ["a", "b"])
        try SQLiteJournalTestKit.saveNote("c", in: container.mainContext)
        try await container.flush()
        try await container.close()
    }
}
