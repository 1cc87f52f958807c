import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A field whose Swift type changed kind (`Int` to `Double`) no longer fits the column its
/// first values made: the store refuses to open, naming the file, entity and field, instead of
/// opening and failing every write.
@Suite struct SQLiteColumnKindTests {
    /// Version 1 of the model: an integer reading.
    struct ReadingV1: Entity {
        static var entityName: String { "Reading" }
        var id: UUID = UUID()
        var label: String
        var value: Int
    }

    /// Version 2: the same field is now a `Double`.
    struct ReadingV2: Entity {
        static var entityName: String { "Reading" }
        var id: UUID = UUID()
        var label: String
        var value: Double
    }

    @Test func aFieldChangedFromIntToDoubleIsRefusedAtOpen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let first = try SQLiteTestKit.open(url, model: [ReadingV1.self])
        for index in 0..<10 { first.mainContext.insert(ReadingV1(label: "r\(index)", value: index)) }
        try first.mainContext.save()
        try await first.close()
        let before = SQLiteJournalTestKit.snapshot(of: directory.url)

        let error = SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url, model: [ReadingV2.self]) }
        guard case .codingFailed(let path, let entity, _, let reason) = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(path == url.path)
        #expect(entity == "Reading")
        #expect(reason.contains("\"value\""))
        #expect(reason.contains("integer"))
        #expect(reason.contains("real"))
        #expect(reason.contains("migrat"))
        let description = try #require(error?.description)
        #expect(description.contains("Reading"))
        #expect(description.contains(url.path))
        // Not a byte changed, and no journal or other file appeared.
        #expect(SQLiteJournalTestKit.snapshot(of: directory.url) == before)

        // The old model still opens it.
        let old = try SQLiteTestKit.open(url, model: [ReadingV1.self])
        #expect(old.count(of: ReadingV1.self) == 10)
        try await old.close()
    }

    /// Version 1 with an optional score that few readings have.
    struct ScoredV1: Entity {
        static var entityName: String { "Scored" }
        var id: Int
        var score: Int?
    }

    /// Version 2: the score is now a `Double`.
    struct ScoredV2: Entity {
        static var entityName: String { "Scored" }
        var id: Int
        var score: Double?
    }

    /// One object of 20,000 has a value in the changed field: the objects encoded at open
    /// (a sample) almost never include it, so the check looks the value up in the database.
    /// (The store opened, and the first save of a scored object failed to write.)
    @Test func aChangedFieldFewObjectsHoldIsRefusedAtOpen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let first = try SQLiteTestKit.open(url, model: [ScoredV1.self])
        for id in 0..<20_000 { first.mainContext.insert(ScoredV1(id: id, score: id == 12_345 ? 7 : nil)) }
        try first.mainContext.save()
        try await first.close()
        let before = SQLiteJournalTestKit.snapshot(of: directory.url)

        let error = SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url, model: [ScoredV2.self]) }
        guard case .codingFailed(let path, let entity, let id, let reason) = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(path == url.path)
        #expect(entity == "Scored")
        #expect(id == "12345")
        #expect(reason.contains("\"score\""))
        #expect(SQLiteJournalTestKit.snapshot(of: directory.url) == before)
    }

    /// An empty table has no value to compare: the first write of the changed field finds the
    /// mismatch, and from then on saves throw instead of piling up what cannot be written.
    @Test func anEmptyTableIsCheckedByTheFirstWriteAndSavesThenThrow() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let first = try SQLiteTestKit.open(url, model: [ReadingV1.self])
        let reading = ReadingV1(label: "gone", value: 1)
        first.mainContext.insert(reading)
        try first.mainContext.save()
        first.mainContext.delete(ReadingV1.self, id: reading.id)
        try first.mainContext.save()
        try await first.close()

        let container = try SQLiteTestKit.open(url, model: [ReadingV2.self])
        var events = container.storeEvents.makeAsyncIterator()
        container.mainContext.insert(ReadingV2(label: "new", value: 1.5))
        try container.mainContext.save()
        let announced = await SQLiteJournalTestKit.nextFailure(&events)
        guard let announced, case .codingFailed(_, "Reading", _, let reason) = announced.error else {
            Issue.record("expected codingFailed for Reading, got \(String(describing: announced))")
            return
        }
        let failure = announced.error
        #expect(reason.contains("\"value\""))
        // Only a new model can fix it, so the event announces no retry.
        #expect(announced.retryIn == .zero)
        // The next save throws the same error and commits nothing.
        container.mainContext.insert(ReadingV2(label: "refused", value: 2.5))
        #expect(throws: failure) { try container.mainContext.save() }
        #expect(container.count(of: ReadingV2.self) == 1)
        await #expect(throws: failure) { try await container.flush() }
        await #expect(throws: failure) { try await container.close() }

        // The journal keeps the save that returned; the next open reports the field again.
        #expect(FileManager.default.fileExists(atPath: SQLiteJournalTestKit.journal(of: url).path))
        let before = SQLiteJournalTestKit.snapshot(of: directory.url)
        let error = SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url, model: [ReadingV2.self]) }
        guard case .codingFailed(_, "Reading", _, let again)? = error else {
            Issue.record("expected codingFailed for Reading, got \(String(describing: error))")
            return
        }
        #expect(again.contains("\"value\""))
        #expect(SQLiteJournalTestKit.snapshot(of: directory.url) == before)
    }
}
