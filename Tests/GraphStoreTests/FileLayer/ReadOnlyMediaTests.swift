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

/// A store on media that cannot be written opens and reads, whatever was left beside it: no
/// lock file (a store copied there as one file), a journal a killed app left, a torn last
/// record. Every save throws and commits nothing, and no file changes.
@Suite(.serialized) struct ReadOnlyMediaTests {
    private typealias Kit = JournalStoreTests

    private static let formats: [SnapshotFormat] = [.json, .binaryPropertyList]

    // MARK: - Without the lock file

    @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement), arguments: formats, [Durability.journaled, .coalesced])
    func aStoreWithoutItsLockFileOpensAndRefusesSaves(format: SnapshotFormat, durability: Durability) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 1024)
        defer { tmpfs.unmount() }
        let url = tmpfs.url.appendingPathComponent(fileName(format))
        let first = try GraphContainer(for: exampleModel, store: .file(url, format: format))
        first.mainContext.insert(Note(text: "kept", createdAt: Fixtures.epoch))
        try first.mainContext.save()
        try await first.close()
        let lockFile = StoreFileLock.lockFileURL(forStoreAt: url)
        try FileManager.default.removeItem(at: lockFile)
        let before = Kit.files(url)
        try await remount(tmpfs, readOnly: true)

        let container = try GraphContainer(for: exampleModel, store: .file(url, format: format, durability: durability))
        #expect(try Kit.noteTexts(container) == ["kept"])
        try expectSaveRefused(container, naming: lockFile.path)
        try await container.close()
        #expect(Kit.files(url) == before)
        #expect(!FileManager.default.fileExists(atPath: lockFile.path))

        // Writable again, the store opens with its lock and takes saves as ever.
        try await remount(tmpfs, readOnly: false)
        let reopened = try GraphContainer(for: exampleModel, store: .file(url, format: format))
        reopened.mainContext.insert(Note(text: "later", createdAt: Fixtures.epoch))
        try reopened.mainContext.save()
        try await reopened.close()
        #expect(FileManager.default.fileExists(atPath: lockFile.path))
    }

    /// A tool that replaces the store's file (convert, migrate) needs the lock: where it cannot
    /// be created it is refused, not handed a store nothing excludes.
    @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
    func lockingForAToolStillNeedsTheLockFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 256)
        defer { tmpfs.unmount() }
        let url = tmpfs.url.appendingPathComponent("store.json.gz")
        try await remount(tmpfs, readOnly: true)
        // The reason is why the lock file could not be made, not that it is missing.
        let error = try #require(throws: GraphStoreError.self) { try StoreFileLock.lockStore(at: url) }
        #expect(error.description.contains("Read-only file system") && !error.description.contains("No such file"), "\(error)")
        #expect(throws: FileLayerError.io("open lock file", path: url.path + ".lock", errno: EROFS)) {
            try StoreFileLock(forStoreAt: url)
        }
        try await remount(tmpfs, readOnly: false)
    }

    // MARK: - A journal a killed app left

    @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement), arguments: formats, [true, false])
    func aCrashedStoreOpensWithEveryJournaledSave(format: SnapshotFormat, hasLockFile: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 1024)
        defer { tmpfs.unmount() }
        let (url, texts) = try await crashedStore(format: format, notes: 5, in: tmpfs)
        if hasLockFile { close(open(url.path + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o644)) }
        let before = Kit.files(url)
        #expect(try JournalReplay.read(Kit.journalURL(url).path)?.scan.records.count == 5)
        try await remount(tmpfs, readOnly: true)

        let container = try GraphContainer(for: exampleModel, store: .file(url, format: format))
        #expect(try Kit.noteTexts(container) == texts)
        #expect(container.version == 5)
        try expectSaveRefused(
            container, naming: hasLockFile ? Kit.journalURL(url).path : StoreFileLock.lockFileURL(forStoreAt: url).path)
        // Closing writes no snapshot (none can be written) and keeps the journal, which alone
        // holds the saves.
        try await container.close()
        #expect(Kit.files(url) == before)

        // Writable again, the journal is replayed and continued as after any crash.
        try await remount(tmpfs, readOnly: false)
        let reopened = try GraphContainer(for: exampleModel, store: .file(url, format: format))
        #expect(try Kit.noteTexts(reopened) == texts)
        reopened.mainContext.insert(Note(text: "later", createdAt: Fixtures.epoch))
        try reopened.mainContext.save()
        try await reopened.close()
        let last = try GraphContainer(for: exampleModel, store: .file(url, format: format))
        #expect(try Kit.noteTexts(last) == (texts + ["later"]).sorted())
        try await last.close()
    }

    @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
    func aTornJournalTailOnReadOnlyMediaOpensWithTheCompleteRecords() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 1024)
        defer { tmpfs.unmount() }
        let (url, texts) = try await crashedStore(format: .json, notes: 4, in: tmpfs)
        let journal = Kit.journalURL(url)
        let whole = try Data(contentsOf: journal)
        let lastStart = try #require(try JournalReplay.read(journal.path)?.scan.records.last?.start)
        try whole.prefix(lastStart + 12).write(to: journal)
        // With its lock file: the journal alone is at issue.
        close(open(url.path + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o644))
        let before = Kit.files(url)
        try await remount(tmpfs, readOnly: true)

        let container = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(try Kit.noteTexts(container) == texts.filter { $0 != "note 3" })
        #expect(container.version == 3)
        try expectSaveRefused(container, naming: journal.path)
        try await container.close()
        #expect(Kit.files(url) == before, "the torn tail stays: nothing is cut on read-only media")
        try await remount(tmpfs, readOnly: false)
    }

    // MARK: - Helpers

    private func fileName(_ format: SnapshotFormat) -> String {
        format == .json ? "store.json.gz" : "store.plist.gz"
    }

    /// What a killed app leaves in `tmpfs`: the snapshot it wrote before its first record
    /// and `count` saves in the journal (one note each). The lock file is not copied.
    private func crashedStore(format: SnapshotFormat, notes count: Int, in tmpfs: Tmpfs) async throws -> (url: URL, texts: [String]) {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let liveURL = live.file(fileName(format))
        let app = try GraphContainer(for: exampleModel, store: .file(liveURL, format: format, coalescingInterval: .seconds(3600)))
        var texts: [String] = []
        for number in 0..<count {
            app.mainContext.insert(Note(text: "note \(number)", createdAt: Fixtures.epoch))
            try app.mainContext.save()
            texts.append("note \(number)")
        }
        let url = tmpfs.url.appendingPathComponent(fileName(format))
        for suffix in ["", ".journal"] {
            try FileManager.default.copyItem(atPath: liveURL.path + suffix, toPath: url.path + suffix)
        }
        try await app.close()
        return (url, texts.sorted())
    }

    /// A save throws naming `path` and the read-only file system, and commits nothing; the
    /// context keeps its change.
    private func expectSaveRefused(_ container: GraphContainer, naming path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let version = container.version
        let count = container.count(of: Note.self)
        container.mainContext.insert(Note(text: "refused", createdAt: Fixtures.epoch))
        #expect(sourceLocation: sourceLocation) {
            try container.mainContext.save()
        } throws: { error in
            guard case .fileOperationFailed(let failed, _, let reason)? = error as? GraphStoreError else { return false }
            return failed == path && reason.contains(systemErrorMessage(EROFS))
        }
        #expect(container.version == version, sourceLocation: sourceLocation)
        #expect(container.count(of: Note.self) == count, sourceLocation: sourceLocation)
        #expect(container.mainContext.hasChanges, sourceLocation: sourceLocation)
    }

    private func remount(_ tmpfs: Tmpfs, readOnly: Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let failure = await tmpfs.remount(readOnly: readOnly)
        try #require(failure == nil, "remount: \(systemErrorMessage(failure ?? 0))", sourceLocation: sourceLocation)
    }
}
