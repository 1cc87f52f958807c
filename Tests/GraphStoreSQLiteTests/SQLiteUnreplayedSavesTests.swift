import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// `graphstore` reads a SQLite store's database alone; while the journal beside it holds saves
/// the database does not, it refuses instead of copying an older store.
@Suite struct SQLiteUnreplayedSavesTests {
    @Test func aCrashLeftStoreIsNotMigratedWithoutItsJournal() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let gate = WriterGate()
        var options = SQLiteStoreOptions(durability: .journaled)
        options.beforeTransaction = { _ in gate.pass() }
        let container = try SQLiteTestKit.open(url, options: options)
        var events = container.storeEvents.makeAsyncIterator()
        for index in 0..<3 { try SQLiteJournalTestKit.saveNote("written \(index)", in: container.mainContext) }
        await SQLiteJournalTestKit.waitUntilWritten(3, events: &events)
        gate.close()
        for index in 0..<2 { try SQLiteJournalTestKit.saveNote("journaled \(index)", in: container.mainContext) }
        await gate.waitUntilReached()
        let crashed = try SQLiteJournalTestKit.crashCopy(of: url, to: directory.file("crashed"))
        gate.open()
        try await container.close()

        // SQLite's shared-memory index (-shm) is made by any reader; the data files must not change.
        func dataFiles() -> [String: Data] {
            SQLiteJournalTestKit.snapshot(of: crashed.deletingLastPathComponent()).filter { !$0.key.hasSuffix("-shm") }
        }
        let before = dataFiles()
        let destination = directory.file("out.json")
        let error = try #require(throws: GraphStoreError.self) {
            try Migration.sqliteToSnapshot(from: crashed, to: destination, format: .json, compression: .none)
        }
        guard case .fileOperationFailed(let path, _, let reason) = error else {
            Issue.record("expected fileOperationFailed, got \(error)")
            return
        }
        #expect(path == SQLiteJournalTestKit.journal(of: crashed).path)
        #expect(reason.contains("2 saves"), "\(reason)")
        #expect(!FileManager.default.fileExists(atPath: destination.path), "no destination is written")
        #expect(dataFiles() == before, "no source file changed")
        #expect(before.count == 3, "database, -wal and journal")

        // `inspect` and `verify` would describe an older store than the app was told is saved.
        for read in [SQLiteStoreInfo.inspect, { try SQLiteStoreInfo.verify($0) }] {
            let refused = try #require(throws: GraphStoreError.self) { _ = try read(crashed) }
            guard case .fileOperationFailed(let journal, _, let why) = refused else {
                Issue.record("expected fileOperationFailed, got \(refused)")
                continue
            }
            #expect(journal == SQLiteJournalTestKit.journal(of: crashed).path)
            #expect(why.contains("2 saves"))
        }
        #expect(dataFiles() == before, "no source file changed")

        // Opened and closed once, the database holds every save and migrates.
        try await SQLiteTestKit.open(crashed).close()
        try Migration.sqliteToSnapshot(from: crashed, to: destination, format: .json, compression: .none)
        #expect(try GenericSnapshot.read(from: destination).objects(of: "Note").count == 5)
        #expect(try SQLiteStoreInfo.verify(crashed).entities.first { $0.name == "Note" }?.rows == 5)
    }

    /// A journal of another store beside the database (copied there, or left by a store of the
    /// same name): the app refuses to open it, so `verify`, `inspect` and a migration refuse it
    /// too, naming the journal and both lineages, rather than calling the store sound.
    @Test func aJournalOfAnotherStoreIsRefusedAsTheAppRefusesIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let container = try SQLiteTestKit.open(url)
        for index in 0..<3 { try SQLiteJournalTestKit.saveNote("saved \(index)", in: container.mainContext) }
        try await container.close()
        let journal = SQLiteJournalTestKit.journal(of: url)
        let foreign = UUID()
        try JournalRecordFrame.header(lineage: foreign, baseVersion: 0).write(to: journal)

        let appError = try #require(throws: GraphStoreError.self) { _ = try SQLiteTestKit.open(url) }
        let destination = directory.file("out.json")
        let reads: [(URL) throws -> Void] = [
            { _ = try SQLiteStoreInfo.verify($0) }, { _ = try SQLiteStoreInfo.inspect($0) }, { _ = try Migration.readSQLite(from: $0) },
            { try Migration.sqliteToSnapshot(from: $0, to: destination, format: .json, compression: .none) },
        ]
        for read in reads {
            let error = try #require(throws: GraphStoreError.self) { try read(url) }
            guard case .damagedFile(let path, let offset, let reason) = error else {
                Issue.record("expected damagedFile, got \(error)")
                continue
            }
            #expect(path == journal.path)
            #expect(offset == 16)
            #expect(reason.contains("belongs to another store") && reason.contains(foreign.uuidString), "\(reason)")
            #expect(error == appError, "the reader reports what opening reports")
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path), "no destination is written")
    }
}
