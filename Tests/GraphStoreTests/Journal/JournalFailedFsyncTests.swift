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

/// Linux reports a failed write-back to `fsync` once: the next `fsync` of the same file can
/// succeed although the pages it failed to write are gone. So after a failed fsync of the
/// journal, no later one may count for the records appended before it; only a snapshot (or a
/// database transaction) that holds them makes them durable, and `flush()` writes one.
@Suite struct JournalFailedFsyncTests {
    private static func append(_ version: UInt64, to journal: StoreJournal) throws -> StoreJournal.Mark {
        let record = JournalFormatV1.frameRecord(version: version, document: [UInt8](repeating: 0x20, count: 16))
        return try record.withUnsafeBytes { try journal.append($0, version: version) }
    }

    /// A store in `directory` whose fsyncs go through the returned fault injector; snapshots
    /// only when flushed (the interval is an hour).
    private static func store(in directory: TemporaryDirectory, durability: Durability) throws -> (GraphContainer, FaultInjectingFileSystem, URL) {
        let faults = FaultInjectingFileSystem()
        var options = SnapshotOptions()
        options.fileSystem = faults
        let url = directory.file("store.json.gz")
        let container = try GraphContainer(
            for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600), durability: durability, options: options))
        return (container, faults, url)
    }

    /// The note texts the snapshot file at `url` holds alone, without its journal.
    private static func snapshotNoteTexts(_ url: URL, scratch: TemporaryDirectory) async throws -> [String] {
        let snapshotOnly = scratch.file("snapshot-only.json.gz")
        try FileManager.default.copyItem(at: url, to: snapshotOnly)
        let container = try GraphContainer(for: exampleModel, store: .file(snapshotOnly))
        let texts = try JournalStoreTests.noteTexts(container)
        try await container.close()
        return texts
    }

    /// A close whose last snapshot fails keeps the journal and releases it (`detach`). A
    /// `.synchronous` save that appended before and still waits for its fsync gets that
    /// fsync's outcome: it used to find no file to sync, take the journal for removed, and
    /// return as durable although its record's fsync failed.
    @Test(arguments: [false, true])
    func aSaveWaitingWhileAFailedCloseReleasesTheJournalGetsItsFsyncsOutcome(fsyncFails: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultInjectingFileSystem()
        let journal = try StoreJournal.start(
            path: directory.file("store.json.gz.journal").path, durability: .synchronous, interval: .seconds(3600),
            clock: ManualWriterClock(), lineage: UUID(), openedAt: 0, existing: nil, fileSystem: faults)
        let mark = try Self.append(1, to: journal)
        if fsyncFails {
            faults.inject(.fsync(errno: EIO))
            #expect(throws: GraphStoreError.self) { try journal.detach() }
            #expect(throws: GraphStoreError.self) { try journal.waitUntilDurable(mark) }
            #expect(journal.durableVersion == 0)
        } else {
            try journal.detach()
            try journal.waitUntilDurable(mark)
            #expect(journal.durableVersion == 1)
        }
    }

    @Test func aLaterFsyncDoesNotCountForRecordsBeforeAFailedOne() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultInjectingFileSystem()
        let journal = try StoreJournal.start(
            path: directory.file("store.json.gz.journal").path, durability: .journaled, interval: .seconds(3600),
            clock: ManualWriterClock(), lineage: UUID(), openedAt: 0, existing: nil, fileSystem: faults)
        _ = try Self.append(1, to: journal)
        try await journal.flush()
        #expect(journal.durableVersion == 1)

        _ = try Self.append(2, to: journal)
        faults.inject(.fsync(errno: EIO))
        await #expect(throws: GraphStoreError.self) { try await journal.flush() }
        faults.clearFaults()
        _ = try Self.append(3, to: journal)
        // The fsync itself would succeed now; it proves nothing about record 2.
        await #expect {
            try await journal.flush()
        } throws: { error in
            guard case .fileOperationFailed(_, "fsync the journal", let reason)? = error as? GraphStoreError else { return false }
            return reason.contains("an earlier fsync of the journal failed") && reason.contains(systemErrorMessage(EIO))
        }
        #expect(journal.durableVersion == 1)
        #expect(journal.hasFailedSync)

        // A store file holding version 1 only does not cover record 2.
        journal.storeIsDurable(through: 1)
        #expect(journal.hasFailedSync)
        await #expect(throws: GraphStoreError.self) { try await journal.flush() }
        // One holding version 2 does: record 3, appended after the failure, is fsynced normally.
        journal.storeIsDurable(through: 2)
        #expect(!journal.hasFailedSync)
        #expect(journal.durableVersion == 2)
        try await journal.flush()
        #expect(journal.durableVersion == 3)
    }

    /// A store write that holds the records, finished while the journal's fsync fails (a
    /// coalesced snapshot retried in the background): the flush, and a synchronous save waiting
    /// for the same fsync, return, for their records are durable. Both threw the fsync's error.
    @Test(arguments: [false, true])
    func aFsyncFailingWhileTheStoreMadeTheRecordsDurableIsNoFailure(synchronousSave: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultInjectingFileSystem()
        let journal = try StoreJournal.start(
            path: directory.file("store.json.gz.journal").path, durability: synchronousSave ? .synchronous : .journaled,
            interval: .seconds(3600), clock: ManualWriterClock(), lineage: UUID(), openedAt: 0, existing: nil, fileSystem: faults)
        defer { faults.beforeEachFsync(nil) }
        _ = try Self.append(1, to: journal)
        try await journal.flush()
        let mark = try Self.append(2, to: journal)
        faults.inject(.fsync(errno: EIO))
        faults.beforeEachFsync { journal.storeIsDurable(through: 2) }
        if synchronousSave {
            try journal.waitUntilDurable(mark)
        } else {
            try await journal.flush(orWritingTheStore: { Issue.record("the store was written although it holds the records") })
        }
        #expect(journal.durableVersion == 2)
        #expect(!journal.hasFailedSync)
    }

    @Test func aSynchronousSaveAfterAFailedFsyncThrowsUntilASnapshotHoldsTheSaves() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (container, faults, url) = try Self.store(in: directory, durability: .synchronous)
        let context = container.mainContext
        context.insert(Note(text: "a", createdAt: Fixtures.epoch))
        try context.save()

        faults.inject(.fsync(errno: EIO))
        context.insert(Note(text: "b", createdAt: Fixtures.epoch))
        #expect(throws: GraphStoreError.self) { try context.save() }
        faults.clearFaults()
        // The next fsync succeeds, but "b" may be lost: "c" is not durable either.
        context.insert(Note(text: "c", createdAt: Fixtures.epoch))
        #expect {
            try context.save()
        } throws: { error in
            guard case .fileOperationFailed(_, _, let reason)? = error as? GraphStoreError else { return false }
            return reason.contains("an earlier fsync of the journal failed")
        }
        #expect(container.count(of: Note.self) == 3, "both saves committed, as a synchronous save whose fsync fails does")

        // flush() writes a snapshot, which holds them all; then saves are durable again.
        try await container.flush()
        #expect(container.storeStatus.durableVersion == container.version)
        context.insert(Note(text: "d", createdAt: Fixtures.epoch))
        try context.save()

        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        #expect(try await Self.snapshotNoteTexts(url, scratch: scratch) == ["a", "b", "c"])
        let crashed = try JournalStoreTests.crashCopy(of: url, into: scratch)
        try await container.close()
        let reopened = try GraphContainer(for: exampleModel, store: .file(crashed))
        #expect(try JournalStoreTests.noteTexts(reopened) == ["a", "b", "c", "d"])
        try await reopened.close()
    }

    @Test func aFlushAfterAFailedFsyncWritesASnapshot() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (container, faults, url) = try Self.store(in: directory, durability: .journaled)
        let context = container.mainContext
        context.insert(Note(text: "a", createdAt: Fixtures.epoch))
        try context.save()
        try await container.flush()

        faults.inject(.fsync(errno: EIO))
        context.insert(Note(text: "b", createdAt: Fixtures.epoch))
        try context.save()
        // The journal's fsync fails, and so does the snapshot the flush then writes.
        await #expect(throws: GraphStoreError.self) { try await container.flush() }
        faults.clearFaults()
        try await container.flush()

        // The flush returned: the snapshot alone holds "b", whatever became of the journal's
        // pages. (The snapshot interval is an hour: only the flush wrote it.)
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        #expect(try await Self.snapshotNoteTexts(url, scratch: scratch) == ["a", "b"])
        try await container.close()
    }
}
