import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Journals a crash or a person left in a bad state: a torn tail is cut off, anything else is
/// refused with an error naming the journal and the byte, and no file changes.
@Suite struct JournalDamageTests {
    typealias Kit = JournalStoreTests

    /// Opening must fail with an error naming `path` (and `offset`, when given) and leave every
    /// file of the store as it was.
    static func expectRefused(
        _ url: URL, naming path: String, offset: Int? = nil, containing text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let before = Kit.files(url)
        #expect(sourceLocation: sourceLocation) {
            _ = try GraphContainer(for: exampleModel, store: .file(url))
        } throws: { error in
            guard case .damagedFile(let errorPath, let errorOffset, let reason)? = error as? GraphStoreError else { return false }
            return errorPath == path && (offset == nil || errorOffset == offset) && reason.contains(text) && "\(error)".contains(path)
        }
        #expect(Kit.files(url) == before, "a refused open changed a file", sourceLocation: sourceLocation)
    }

    @Test func aTornLastRecordIsCutOff() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, texts) = try await Kit.crashedStore(notes: 6, in: directory)
        let journal = Kit.journalURL(url)
        let whole = try Data(contentsOf: journal)
        let lastStart = try #require(try JournalReplay.read(journal.path)?.scan.records.last?.start)
        for cut in [lastStart + 1, lastStart + 8, lastStart + 20, whole.count - 1] {
            try whole.prefix(cut).write(to: journal)
            let container = try GraphContainer(for: exampleModel, store: .file(url))
            #expect(try Kit.noteTexts(container) == Array(texts.filter { $0 != "note 5" }), "cut at \(cut)")
            #expect(try SnapshotTestKit.fileSize(journal) == lastStart, "the torn bytes are cut off")
            // The next save follows the intact records.
            container.mainContext.insert(Note(text: "next", createdAt: Fixtures.epoch))
            try container.mainContext.save()
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let copy = try Kit.crashCopy(of: url, into: scratch)
            try await container.close()
            let reopened = try GraphContainer(for: exampleModel, store: .file(copy))
            #expect(try Kit.noteTexts(reopened).contains("next"))
            try await reopened.close()
            try? FileManager.default.removeItem(at: url)
        }
    }

    @Test func aFlippedByteInAMiddleRecordIsRefusedNamingTheByte() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, texts) = try await Kit.crashedStore(notes: 6, in: directory)
        let journal = Kit.journalURL(url)
        let records = try #require(try JournalReplay.read(journal.path)?.scan.records)
        var bytes = try Data(contentsOf: journal)
        bytes[records[2].document.lowerBound + 3] ^= 0x20
        try bytes.write(to: journal)
        Self.expectRefused(url, naming: journal.path, offset: records[2].start, containing: "checksum")

        // Recovery replays the records before the damage and keeps the damaged journal aside.
        let recovering = try GraphContainer(
            for: exampleModel, store: .file(url, options: SnapshotOptions(recoverFromPreviousSnapshot: true)))
        #expect(try Kit.noteTexts(recovering) == Array(texts.prefix(2)))
        let aside = SnapshotTestKit.entries(of: directory.url).filter { $0.hasPrefix("store.json.gz.journal.damaged-") }
        #expect(aside.count == 1)
        if let name = aside.first { #expect(try Data(contentsOf: directory.file(name)) == bytes) }
        try await recovering.close()
    }

    @Test func aJournalOfAnotherStoreIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, _) = try await Kit.crashedStore(notes: 3, in: directory, snapshotFirst: true)
        let other = try TemporaryDirectory()
        defer { other.remove() }
        let (otherURL, _) = try await Kit.crashedStore(notes: 3, in: other, snapshotFirst: true)
        try FileManager.default.removeItem(at: Kit.journalURL(url))
        try FileManager.default.copyItem(at: Kit.journalURL(otherURL), to: Kit.journalURL(url))
        Self.expectRefused(url, naming: Kit.journalURL(url).path, containing: "belongs to another store")
    }

    /// A snapshot older than the journal's start (say, an old backup put back) is refused:
    /// the saves in between are missing.
    @Test func aJournalThatDoesNotContinueTheSnapshotIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let first = try GraphContainer(for: exampleModel, store: .file(url))
        first.mainContext.insert(Note(text: "old", createdAt: Fixtures.epoch))
        try first.mainContext.save()
        try await first.close()
        let backup = try Data(contentsOf: url)
        // A live container moves the journal past the backup's version.
        let live = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        for number in 0..<3 {
            live.mainContext.insert(Note(text: "new \(number)", createdAt: Fixtures.epoch))
            try live.mainContext.save()
            try await live.flush()
        }
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let copy = try Kit.crashCopy(of: url, into: scratch)
        try await live.close()
        // Rotate the copy's journal as a snapshot at version 3 would, then put the backup back.
        let journal = Kit.journalURL(copy)
        let contents = try #require(try JournalReplay.read(journal.path))
        let header = JournalFormatV1.Header(lineage: try #require(contents.lineage), baseVersion: 3)
        var rotated = JournalFormatV1.encodeHeader(header)
        rotated += JournalFormatV1.frameRecord(version: 4, document: Array("{}".utf8))
        try Data(rotated).write(to: journal)
        try backup.write(to: copy)
        Self.expectRefused(copy, naming: journal.path, containing: "missing")
    }

    @Test func anEmptyJournalOpens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, texts) = try await Kit.crashedStore(notes: 0, in: directory, snapshotFirst: true)
        try Data().write(to: Kit.journalURL(url))
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(try Kit.noteTexts(container) == texts)
        try await container.close()
    }

    @Test func aJournalWithoutItsSnapshot() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Started on an empty store: it holds the whole store, and replays. (The first save now
        // writes the empty snapshot first; a journal an earlier release left has none.)
        let (fresh, texts) = try await Kit.crashedStore(notes: 4, in: directory)
        #expect(try SnapshotTestKit.readSnapshot(fresh).header.storeVersion == 0)
        try FileManager.default.removeItem(at: fresh)
        let container = try GraphContainer(for: exampleModel, store: .file(fresh))
        #expect(try Kit.noteTexts(container) == texts)
        try await container.close()

        // Continuing a snapshot that is gone: refused.
        let other = try TemporaryDirectory()
        defer { other.remove() }
        let (url, _) = try await Kit.crashedStore(notes: 2, in: other, snapshotFirst: true)
        try FileManager.default.removeItem(at: url)
        Self.expectRefused(url, naming: Kit.journalURL(url).path, containing: "does not exist")
    }

    @Test func aRecordOfAnUnregisteredEntityIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, _) = try await Kit.crashedStore(notes: 2, in: directory)
        let before = Kit.files(url)
        #expect {
            _ = try GraphContainer(for: [Post.self, ExampleModel.Tag.self], store: .file(url))
        } throws: { error in
            guard case .codingFailed(let path, let entity, _, _)? = error as? GraphStoreError else { return false }
            return path == Kit.journalURL(url).path && entity == "Note"
        }
        #expect(Kit.files(url) == before)
    }
}
