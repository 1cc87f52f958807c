import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Reading a store's file alone (what `graphstore` does) refuses while its journal holds saves
/// the file does not: the reader would otherwise see, and copy, a store older than what the
/// app was told is saved.
@Suite struct UnreplayedSavesTests {
    @Test func aCrashLeftStoreIsNotReadWithoutItsJournal() async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let (url, texts) = try await JournalStoreTests.crashedStore(notes: 3, in: scratch, snapshotFirst: true)
        let journal = url.path + ".journal"
        let before = JournalStoreTests.files(url)

        let saves = try #require(try UnreplayedSaves.find(forStoreAt: url, fileVersion: 1))
        #expect(saves == UnreplayedSaves(journalPath: journal, count: 3, fileVersion: 1, newestVersion: 4))
        #expect(try UnreplayedSaves.find(forStoreAt: url, fileVersion: 4) == nil, "records the file holds are not counted")

        let error = try #require(throws: GraphStoreError.self) { try GenericSnapshot.read(from: url) }
        guard case .fileOperationFailed(let path, let operation, let reason) = error else {
            Issue.record("expected fileOperationFailed, got \(error)")
            return
        }
        #expect(path == journal)
        #expect(operation.contains(url.path))
        #expect(reason.contains("3 saves") && reason.contains("store version 2 to 4"), "\(reason)")
        #expect(JournalStoreTests.files(url) == before, "reading changed no file")

        // Opened once by the app and closed, the store's file holds every save and reads alone.
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        try await container.close()
        let snapshot = try GenericSnapshot.read(from: url)
        #expect(snapshot.header.storeVersion == 4)
        #expect(snapshot.objects(of: "Note").count == texts.count)
    }

    /// A reader that read an older file while the app wrote a newer one and dropped the
    /// journal records it covers finds a journal that continues a newer version than its file:
    /// refused, even with no record left, instead of reading a store missing those saves.
    @Test func aJournalContinuingANewerFileThanTheOneReadIsRefused() async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let (url, _) = try await JournalStoreTests.crashedStore(notes: 3, in: scratch, snapshotFirst: true)
        let journal = URL(fileURLWithPath: url.path + ".journal")
        let contents = try #require(try JournalReplay.read(journal.path))
        // As the app leaves it after a snapshot of version 4 dropped every record.
        let rotated = JournalFormatV1.encodeHeader(JournalFormatV1.Header(lineage: try #require(contents.lineage), baseVersion: 4))
        try Data(rotated).write(to: journal)

        #expect(try UnreplayedSaves.find(forStoreAt: url, fileVersion: 1) == UnreplayedSaves(journalPath: journal.path, count: 3, fileVersion: 1, newestVersion: 4))
        #expect(try UnreplayedSaves.find(forStoreAt: url, fileVersion: 4) == nil)
        let error = try #require(throws: GraphStoreError.self) { try GenericSnapshot.read(from: url) }
        #expect(error.description.contains("store version 2 to 4"), "\(error)")
    }

    /// Read through a symbolic link, the store's journal beside the file it points to still
    /// counts: the tool would otherwise read the file without those saves.
    @Test func aStoreReadThroughASymbolicLinkFindsItsJournal() async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let (url, _) = try await JournalStoreTests.crashedStore(notes: 3, in: scratch, snapshotFirst: true)
        let links = try TemporaryDirectory()
        defer { links.remove() }
        let link = links.file("link.json.gz")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)

        let saves = try #require(try UnreplayedSaves.find(forStoreAt: link, fileVersion: 1))
        #expect(saves.journalPath == url.path + ".journal")
        #expect(saves.count == 3)
        #expect(throws: GraphStoreError.self) { try GenericSnapshot.read(from: link) }
    }

    @Test func aStoreWithoutJournalOrWithAnEmptyOneReads() async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let url = scratch.file("store.json.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        container.mainContext.insert(Note(text: "one", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        try await container.close()
        #expect(try UnreplayedSaves.find(forStoreAt: url, fileVersion: 1) == nil)
        try Data().write(to: URL(fileURLWithPath: url.path + ".journal"))
        #expect(try UnreplayedSaves.find(forStoreAt: url, fileVersion: 1) == nil)
        #expect(try GenericSnapshot.read(from: url).objects(of: "Note").count == 1)
    }

    @Test func aDamagedJournalIsNamedWithItsByte() async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let (url, _) = try await JournalStoreTests.crashedStore(notes: 3, in: scratch, snapshotFirst: true)
        let journal = URL(fileURLWithPath: url.path + ".journal")
        var bytes = try Data(contentsOf: journal)
        bytes[60] ^= 0x40  // inside the first record, which is followed by two more
        try bytes.write(to: journal)
        let error = try #require(throws: GraphStoreError.self) { try GenericSnapshot.read(from: url) }
        guard case .damagedFile(let path, let offset, _) = error else {
            Issue.record("expected damagedFile, got \(error)")
            return
        }
        #expect(path == journal.path)
        #expect(offset != nil)
    }

    /// A journal copied beside another store's file is refused as opening refuses it, even
    /// when its records are all older than that file's version: the app would not open it.
    @Test func aJournalOfAnotherStoreIsRefusedAsTheAppRefusesIt() async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let (crashed, _) = try await JournalStoreTests.crashedStore(notes: 2, in: scratch, snapshotFirst: true)
        let url = scratch.file("other.json.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        for number in 0..<5 {
            container.mainContext.insert(Note(text: "other \(number)", createdAt: Fixtures.epoch))
            try container.mainContext.save()
        }
        try await container.close()
        let fileVersion = try GenericSnapshot.read(from: url).header.storeVersion
        let journal = url.path + ".journal"
        try FileManager.default.copyItem(atPath: crashed.path + ".journal", toPath: journal)
        let foreign = try #require(try JournalReplay.read(journal)?.lineage)
        #expect(try UnreplayedSaves.find(forStoreAt: url, fileVersion: fileVersion) == nil, "its records are all older than the file")
        let before = JournalStoreTests.files(url)

        let error = try #require(throws: GraphStoreError.self) { try GenericSnapshot.read(from: url) }
        guard case .damagedFile(let path, let offset, let reason) = error else {
            Issue.record("expected damagedFile, got \(error)")
            return
        }
        #expect(path == journal)
        #expect(offset == 16)
        #expect(reason.contains("belongs to another store") && reason.contains(foreign.uuidString) && reason.contains(url.path), "\(reason)")
        let appError = try #require(throws: GraphStoreError.self) { _ = try GraphContainer(for: exampleModel, store: .file(url)) }
        #expect(appError == error, "the reader reports what opening reports")
        #expect(JournalStoreTests.files(url) == before, "reading changed no file")

        // Without the journal, the file reads.
        try FileManager.default.removeItem(atPath: journal)
        #expect(try GenericSnapshot.read(from: url).objects(of: "Note").count == 5)
    }
}
