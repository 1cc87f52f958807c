import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// Any SQLite database becomes a snapshot: a table with a primary key per entity, values by
/// storage class, the other tables skipped and listed, the file left as it was.
@Suite struct ImportPlainTests {
    typealias Kit = ImportTestKit

    /// Creates a database with `sql` in a fresh directory and imports it, checking it unchanged.
    private func importDatabase(
        _ sql: String, arguments: StatementArguments = [], options: PlainSQLiteImportOptions = PlainSQLiteImportOptions(),
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws -> (GenericSnapshot, PlainSQLiteImportReport) {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("app.sqlite")
        try Kit.execute(sql, arguments: arguments, on: url)
        return try Kit.expectUnchanged(url) { try PlainSQLiteImporter.snapshot(from: url, options: options, progress: progress) }
    }

    // MARK: - Values

    @Test func valuesFollowTheStorageClassAndNullIsLeftOut() throws {
        let bytes = Data([0, 1, 2, 0xFF, 0])
        let (snapshot, report) = try importDatabase(
            """
            CREATE TABLE item (id INTEGER PRIMARY KEY, count INTEGER, price REAL, name TEXT, payload BLOB, note TEXT, anything);
            INSERT INTO item VALUES (1, 9223372036854775807, 0.1, 'Ünïcödé 🎉', ?, NULL, 'text');
            INSERT INTO item VALUES (2, -9223372036854775808, -1.5e300, '', X'', 'n', 42);
            """, arguments: [bytes])
        #expect(snapshot.objects(of: "item") == [
            .object(["id": .integer(1), "count": .integer(.max), "price": .double(0.1), "name": .string("Ünïcödé 🎉"), "payload": .data(bytes), "anything": .string("text")]),
            .object(["id": .integer(2), "count": .integer(.min), "price": .double(-1.5e300), "name": .string(""), "payload": .data(Data()), "note": .string("n"), "anything": .integer(42)]),
        ])
        #expect(report.importedTables == [.init(name: "item", rows: 2, primaryKey: ["id"])])
        #expect(snapshot.header.counts == ["item": 2])
        #expect(snapshot.header.fieldTypes == ["item": ["payload": "data"]])
    }

    @Test func datesAreNotGuessedFromDeclaredTypes() throws {
        let (snapshot, _) = try importDatabase(
            """
            CREATE TABLE event (id INTEGER PRIMARY KEY, at DATETIME, on_day DATE, stamp TIMESTAMP, unix INTEGER);
            INSERT INTO event VALUES (1, '2024-05-01 12:00:00', 2460432.5, 1714560000.25, 1714560000);
            """)
        #expect(snapshot.objects(of: "event") == [
            .object(["id": .integer(1), "at": .string("2024-05-01 12:00:00"), "on_day": .double(2_460_432.5), "stamp": .double(1_714_560_000.25), "unix": .integer(1_714_560_000)]),
        ])
        #expect(snapshot.header.fieldTypes == nil)
    }

    @Test func booleanColumnsGiveBooleansUnlessTurnedOff() throws {
        let sql = """
            CREATE TABLE flag (id INTEGER PRIMARY KEY, done BOOLEAN, seen BOOL, count INTEGER);
            INSERT INTO flag VALUES (1, 1, 0, 1), (2, 0, 7, 0);
            """
        let (converted, _) = try importDatabase(sql)
        #expect(converted.objects(of: "flag") == [
            .object(["id": .integer(1), "done": .bool(true), "seen": .bool(false), "count": .integer(1)]),
            .object(["id": .integer(2), "done": .bool(false), "seen": .integer(7), "count": .integer(0)]),
        ])
        let (asStored, _) = try importDatabase(sql, options: PlainSQLiteImportOptions(convertsBooleans: false))
        #expect(asStored.objects(of: "flag").map { $0["done"] } == [.integer(1), .integer(0)])
    }

    /// A column of BLOBs (NULLs aside) gets the `data` hint; one that also holds text is refused
    /// (see `ImportExactValueTests`), since without the hint its BLOBs would read back as text.
    @Test func aColumnOfBlobsGetsTheDataHint() throws {
        let (snapshot, _) = try importDatabase(
            """
            CREATE TABLE blobs (id INTEGER PRIMARY KEY, value TEXT, bytes BLOB);
            INSERT INTO blobs VALUES (1, 'a', X'01'), (2, 'text', NULL);
            """)
        #expect(snapshot.header.fieldTypes == ["blobs": ["bytes": "data"]])
    }

    // MARK: - Ids

    @Test func aKeyNotNamedIDIsCopiedToIDAndKept() throws {
        let (snapshot, report) = try importDatabase(
            """
            CREATE TABLE book (isbn TEXT PRIMARY KEY, title TEXT) WITHOUT ROWID;
            INSERT INTO book VALUES ('978-0', 'Zero'), ('978-1', 'One');
            CREATE TABLE author (author_id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO author VALUES (7, 'Ann');
            """)
        #expect(snapshot.objects(of: "book") == [
            .object(["id": .string("978-0"), "isbn": .string("978-0"), "title": .string("Zero")]),
            .object(["id": .string("978-1"), "isbn": .string("978-1"), "title": .string("One")]),
        ])
        #expect(snapshot.objects(of: "author") == [.object(["id": .integer(7), "author_id": .integer(7), "name": .string("Ann")])])
        #expect(report.importedTables.map(\.primaryKey) == [["author_id"], ["isbn"]])
    }

    @Test func aColumnNamedIDThatIsNotTheKeyIsRenamed() throws {
        let (snapshot, report) = try importDatabase(
            """
            CREATE TABLE account (uuid TEXT PRIMARY KEY, id INTEGER, id_ TEXT);
            INSERT INTO account VALUES ('a', 5, 'x');
            """)
        #expect(snapshot.objects(of: "account") == [.object(["id": .string("a"), "uuid": .string("a"), "id__": .integer(5), "id_": .string("x")])])
        #expect(report.importedTables.first?.renamedColumns == ["id": "id__"])
    }

    @Test func compositeKeysAreJoinedOrSkipped() throws {
        let sql = """
            CREATE TABLE note_tag (note_id INTEGER, tag TEXT, weight REAL, PRIMARY KEY (note_id, tag));
            INSERT INTO note_tag VALUES (3, 'swift', 0.5), (3, 'linux', 1), (10, 'swift', NULL);
            """
        let (joined, joinedReport) = try importDatabase(sql)
        #expect(joined.objects(of: "note_tag") == [
            .object(["id": .string("3|linux"), "note_id": .integer(3), "tag": .string("linux"), "weight": .double(1)]),
            .object(["id": .string("3|swift"), "note_id": .integer(3), "tag": .string("swift"), "weight": .double(0.5)]),
            .object(["id": .string("10|swift"), "note_id": .integer(10), "tag": .string("swift")]),
        ])
        #expect(joinedReport.importedTables.first?.primaryKey == ["note_id", "tag"])

        let (slashed, _) = try importDatabase(sql, options: PlainSQLiteImportOptions(compositeKeys: .joined(separator: "/")))
        #expect(slashed.objects(of: "note_tag").first?["id"] == .string("3/linux"))

        let (skipped, skippedReport) = try importDatabase(sql, options: PlainSQLiteImportOptions(compositeKeys: .skip))
        #expect(skipped.entities.isEmpty)
        #expect(skippedReport.skippedTables == [SkippedTable(name: "note_tag", reason: .compositePrimaryKey)])
    }

    @Test func joinedKeysThatCollideAreRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("app.sqlite")
        try Kit.execute(
            "CREATE TABLE pair (a TEXT, b TEXT, PRIMARY KEY (a, b)); INSERT INTO pair VALUES ('x|y', 'z'), ('x', 'y|z')", on: url)
        let error = try Kit.expectRefused(url) { _ = try PlainSQLiteImporter.snapshot(from: url) }
        guard case .codingFailed(_, "pair", let id, let reason) = error else { throw ImportCoreDataTests.Unexpected(error) }
        #expect(id == "x|y|z")
        #expect(reason.contains("separator"))
    }

    /// A one-column key SQLite keeps apart but the app's id type cannot: a number and text (no
    /// Swift type reads both), two spellings of one string (Swift compares by canonical
    /// equivalence). Before, the first was imported as it was, and the app could not open the
    /// snapshot; the second was refused with advice about composite-key separators. Each is
    /// refused, naming both rows and how SQLite keeps them. (SQLite's own uniqueness already
    /// refuses `5` beside `5.0`.)
    @Test(arguments: [
        ("INSERT INTO thing VALUES (5, 'five'), ('6', 'six')", "row 1 holds INTEGER 5 and row 2 TEXT '6'", "does not read both number and text"),
        ("INSERT INTO thing VALUES ('caf\u{E9}', 'composed'), ('cafe\u{301}', 'decomposed')", "TEXT 'caf\\u{E9}'", "canonical equivalence"),
    ])
    func keysThatAreOneIDToTheAppOrOfTwoKindsAreRefused(_ rows: String, _ named: String, _ why: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("app.sqlite")
        // A key column without affinity keeps each value as it was given.
        try Kit.execute("CREATE TABLE thing (key PRIMARY KEY, label TEXT); " + rows, on: url)
        let error = try Kit.expectRefused(url) { _ = try PlainSQLiteImporter.snapshot(from: url) }
        guard case .codingFailed(let path, "thing", _, let reason) = error else { throw ImportCoreDataTests.Unexpected(error) }
        #expect(path == url.path)
        #expect(reason.contains(named) && reason.contains(why) && reason.contains("primary-key column key"), "\(reason)")
        #expect(!reason.contains("separator"), "\(reason)")
    }

    @Test func aNullKeyIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("app.sqlite")
        // SQLite lets a non-INTEGER primary key of a rowid table hold NULL.
        try Kit.execute("CREATE TABLE code (code TEXT PRIMARY KEY, label TEXT); INSERT INTO code VALUES (NULL, 'none'), ('a', 'A')", on: url)
        let error = try Kit.expectRefused(url) { _ = try PlainSQLiteImporter.snapshot(from: url) }
        guard case .codingFailed(_, "code", nil, let reason) = error else { throw ImportCoreDataTests.Unexpected(error) }
        #expect(reason.contains("NULL") && reason.contains("code"))
    }

    // MARK: - Skipped tables

    @Test func tablesWithoutAKeyAndSQLitesOwnTablesAreSkippedAndListed() throws {
        let (snapshot, report) = try importDatabase(
            """
            CREATE TABLE note (id INTEGER PRIMARY KEY AUTOINCREMENT, text TEXT);
            INSERT INTO note (text) VALUES ('hello'), ('world');
            CREATE TABLE log (at REAL, message TEXT);
            INSERT INTO log VALUES (1, 'started');
            CREATE VIRTUAL TABLE note_search USING fts5(text);
            INSERT INTO note_search VALUES ('hello');
            CREATE TABLE audit (id INTEGER PRIMARY KEY, what TEXT);
            CREATE VIEW recent AS SELECT * FROM note;
            ANALYZE;
            """, options: PlainSQLiteImportOptions(excludedTables: ["AUDIT"]))
        #expect(snapshot.entities.map(\.name) == ["note"])
        #expect(snapshot.objects(of: "note").count == 2)
        let reasons = Dictionary(uniqueKeysWithValues: report.skippedTables.map { ($0.name, $0.reason) })
        #expect(reasons["log"] == .noPrimaryKey)
        #expect(reasons["audit"] == .excluded)
        #expect(reasons["sqlite_sequence"] == .sqliteInternal)
        #expect(reasons["sqlite_stat1"] == .sqliteInternal)
        #expect(reasons["note_search"] == .virtualTable)
        for shadow in ["note_search_data", "note_search_idx", "note_search_content", "note_search_docsize", "note_search_config"] {
            #expect(reasons[shadow] == .shadowTable(of: "note_search"), "\(shadow)")
        }
        #expect(reasons["recent"] == nil)
        #expect(report.importedTables.map(\.name) == ["note"])
        #expect(SkippedTable(name: "log", reason: .noPrimaryKey).description == "log: it has no primary key")
    }

    @Test func anEmptyDatabaseGivesAnEmptySnapshot() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("empty.sqlite")
        try Kit.execute("CREATE TABLE t (id INTEGER PRIMARY KEY); DROP TABLE t", on: url)
        let (snapshot, report) = try PlainSQLiteImporter.snapshot(from: url)
        #expect(snapshot.entities.isEmpty)
        #expect(report == PlainSQLiteImportReport())
    }

    // MARK: - Progress and the source file

    @Test func progressCountsRowsPerTable() throws {
        let log = ProgressLog()
        let (snapshot, _) = try importDatabase(
            """
            CREATE TABLE big (id INTEGER PRIMARY KEY, value INTEGER);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500) INSERT INTO big SELECT i, i * 2 FROM n;
            CREATE TABLE empty (id INTEGER PRIMARY KEY);
            """, progress: log.callback)
        #expect(snapshot.objects(of: "big").count == 2_500)
        #expect(log.all == [
            MigrationProgress(entity: "big", done: 0, total: 2_500), MigrationProgress(entity: "big", done: 1_000, total: 2_500),
            MigrationProgress(entity: "big", done: 2_000, total: 2_500), MigrationProgress(entity: "big", done: 2_500, total: 2_500),
            MigrationProgress(entity: "empty", done: 0, total: 0), MigrationProgress(entity: "empty", done: 0, total: 0),
        ])
        #expect(log.all.last?.fractionCompleted == 1)
    }

    @Test func aWriteAheadLogDatabaseIsReadWithoutFilesAppearing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("wal.sqlite")
        let queue = try DatabaseQueue(path: url.path)
        try queue.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one')")
        }
        try queue.close()
        #expect(SQLiteTestKit.entries(of: directory.url) == ["wal.sqlite"])

        let (snapshot, _) = try Kit.expectUnchanged(url) { try PlainSQLiteImporter.snapshot(from: url) }
        #expect(snapshot.objects(of: "t") == [.object(["id": .integer(1), "v": .string("one")])])
        #expect(SQLiteTestKit.entries(of: directory.url) == ["wal.sqlite"])
    }
}
