import ExampleModel
import Foundation
import GRDB
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

    /// An empty table has no value to compare at open: the first write of the changed field
    /// finds its column holding another kind, and writes the table again with the kind the
    /// objects now write. The saves are kept, and the store opens again.
    @Test func anEmptyTableTakesTheNewKindAtTheFirstWrite() async throws {
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
        let new = ReadingV2(label: "new", value: 1.5)
        container.mainContext.insert(new)
        try container.mainContext.save()
        try await container.flush()
        let later = ReadingV2(label: "later", value: 2.5)
        container.mainContext.insert(later)
        try container.mainContext.save()
        try await container.close()

        #expect(try Self.kinds(of: "Reading", in: url)["value"] == "real")
        let reopened = try SQLiteTestKit.open(url, model: [ReadingV2.self])
        let values = try SQLiteTestKit.fetchAll(ReadingV2.self, from: reopened) { $0.label }.map(\.value)
        #expect(values == [2.5, 1.5])
        try await reopened.close()
    }

    /// A setting whose value is a number for one object and text for another: one field,
    /// two column kinds.
    struct Setting: Entity, Equatable {
        enum Value: Codable, Equatable {
            case number(Int)
            case text(String)

            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let number = try? container.decode(Int.self) {
                    self = .number(number)
                } else {
                    self = .text(try container.decode(String.self))
                }
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .number(let number): try container.encode(number)
                case .text(let text): try container.encode(text)
                }
            }
        }

        var id: Int
        var name: String
        var value: Value
    }

    /// A save of a value of another kind than its column's returned, so it must be written
    /// and the store must open again: the column turns to JSON, which holds either kind, and
    /// the table is written again once. Before, the write failed, later saves threw, and the
    /// journal replay at the next open failed the same way, so the store no longer opened.
    @Test func aFieldOfTwoKindsTurnsItsColumnToJSON() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let container = try SQLiteTestKit.open(url, model: [Setting.self])
        let settings = [
            Setting(id: 1, name: "volume", value: .number(3)), Setting(id: 2, name: "quiet hours", value: .number(22)),
        ]
        for setting in settings { container.mainContext.insert(setting) }
        try container.mainContext.save()
        try await container.flush()
        let theme = Setting(id: 3, name: "theme", value: .text("dark"))
        container.mainContext.insert(theme)
        try container.mainContext.save()
        try await container.flush()
        container.mainContext.insert(Setting(id: 4, name: "font", value: .text("serif")))
        try container.mainContext.save()
        try await container.close()

        #expect(try Self.kinds(of: "Setting", in: url) == ["id": "integer", "name": "text", "value": "json"])
        let expected = settings + [theme, Setting(id: 4, name: "font", value: .text("serif"))]
        let reopened = try SQLiteTestKit.open(url, model: [Setting.self])
        #expect(try SQLiteTestKit.fetchAll(Setting.self, from: reopened) { $0.id } == expected)
        try reopened.checkInvariants()
        try await reopened.close()
        // An outside reader sees each value as its JSON.
        let rows = try await SQLiteTestKit.pythonJSON(
            "import json, sqlite3, sys\nrows = sqlite3.connect(sys.argv[1]).execute('SELECT id, value FROM Setting ORDER BY id').fetchall()\nprint(json.dumps([[i, json.loads(v)] for i, v in rows]))",
            [url.path])
        #expect(String(describing: rows) == String(describing: [[1, 3], [2, 22], [3, "dark"], [4, "serif"]] as [[Any]]))
    }

    /// Saves setting 1 as the number 3 and closes; then saves `journaled` and puts the
    /// database back as it was before that save, beside the journal the save left: as a
    /// process killed before its write.
    static func journalOnly(_ journaled: Setting, at url: URL) async throws {
        let container = try SQLiteTestKit.open(url, model: [Setting.self])
        container.mainContext.insert(Setting(id: 1, name: "volume", value: .number(3)))
        try container.mainContext.save()
        try await container.close()
        try await SQLiteJournalTestKit.leaveInJournalOnly(url, model: [Setting.self]) { context in
            context.insert(journaled)
            try context.save()
        }
    }

    /// A store whose journal holds a save of the second kind, not yet written (the process was
    /// killed before the write): the replay at open writes the table again, and every save is
    /// there.
    @Test func aJournaledSaveOfTheSecondKindIsWrittenAtOpen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await Self.journalOnly(Setting(id: 2, name: "theme", value: .text("dark")), at: url)

        let reopened = try SQLiteTestKit.open(url, model: [Setting.self])
        #expect(try SQLiteTestKit.fetchAll(Setting.self, from: reopened) { $0.id }.map(\.value) == [.number(3), .text("dark")])
        try await reopened.close()
        #expect(try Self.kinds(of: "Setting", in: url)["value"] == "json")
    }

    /// As above, but the journaled save changed every stored object to the second kind: no
    /// object writes the column's kind any more, yet the type did not change (the database
    /// still holds values of the first kind, which it decodes). The store opens, and the
    /// saves are there.
    @Test func aJournaledSaveChangingEveryObjectToTheSecondKindOpens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await Self.journalOnly(Setting(id: 1, name: "volume", value: .text("loud")), at: url)

        let reopened = try SQLiteTestKit.open(url, model: [Setting.self])
        #expect(try SQLiteTestKit.fetchAll(Setting.self, from: reopened) { $0.id }.map(\.value) == [.text("loud")])
        try await reopened.close()
        // The table was written again with the kind its objects write now.
        #expect(try Self.kinds(of: "Setting", in: url)["value"] == "text")
        let third = try SQLiteTestKit.open(url, model: [Setting.self])
        #expect(try SQLiteTestKit.fetchAll(Setting.self, from: third) { $0.id }.map(\.value) == [.text("loud")])
        try await third.close()
    }

    /// The kinds `graphstore_columns` records for `entity`'s columns.
    static func kinds(of entity: String, in url: URL) throws -> [String: String] {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT \"column\", kind FROM graphstore_columns WHERE entity = ?", arguments: [entity])
                .map { (row: Row) -> (String, String) in (row[0], row[1]) })
        }
    }
}
