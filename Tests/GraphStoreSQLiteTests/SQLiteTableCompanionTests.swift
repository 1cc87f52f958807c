import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// Indexes and triggers another program made on an entity table survive the store writing the
/// table again: a field that came to encode as two kinds (its column turns to JSON), and a
/// migration to a new model version. Before, `DROP TABLE` took them with it, without a word.
@Suite struct SQLiteTableCompanionTests {
    typealias Setting = SQLiteColumnKindTests.Setting

    /// The indexes and triggers on `table` (by name, with their SQL), as `sqlite_master` lists them.
    static func companions(of table: String, in url: URL) throws -> [String: String] {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(
                db, sql: "SELECT name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL AND tbl_name = ?",
                arguments: [table]).map { (row: Row) -> (String, String) in (row[0], row[1]) })
        }
    }

    /// The rows of the audit table the first test's triggers fill, as "insert 2".
    static func audit(in url: URL) throws -> [String] {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT what, setting FROM report_audit ORDER BY rowid").map { row -> String in
                let what: String = row[0]
                let setting: Int64 = row[1]
                return "\(what) \(setting)"
            }
        }
    }

    static func execute(_ statements: [String], in url: URL) throws {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        try queue.write { db in
            for sql in statements { try db.execute(sql: sql) }
        }
    }

    /// A closed store in `directory` holding one setting ("volume", 3), on which another
    /// program then ran `statement`.
    static func storeOfOneSetting(in directory: TemporaryDirectory, then statement: String) async throws -> URL {
        let url = directory.file("store.sqlite")
        let first = try SQLiteTestKit.open(url, model: [Setting.self])
        first.mainContext.insert(Setting(id: 1, name: "volume", value: .number(3)))
        try first.mainContext.save()
        try await first.close()
        try execute([statement], in: url)
        return url
    }

    @Test func aTableWrittenAgainForAFieldOfTwoKindsKeepsOtherProgramsIndexesAndTriggers() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let first = try SQLiteTestKit.open(url, model: [Setting.self])
        first.mainContext.insert(Setting(id: 1, name: "volume", value: .number(3)))
        first.mainContext.insert(Setting(id: 5, name: "brightness", value: .number(7)))
        try first.mainContext.save()
        try await first.close()
        // A reporting tool's index, a trigger that refuses an empty name in any later write,
        // and an audit log of the rows written and deleted.
        let made = [
            "CREATE INDEX report_setting_name ON Setting (name)",
            "CREATE TRIGGER report_no_empty_name BEFORE INSERT ON Setting WHEN new.name = '' BEGIN SELECT RAISE(ABORT, 'empty name'); END",
            "CREATE TABLE report_audit (what TEXT, setting INTEGER)",
            "CREATE TRIGGER report_audit_insert AFTER INSERT ON Setting BEGIN INSERT INTO report_audit VALUES ('insert', new.id); END",
            "CREATE TRIGGER report_audit_delete AFTER DELETE ON Setting BEGIN INSERT INTO report_audit VALUES ('delete', old.id); END",
        ]
        try Self.execute(made, in: url)
        let before = try Self.companions(of: "Setting", in: url)
        #expect(before.count == 4)

        // One save that turns the column to JSON, inserts and deletes.
        let container = try SQLiteTestKit.open(url, model: [Setting.self])
        container.mainContext.insert(Setting(id: 2, name: "theme", value: .text("dark")))
        container.mainContext.delete(Setting(id: 5, name: "brightness", value: .number(7)))
        try container.mainContext.save()
        try await container.close()

        #expect(try SQLiteColumnKindTests.kinds(of: "Setting", in: url)["value"] == "json")
        #expect(try Self.companions(of: "Setting", in: url) == before)
        // The save's own insert and delete fired the audit triggers; the row that only moved
        // into the table written again did not.
        let audit = try Self.audit(in: url)
        #expect(audit == ["insert 2", "delete 5"])
        // The trigger works on the table written again.
        #expect(throws: DatabaseError.self) {
            try Self.execute(["INSERT INTO Setting (id, name, value) VALUES (9, '', '1')"], in: url)
        }
        let reopened = try SQLiteTestKit.open(url, model: [Setting.self])
        #expect(try SQLiteTestKit.fetchAll(Setting.self, from: reopened) { $0.id }.map(\.name) == ["volume", "theme"])
        try await reopened.close()
    }

    /// A trigger or unique index another program added that refuses a save's rows: writing
    /// them again cannot succeed, so the writer does not retry without end while saves go on
    /// returning; the next save throws, with SQLite's message (and the table, where SQLite names
    /// it). The save that returned stays in the journal and comes back once the refusal is gone.
    @Test(arguments: [
        ("CREATE TRIGGER report_no_empty_name BEFORE INSERT ON Setting WHEN new.name = '' BEGIN SELECT RAISE(ABORT, 'empty name'); END",
         "DROP TRIGGER report_no_empty_name", "empty name", "the changed rows"),
        ("CREATE UNIQUE INDEX report_unique_name ON Setting (name)", "DROP INDEX report_unique_name", "UNIQUE constraint failed", "Setting"),
    ])
    func rowsTheDatabaseRefusesStopTheWriterAndSavesThrow(made: String, dropped: String, message: String, table: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.storeOfOneSetting(in: directory, then: made)

        var options = SQLiteStoreOptions()
        options.clock = ManualWriterClock()
        let container = try SQLiteTestKit.open(url, options: options, model: [Setting.self])
        var events = container.storeEvents.makeAsyncIterator()
        // An empty name, and a second "volume": the trigger refuses the one, the index the other.
        container.mainContext.insert(Setting(id: 2, name: "", value: .number(0)))
        container.mainContext.insert(Setting(id: 4, name: "volume", value: .number(0)))
        try container.mainContext.save()
        guard case .writeFailed(let failure, _)? = await events.next() else {
            Issue.record("expected a failed write")
            return
        }
        guard case .codingFailed(let path, let entity, _, let reason) = failure else {
            Issue.record("expected codingFailed, got \(failure)")
            return
        }
        #expect(path == url.path)
        #expect(entity == table)
        #expect(reason.contains(message), "\(reason)")
        container.mainContext.insert(Setting(id: 3, name: "theme", value: .text("dark")))
        #expect(throws: GraphStoreError.self) { try container.mainContext.save() }
        await #expect(throws: GraphStoreError.self) { try await container.close() }

        // The journal keeps the save that returned; without the refusal it is written.
        try Self.execute([dropped], in: url)
        let reopened = try SQLiteTestKit.open(url, model: [Setting.self])
        #expect(try SQLiteTestKit.fetchAll(Setting.self, from: reopened) { $0.id }.map(\.id) == [1, 2, 4])
        try await reopened.close()
    }

    /// A table written again (its column turns to JSON) whose other program's `UNIQUE` index
    /// the new values break: the write is refused with the index named, and not retried, as
    /// the same rows meet the same refusal.
    @Test func anIndexThatCannotBeMadeAgainStopsTheWriter() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // One row per storage class: holds while the column stores integers and text apart.
        let url = try await Self.storeOfOneSetting(in: directory, then: "CREATE UNIQUE INDEX report_one_per_kind ON Setting (typeof(value))")

        var options = SQLiteStoreOptions()
        options.clock = ManualWriterClock()
        let container = try SQLiteTestKit.open(url, options: options, model: [Setting.self])
        var events = container.storeEvents.makeAsyncIterator()
        // A text value turns the column to JSON: every value is then text, twice one kind.
        container.mainContext.insert(Setting(id: 2, name: "theme", value: .text("dark")))
        try container.mainContext.save()
        guard case .writeFailed(let failure, let retryIn)? = await events.next() else {
            Issue.record("expected a failed write")
            return
        }
        guard case .codingFailed(_, "Setting", _, let reason) = failure else {
            Issue.record("expected codingFailed naming Setting, got \(failure)")
            return
        }
        #expect(reason.contains("report_one_per_kind"), "\(reason)")
        #expect(retryIn == .zero)
        container.mainContext.insert(Setting(id: 3, name: "size", value: .number(1)))
        #expect(throws: GraphStoreError.self) { try container.mainContext.save() }
        await #expect(throws: GraphStoreError.self) { try await container.close() }
    }

    /// A migration writes every table again: an index or trigger on a table and columns the new
    /// model keeps is made again; one on a renamed table is left out (the copy of the old file
    /// keeps it), and the migration still succeeds.
    @Test func aMigrationMakesAgainWhatStillFits() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try SQLiteMigrationTestKit.copyFixture(to: directory)
        try Self.execute([
            "CREATE INDEX report_tag_name ON Tag (name)",
            "CREATE TRIGGER report_tag_delete BEFORE DELETE ON Tag BEGIN SELECT 1; END",
            "CREATE INDEX report_memo_text ON Memo (text)",
        ], in: url)
        let tagCompanions = try Self.companions(of: "Tag", in: url)
        // A trigger that writes to a table the migration renames: SQLite would make it again
        // without a word, and every later save of a tag would then fail.
        try Self.execute(["CREATE TRIGGER report_tag_memo AFTER INSERT ON Tag BEGIN UPDATE Memo SET text = text WHERE 0; END"], in: url)

        let container = try SQLiteMigrationTestKit.open(url)
        #expect(try SQLiteMigrationTestKit.notes(container).count == 4)
        container.mainContext.insert(ModelV3.Tag(id: UUID(), name: "sqlite"))
        try container.mainContext.save()
        try await container.close()
        let reopened = try SQLiteMigrationTestKit.open(url)
        #expect(try reopened.mainContext.fetch(FetchDescriptor<ModelV3.Tag>()).map(\.name).sorted() == ["linux", "sqlite", "swift"])
        try await reopened.close()

        #expect(try Self.companions(of: "Tag", in: url) == tagCompanions)
        #expect(try Self.companions(of: "Note", in: url).isEmpty)
        #expect(try Self.companions(of: "Memo", in: url).isEmpty)
        #expect(try Self.companions(of: "Memo", in: directory.file("store.sqlite.v1")).keys.sorted() == ["report_memo_text"])
    }
}
