import ExampleModel
import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A save that returned survives the process dying: the journal beside the database holds what
/// the background writer has not committed yet, and opening replays it into the database.
@Suite struct SQLiteJournalTests {
    @Test(arguments: [Durability.journaled, .synchronous])
    func savesThatReturnedSurviveAKilledProcess(durability: Durability) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let gate = WriterGate()
        var options = SQLiteStoreOptions(durability: durability)
        options.beforeTransaction = { _ in gate.pass() }
        let container = try SQLiteTestKit.open(url, options: options)
        var events = container.storeEvents.makeAsyncIterator()

        // The first saves reach the database; the later ones only the journal, because the
        // writer is held inside its transaction.
        for index in 0..<5 { try SQLiteJournalTestKit.saveNote("written \(index)", in: container.mainContext) }
        await SQLiteJournalTestKit.waitUntilWritten(5, events: &events)
        gate.close()
        for index in 0..<20 { try SQLiteJournalTestKit.saveNote("journaled \(index)", in: container.mainContext) }
        await gate.waitUntilReached()
        let expected = try SQLiteJournalTestKit.noteTexts(container)
        #expect(expected.count == 25)

        // What a process killed now leaves behind.
        let crashed = try SQLiteJournalTestKit.crashCopy(of: url, to: directory.file("crashed"))
        #expect(FileManager.default.fileExists(atPath: SQLiteJournalTestKit.journal(of: crashed).path))
        gate.open()
        try await container.close()

        // Opening the copy replays the journal and writes its rows in the opening transaction.
        let reopened = try SQLiteTestKit.open(crashed)
        #expect(try SQLiteJournalTestKit.noteTexts(reopened) == expected)
        #expect(reopened.version == 25)
        try reopened.checkInvariants()
        // Killed again right after opening: the database itself now holds every row, so the
        // copy opens whole without any journal.
        let again = try SQLiteJournalTestKit.crashCopy(of: crashed, to: directory.file("again"))
        try? FileManager.default.removeItem(at: SQLiteJournalTestKit.journal(of: again))
        try await reopened.close()
        let fromDatabase = try SQLiteTestKit.open(again, options: SQLiteStoreOptions(durability: .coalesced))
        #expect(try SQLiteJournalTestKit.noteTexts(fromDatabase) == expected)
        #expect(fromDatabase.version == 25)
        try await fromDatabase.close()

        // Closing the reopened copy left the rows in the database and no journal.
        #expect(!FileManager.default.fileExists(atPath: SQLiteJournalTestKit.journal(of: crashed).path))
        #expect(try await SQLiteJournalTestKit.pythonNoteTexts(crashed) == expected)
        let third = try SQLiteTestKit.open(crashed)
        #expect(try SQLiteJournalTestKit.noteTexts(third) == expected)
        try await third.close()
    }

    @Test func synchronousSavesFromManyThreadsAllSurvive() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let gate = WriterGate()
        var options = SQLiteStoreOptions(durability: .synchronous)
        options.beforeTransaction = { _ in gate.pass() }
        let container = try SQLiteTestKit.open(url, options: options)
        gate.close()

        // Threads, not tasks: each save blocks its thread until the shared fsync.
        let threads = 8, savesPerThread = 25
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: threads) { thread in
                    let context = container.newBackgroundContext()
                    for index in 0..<savesPerThread {
                        #expect(throws: Never.self) { try SQLiteJournalTestKit.saveNote("thread \(thread) save \(index)", in: context) }
                    }
                }
                continuation.resume()
            }
        }
        await gate.waitUntilReached()
        #expect(container.count(of: Note.self) == threads * savesPerThread)
        // Every synchronous save returned after its record was fsynced.
        #expect(container.storeStatus.durableVersion == UInt64(threads * savesPerThread))
        let expected = try SQLiteJournalTestKit.noteTexts(container)
        let crashed = try SQLiteJournalTestKit.crashCopy(of: url, to: directory.file("crashed"))
        gate.open()
        try await container.close()

        let reopened = try SQLiteTestKit.open(crashed)
        #expect(try SQLiteJournalTestKit.noteTexts(reopened) == expected)
        try reopened.checkInvariants()
        try await reopened.close()
    }

    @Test func closeLeavesNoJournalAndPythonSeesEveryRow() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let container = try SQLiteTestKit.open(url)
        for index in 0..<30 { try SQLiteJournalTestKit.saveNote("note \(index)", in: container.mainContext) }
        container.mainContext.delete(Note.self, id: try #require(container.mainContext.fetch(FetchDescriptor<Note>()).first).id)
        try container.mainContext.save()
        #expect(FileManager.default.fileExists(atPath: SQLiteJournalTestKit.journal(of: url).path))
        let expected = try SQLiteJournalTestKit.noteTexts(container)
        try await container.close()

        #expect(SQLiteTestKit.entries(of: directory.url) == ["store.sqlite"])
        #expect(try await SQLiteJournalTestKit.pythonNoteTexts(url) == expected)
        #expect(expected.count == 29)
    }

    @Test func flushReturnsOnceTheJournalIsDurable() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let gate = WriterGate()
        var options = SQLiteStoreOptions()
        options.beforeTransaction = { _ in gate.pass() }
        let container = try SQLiteTestKit.open(directory.file("store.sqlite"), options: options)
        gate.close()
        try SQLiteJournalTestKit.saveNote("held", in: container.mainContext)
        await gate.waitUntilReached()
        // The row's transaction is held, yet flush() returns: the journal makes it durable.
        try await container.flush()
        #expect(container.storeStatus.durableVersion == 1)
        #expect(container.storeStatus.writesCompleted == 0)
        gate.open()
        try await container.close()
        await #expect(throws: GraphStoreError.containerClosed) { try await container.flush() }
    }

    @Test func aContainerReleasedWithoutCloseIsFoundByTheNextOpen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let expected = try Self.saveAndRelease(url, notes: 12)

        // Opening waits for the released container's background close, then finds everything.
        // That close runs as a task: the wait blocks a thread, so it must not be one the task
        // needs (the cooperative pool has as many threads as cores).
        let reopened = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<GraphContainer, any Error>) in
            DispatchQueue.global().async { continuation.resume(with: Result { try SQLiteTestKit.open(url) }) }
        }
        #expect(try SQLiteJournalTestKit.noteTexts(reopened) == expected)
        try await reopened.close()
        #expect(SQLiteTestKit.entries(of: directory.url) == ["store.sqlite"])
    }

    @Test func aFailedFinalWriteKeepsTheJournalForTheNextOpen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let isFull = Guarded(false)
        var options = SQLiteStoreOptions()
        options.clock = ManualWriterClock()
        options.beforeTransaction = { db in
            if isFull.value { throw DatabaseError(resultCode: .SQLITE_FULL, message: "database or disk is full") }
        }
        let container = try SQLiteTestKit.open(url, options: options)
        var events = container.storeEvents.makeAsyncIterator()
        container.mainContext.insert(ExampleModel.Tag(name: "durable"))
        try container.mainContext.save()
        await SQLiteJournalTestKit.waitUntilWritten(1, events: &events)

        isFull.withLock { $0 = true }
        for post in Fixtures.posts(300) { container.mainContext.insert(post) }
        try container.mainContext.save()
        let error = await #expect(throws: GraphStoreError.self) { try await container.close() }
        guard case .fileOperationFailed(let path, _, let reason) = error else {
            Issue.record("expected fileOperationFailed, got \(String(describing: error))")
            return
        }
        #expect(path == url.path)
        #expect(reason.contains("full"))
        #expect(FileManager.default.fileExists(atPath: SQLiteJournalTestKit.journal(of: url).path))

        // The lock is released, and the journal brings back the save the database lacked.
        let reopened = try SQLiteTestKit.open(url)
        #expect(reopened.count(of: ExampleModel.Tag.self) == 1)
        #expect(reopened.count(of: Post.self) == 300)
        #expect(reopened.version == 2)
        try reopened.checkInvariants()
        try await reopened.close()
        #expect(SQLiteTestKit.entries(of: directory.url) == ["store.sqlite"])
    }

    @Test func aJournalOfAnotherStoreIsRefusedAndTheFilesAreLeftAsTheyWere() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A journal from store A, left by a killed process.
        let first = directory.file("a/store.sqlite")
        try FileManager.default.createDirectory(at: first.deletingLastPathComponent(), withIntermediateDirectories: true)
        let gate = WriterGate()
        var options = SQLiteStoreOptions()
        options.beforeTransaction = { _ in gate.pass() }
        let storeA = try SQLiteTestKit.open(first, options: options)
        gate.close()
        try SQLiteJournalTestKit.saveNote("from A", in: storeA.mainContext)
        await gate.waitUntilReached()
        let crashedA = try SQLiteJournalTestKit.crashCopy(of: first, to: directory.file("crashed-a"))
        gate.open()
        try await storeA.close()

        // Store B, closed cleanly, with A's journal put beside it.
        let second = directory.file("b/store.sqlite")
        try FileManager.default.createDirectory(at: second.deletingLastPathComponent(), withIntermediateDirectories: true)
        let storeB = try SQLiteTestKit.open(second)
        try SQLiteJournalTestKit.saveNote("from B", in: storeB.mainContext)
        try await storeB.close()
        try FileManager.default.copyItem(at: SQLiteJournalTestKit.journal(of: crashedA), to: SQLiteJournalTestKit.journal(of: second))
        let before = SQLiteJournalTestKit.snapshot(of: second.deletingLastPathComponent())

        let error = SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(second) }
        guard case .damagedFile(let path, _, let reason) = error else {
            Issue.record("expected damagedFile, got \(String(describing: error))")
            return
        }
        #expect(path == SQLiteJournalTestKit.journal(of: second).path)
        #expect(reason.contains("another store"))
        #expect(SQLiteJournalTestKit.snapshot(of: second.deletingLastPathComponent()) == before)
        // Moved away, the store opens as its file holds it.
        try FileManager.default.removeItem(at: SQLiteJournalTestKit.journal(of: second))
        let reopened = try SQLiteTestKit.open(second)
        #expect(try SQLiteJournalTestKit.noteTexts(reopened) == ["from B"])
        try await reopened.close()
    }

    /// A record no save writes (a note referencing a missing tag), behind matching checksums,
    /// is refused when the journal is replayed into the database, naming the journal, the note
    /// and the tag; the opening transaction writes nothing and no file changes.
    @Test func aRecordThatBreaksTheGraphIsRefusedAndTheFilesAreLeftAsTheyWere() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = directory.file("live/store.sqlite")
        try FileManager.default.createDirectory(at: live.deletingLastPathComponent(), withIntermediateDirectories: true)
        let gate = WriterGate()
        var options = SQLiteStoreOptions()
        options.beforeTransaction = { _ in gate.pass() }
        let store = try SQLiteTestKit.open(live, options: options)
        try SQLiteJournalTestKit.saveNote("in the database", in: store.mainContext)
        try await store.flush()
        gate.close()
        try SQLiteJournalTestKit.saveNote("only in the journal", in: store.mainContext)
        await gate.waitUntilReached()
        let crashed = try SQLiteJournalTestKit.crashCopy(of: live, to: directory.file("crashed"))
        let last = store.version
        gate.open()
        try await store.close()

        let missing = UUID()
        let note = Note(text: "dangling", createdAt: Fixtures.epoch, tagIDs: [missing])
        let object = String(decoding: try SnapshotCodec.makeJSONEncoder().encode(note), as: UTF8.self)
        let journal = SQLiteJournalTestKit.journal(of: crashed)
        try JournalRecordFrame.append(version: last + 1, document: "{\"Note\":{\"upsert\":[\(object)]}}", to: journal)
        let before = SQLiteJournalTestKit.snapshot(of: crashed.deletingLastPathComponent())

        let error = SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(crashed) }
        guard case .damagedFile(let path, _, let reason) = error else {
            Issue.record("expected damagedFile, got \(String(describing: error))")
            return
        }
        #expect(path == journal.path)
        #expect(reason.contains("do not form a graph") && reason.contains("Note \(note.id)") && reason.contains("Tag \(missing)"))
        #expect(SQLiteJournalTestKit.snapshot(of: crashed.deletingLastPathComponent()) == before)
    }

    /// What a process killed while creating or rotating the journal leaves is removed when
    /// the database opens, and nothing else is.
    @Test func openingRemovesOnlyTheJournalsLeftovers() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let first = try SQLiteTestKit.open(url)
        try SQLiteJournalTestKit.saveNote("kept", in: first.mainContext)
        try await first.close()
        let stale = ["store.sqlite.journal.tmp-4242-5eed", "store.sqlite.journal.rotating", "store.sqlite.journal.rotating.tmp-17-ab"]
        let unrelated = ["store.sqlite.journal.tmp-notes", "other.sqlite.journal.tmp-1-ab", "store.sqlite.journal.rotating-old"]
        for name in stale + unrelated { try Data("x".utf8).write(to: directory.file(name)) }

        let container = try SQLiteTestKit.open(url)
        let names = SQLiteTestKit.entries(of: directory.url)
        #expect(names.isDisjoint(with: stale))
        #expect(names.isSuperset(of: unrelated))
        #expect(try SQLiteJournalTestKit.noteTexts(container) == ["kept"])
        try await container.close()
    }

    @Test func aCoalescedStoreFoldsAJournalItFindsIntoTheDatabase() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let gate = WriterGate()
        var options = SQLiteStoreOptions()
        options.beforeTransaction = { _ in gate.pass() }
        let container = try SQLiteTestKit.open(url, options: options)
        gate.close()
        for index in 0..<3 { try SQLiteJournalTestKit.saveNote("note \(index)", in: container.mainContext) }
        await gate.waitUntilReached()
        let crashed = try SQLiteJournalTestKit.crashCopy(of: url, to: directory.file("crashed"))
        gate.open()
        try await container.close()

        let reopened = try SQLiteTestKit.open(crashed, options: SQLiteStoreOptions(durability: .coalesced))
        #expect(try SQLiteJournalTestKit.noteTexts(reopened) == ["note 0", "note 1", "note 2"])
        // Its rows are in the database, so the journal is gone at once, and no save adds one.
        #expect(!FileManager.default.fileExists(atPath: SQLiteJournalTestKit.journal(of: crashed).path))
        try SQLiteJournalTestKit.saveNote("note 3", in: reopened.mainContext)
        #expect(!FileManager.default.fileExists(atPath: SQLiteJournalTestKit.journal(of: crashed).path))
        try await reopened.close()
        #expect(try await SQLiteJournalTestKit.pythonNoteTexts(crashed) == ["note 0", "note 1", "note 2", "note 3"])
    }

    /// Opens a container, saves `notes` notes one by one and lets it go without `close()`.
    private static func saveAndRelease(_ url: URL, notes: Int) throws -> [String] {
        let container = try SQLiteTestKit.open(url)
        for index in 0..<notes { try SQLiteJournalTestKit.saveNote("released \(index)", in: container.mainContext) }
        return try SQLiteJournalTestKit.noteTexts(container)
    }
}
