import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Recovery from the previous snapshot that cannot work (the journal beside the store does not
/// continue `<file>.previous`) is refused before anything is written: every file stays byte for
/// byte as it was, and the error names the store file, the previous snapshot and the journal.
/// A recovery the journal does continue still opens the previous snapshot with the journal's
/// saves, and keeps the damaged file aside.
@Suite struct RecoveryRefusedTests {
    // MARK: - Helpers

    private static let recovering = SnapshotOptions(recoverFromPreviousSnapshot: true)

    private static func journalURL(_ url: URL) -> URL { URL(fileURLWithPath: url.path + ".journal") }
    private static func previousURL(_ url: URL) -> URL { URL(fileURLWithPath: url.path + ".previous") }

    /// Every file in `directory`, by name, with its bytes.
    private static func files(in directory: TemporaryDirectory) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try directory.entries() { files[name] = try Data(contentsOf: directory.file(name)) }
        return files
    }

    private static func noteTexts(_ container: GraphContainer) throws -> [String] {
        try container.mainContext.fetch(FetchDescriptor<Note>()).map(\.text).sorted()
    }

    /// The damaged copies recovery kept of the file at `url`.
    private static func damagedCopies(of url: URL, in directory: TemporaryDirectory) throws -> [String] {
        try directory.entries().filter { $0.hasPrefix(url.lastPathComponent + ".damaged-") }
    }

    /// What a process killed while the store at `url` is open leaves, copied into `directory`
    /// (snapshot, previous snapshot and journal). Returns the copy's URL.
    private static func crashCopy(of url: URL, into directory: TemporaryDirectory) throws -> URL {
        let copy = directory.file(url.lastPathComponent)
        for suffix in ["", ".previous", ".journal"] {
            let source = URL(fileURLWithPath: url.path + suffix)
            guard FileManager.default.fileExists(atPath: source.path) else { continue }
            try FileManager.default.copyItem(at: source, to: URL(fileURLWithPath: copy.path + suffix))
        }
        return copy
    }

    /// Cuts the snapshot at `url` in half. Returns the damaged bytes.
    @discardableResult
    private static func truncateSnapshot(_ url: URL) throws -> Data {
        let good = try Data(contentsOf: url)
        let damaged = good.prefix(good.count / 2)
        try damaged.write(to: url)
        return damaged
    }

    /// Flips a byte inside the first of the journal's records (more follow it): damage, not a
    /// torn append.
    private static func damageFirstJournalRecord(_ url: URL) throws {
        let journal = journalURL(url)
        let records = try #require(try JournalReplay.read(journal.path)?.scan.records)
        try #require(records.count >= 2)
        var bytes = try Data(contentsOf: journal)
        bytes[records[0].document.lowerBound + 3] ^= 0x20
        try bytes.write(to: journal)
    }

    /// The store a closed and reopened app leaves when killed: `v1` and `v2` each saved and
    /// closed (so `<file>.previous` holds v1 and the store file v2), then `v3` and `v4` saved
    /// by a container killed before its first snapshot. Its journal starts at the store file's
    /// version, after the previous snapshot's.
    private static func storeWhoseJournalSkipsThePreviousSnapshot(in directory: TemporaryDirectory) async throws -> URL {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("store.json.gz")
        for text in ["v1", "v2"] {
            let container = try GraphContainer(for: exampleModel, store: .file(url))
            container.mainContext.insert(Note(text: text, createdAt: Fixtures.epoch))
            try container.mainContext.save()
            try await container.close()
        }
        let app = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        for text in ["v3", "v4"] {
            app.mainContext.insert(Note(text: text, createdAt: Fixtures.epoch))
            try app.mainContext.save()
        }
        let copy = try crashCopy(of: url, into: directory)
        try await app.close()
        return copy
    }

    /// The store an app leaves when killed after its writer replaced the snapshot it opened:
    /// `v1` saved and closed, then `v2` saved and written to a snapshot (so `<file>.previous`
    /// holds v1) and `v3` saved. Its journal reaches back to the previous snapshot.
    private static func storeWhoseJournalContinuesThePreviousSnapshot(in directory: TemporaryDirectory) async throws -> URL {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("store.json.gz")
        let first = try GraphContainer(for: exampleModel, store: .file(url))
        first.mainContext.insert(Note(text: "v1", createdAt: Fixtures.epoch))
        try first.mainContext.save()
        try await first.close()
        let app = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        app.mainContext.insert(Note(text: "v2", createdAt: Fixtures.epoch))
        try app.mainContext.save()
        try await SnapshotTestKit.writer(of: app).flush()
        app.mainContext.insert(Note(text: "v3", createdAt: Fixtures.epoch))
        try app.mainContext.save()
        let copy = try crashCopy(of: url, into: directory)
        try await app.close()
        return copy
    }

    // MARK: - Refused

    /// The journal starts at the damaged snapshot's version, after the previous snapshot's: its
    /// saves cannot be replayed onto the previous snapshot. Recovery is refused and no file
    /// changes, with the journal intact or itself damaged; moving the journal away by hand then
    /// lets recovery open the previous snapshot.
    @Test(arguments: [false, true])
    func aRecoveryTheJournalDoesNotContinueChangesNothing(journalDamaged: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.storeWhoseJournalSkipsThePreviousSnapshot(in: directory)
        let previous = Self.previousURL(url)
        let journal = Self.journalURL(url)
        #expect(try SnapshotTestKit.readSnapshot(previous).header.storeVersion == 1)
        #expect(try JournalReplay.read(journal.path)?.scan.header?.baseVersion == 2)
        let damaged = try Self.truncateSnapshot(url)
        if journalDamaged { try Self.damageFirstJournalRecord(url) }

        // Without recovery: refused for the store file (the lock file is made here).
        #expect {
            _ = try GraphContainer(for: exampleModel, store: .file(url))
        } throws: { error in
            guard case .damagedFile(let path, _, _)? = error as? GraphStoreError else { return false }
            return path == url.path
        }
        let before = try Self.files(in: directory)

        // With recovery: refused too, naming all three files and saying nothing changed.
        let error = try #require(throws: GraphStoreError.self) {
            _ = try GraphContainer(for: exampleModel, store: .file(url, options: Self.recovering))
        }
        guard case .damagedFile(let path, _, let reason) = error else {
            Issue.record("not a damaged file: \(error)")
            return
        }
        #expect(path == url.path, "\(error)")
        #expect(reason.contains(previous.path), "\(error)")
        #expect(reason.contains(journal.path), "\(error)")
        #expect(reason.contains("does not continue"), "\(error)")
        #expect(reason.contains("Nothing was changed"), "\(error)")
        #expect(error.description.contains(url.path))

        // Every file is as it was: the damaged store file, the previous snapshot, the journal,
        // and no copy beside them.
        let after = try Self.files(in: directory)
        #expect(after.keys.sorted() == before.keys.sorted(), "files appeared or vanished")
        for (name, bytes) in before {
            #expect(after[name] == bytes, "\(name) changed")
        }
        #expect(try Data(contentsOf: url) == damaged)

        // A plain open still blames the store file, not the journal.
        #expect {
            _ = try GraphContainer(for: exampleModel, store: .file(url))
        } throws: { error in
            guard case .damagedFile(let path, _, _)? = error as? GraphStoreError else { return false }
            return path == url.path
        }

        // The way out the error names: move the journal away, and recover.
        let kept = directory.file("saves-after-v2.journal")
        try FileManager.default.moveItem(at: journal, to: kept)
        let keptBytes = try Data(contentsOf: kept)
        let recovered = try GraphContainer(for: exampleModel, store: .file(url, options: Self.recovering))
        #expect(try Self.noteTexts(recovered) == ["v1"])
        try recovered.checkInvariants()
        try await recovered.close()
        let copies = try Self.damagedCopies(of: url, in: directory)
        #expect(copies.count == 1)
        if let copy = copies.first { #expect(try Data(contentsOf: directory.file(copy)) == damaged) }
        #expect(try Data(contentsOf: kept) == keptBytes)

        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(try Self.noteTexts(reopened) == ["v1"])
        try await reopened.close()
    }

    /// A damaged journal of another store, met with recovery on, is refused without being
    /// copied aside: a refused open adds no file.
    @Test func aDamagedJournalOfAnotherStoreIsRefusedWithoutACopy() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.storeWhoseJournalSkipsThePreviousSnapshot(in: directory)
        let other = try TemporaryDirectory()
        defer { other.remove() }
        let otherURL = try await Self.storeWhoseJournalSkipsThePreviousSnapshot(in: other)
        try Self.damageFirstJournalRecord(otherURL)
        try FileManager.default.removeItem(at: Self.journalURL(url))
        try FileManager.default.copyItem(at: Self.journalURL(otherURL), to: Self.journalURL(url))
        // The lock file, as any open makes it.
        #expect(FileManager.default.createFile(atPath: url.path + ".lock", contents: nil))
        let before = try Self.files(in: directory)

        #expect {
            _ = try GraphContainer(for: exampleModel, store: .file(url, options: Self.recovering))
        } throws: { error in
            guard case .damagedFile(let path, _, let reason)? = error as? GraphStoreError else { return false }
            return path == Self.journalURL(url).path && reason.contains("another store")
        }
        #expect(try Self.files(in: directory) == before, "a refused open changed or added a file")
    }

    // MARK: - Recovered

    /// The journal reaches back to the previous snapshot: recovery opens it with every save
    /// the journal holds, and keeps the damaged file aside.
    @Test func aRecoveryTheJournalContinuesReplaysItOntoThePreviousSnapshot() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.storeWhoseJournalContinuesThePreviousSnapshot(in: directory)
        #expect(try SnapshotTestKit.readSnapshot(Self.previousURL(url)).header.storeVersion == 1)
        #expect(try JournalReplay.read(Self.journalURL(url).path)?.scan.header?.baseVersion == 1)
        let damaged = try Self.truncateSnapshot(url)

        let recovered = try GraphContainer(for: exampleModel, store: .file(url, options: Self.recovering))
        #expect(try Self.noteTexts(recovered) == ["v1", "v2", "v3"])
        try recovered.checkInvariants()
        let copies = try Self.damagedCopies(of: url, in: directory)
        #expect(copies.count == 1)
        if let copy = copies.first { #expect(try Data(contentsOf: directory.file(copy)) == damaged) }
        recovered.mainContext.insert(Note(text: "v4", createdAt: Fixtures.epoch))
        try recovered.mainContext.save()
        try await recovered.close()

        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(try Self.noteTexts(reopened) == ["v1", "v2", "v3", "v4"])
        try await reopened.close()
    }
}
