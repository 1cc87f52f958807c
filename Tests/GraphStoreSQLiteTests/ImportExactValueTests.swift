import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// What an importer reads arrives exactly, or the import says why not, naming the table or
/// entity, the column and the row: text with a NUL character, text that is not UTF-8, a column
/// mixing BLOBs with other values, a date attribute's default, two attributes whose names
/// differ only in case, and a column an app added outside Core Data's naming.
@Suite struct ImportExactValueTests {
    typealias Kit = ImportTestKit

    @Test func plainTextWithANulCharacterArrivesWhole() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("legacy.db")
        try Kit.execute(
            """
            CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT);
            INSERT INTO note VALUES (1, CAST(X'6D696C6B00686F6E6579' AS TEXT));
            INSERT INTO note VALUES (2, 'plain');
            """, on: url)
        let (snapshot, _) = try PlainSQLiteImporter.snapshot(from: url)
        #expect(try Kit.object(snapshot, "note", id: .integer(1))["body"] == .string("milk\u{0}honey"))
        #expect(try Kit.object(snapshot, "note", id: .integer(2))["body"] == .string("plain"))
    }

    /// Through a symbolic link, the database it names is read (its size checked against its
    /// header, not the link's), and a link to a directory is called a directory.
    @Test func aDatabaseThroughASymbolicLinkIsRead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("legacy.db"), link = directory.file("link.db")
        // Enough rows for several pages, so that the header's page count exceeds a link's size.
        try Kit.execute(
            "CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT);"
                + (1...400).map { "INSERT INTO note VALUES (\($0), '\(String(repeating: "words ", count: 20))');" }.joined(),
            on: url)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: url.lastPathComponent)
        let (snapshot, _) = try PlainSQLiteImporter.snapshot(from: link)
        #expect(snapshot.objects(of: "note").count == 400)

        let folder = directory.file("folder.db"), folderLink = directory.file("folder-link.db")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: folderLink.path, withDestinationPath: folder.lastPathComponent)
        let error = SQLiteTestKit.storeError { _ = try PlainSQLiteImporter.snapshot(from: folderLink) }
        guard case .fileOperationFailed(_, _, let reason)? = error else {
            Issue.record("expected fileOperationFailed, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("directory"), "\(reason)")
    }

    /// Through a symbolic link, the write-ahead log beside the database it names is read too:
    /// the rows a process committed there and did not checkpoint (it was killed) are not missed.
    @Test func aDatabaseThroughASymbolicLinkIsReadWithItsWriteAheadLog() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("legacy.db"), link = directory.file("link.db")
        let script = """
            import os, sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            c.execute("PRAGMA journal_mode=WAL"); c.execute("PRAGMA wal_autocheckpoint=0")
            c.execute("CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT)"); c.commit()
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            c.executemany("INSERT INTO note VALUES (?, ?)", [(i, "in the log") for i in range(1, 51)]); c.commit()
            os._exit(0)
            """
        #expect(try await runPython(script, [url.path]).status == 0)
        #expect(((try? FileManager.default.attributesOfItem(atPath: url.path + "-wal"))?[.size] as? NSNumber)?.intValue ?? 0 > 0)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: url.lastPathComponent)
        let (snapshot, _) = try PlainSQLiteImporter.snapshot(from: link)
        #expect(snapshot.objects(of: "note").count == 50)
    }

    @Test func plainTextThatIsNotUTF8IsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("legacy.db")
        try Kit.execute(
            """
            CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT);
            INSERT INTO note VALUES (1, 'fine');
            INSERT INTO note VALUES (2, CAST(X'436166E9' AS TEXT));
            """, on: url)
        let error = SQLiteTestKit.storeError { _ = try PlainSQLiteImporter.snapshot(from: url) }
        guard case .codingFailed(_, let entity, _, let reason)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(entity == "note")
        #expect(reason.contains("column body of row 2"))
        #expect(reason.contains("43 61 66 e9"))
    }

    @Test func aColumnMixingBLOBsWithTextIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("legacy.db")
        try Kit.execute(
            """
            CREATE TABLE setting (id INTEGER PRIMARY KEY, value);
            INSERT INTO setting VALUES (1, X'00FF'), (2, 'AP8=');
            """, on: url)
        let error = SQLiteTestKit.storeError { _ = try PlainSQLiteImporter.snapshot(from: url) }
        guard case .codingFailed(_, let entity, _, let reason)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(entity == "setting")
        #expect(reason.contains("column value holds BLOBs (first at row 1) and other values (first at row 2)"))
    }

    @Test func aCoreDataStringWithANulCharacterArrivesWhole() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try CoreDataModelDescription.read(from: CoreDataModelTestKit.writeModel(in: directory.url))
        let store = try CoreDataModelTestKit.writeStore(in: directory.url)
        // As SQL: a bound Swift string would itself be cut at the NUL.
        try Kit.execute("UPDATE ZITEM SET ZTITLE = CAST(X'47726F63657269657300616E64206D6F7265' AS TEXT) WHERE Z_PK = 1", on: store)
        let (snapshot, _) = try CoreDataImporter.snapshot(from: store, options: CoreDataImportOptions(model: model))
        #expect(try Kit.object(snapshot, "Note", id: .integer(1))["title"] == .string("Groceries\u{0}and more"))
    }

    /// An `Event` model with a date default, and `extra` more attributes.
    private static func eventModel(extra: String = "") -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            <entity name="Event" representedClassName="Event" syncable="YES" codeGenerationType="class">
                <attribute name="title" attributeType="String"/>
                <attribute name="startsAt" attributeType="Date" defaultDateTimeInterval="725846400" usesScalarValueType="NO"/>
                <attribute name="userID" optional="YES" attributeType="String"/>
                \(extra)
            </entity>
        </model>
        """
    }

    /// A store of one event with a NULL date, beside a column an app added with SQL.
    private func writeEventStore(in directory: TemporaryDirectory, model contents: String) throws -> (URL, CoreDataModelDescription) {
        let model = try CoreDataModelDescription.read(from: CoreDataModelTestKit.writeModel(in: directory.url, contents: contents))
        let store = directory.file("Events.sqlite")
        try Kit.execute(
            """
            CREATE TABLE ZEVENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZSTARTSAT TIMESTAMP, ZTITLE VARCHAR,
              ZUSERID VARCHAR, ZUSERID1 VARCHAR, legacy_note VARCHAR );
            CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
            INSERT INTO Z_PRIMARYKEY VALUES (1, 'Event', 0, 1);
            INSERT INTO ZEVENT VALUES (1, 1, 1, NULL, 'Launch', 'upper', 'lower', 'written by the app in SQL');
            """, on: store)
        return (store, model)
    }

    @Test func aNullDateTakesTheModelsDateDefault() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, model) = try writeEventStore(in: directory, model: Self.eventModel())
        let (snapshot, report) = try CoreDataImporter.snapshot(from: store, options: CoreDataImportOptions(model: model))
        #expect(try Kit.object(snapshot, "Event", id: .integer(1))["startsAt"] == .double(725_846_400))
        #expect(report.warnings.contains { $0.hasPrefix("Event.startsAt") && $0.contains("took the model's default") })
    }

    /// A NULL of a non-optional UUID without a default is left out, and the warning says so
    /// rather than that it took a default.
    @Test func aNullWithoutADefaultIsReportedLeftOut() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let extra = #"<attribute name="token" attributeType="UUID" usesScalarValueType="NO"/>"#
        let (store, model) = try writeEventStore(in: directory, model: Self.eventModel(extra: extra))
        try Kit.execute("ALTER TABLE ZEVENT ADD COLUMN ZTOKEN BLOB", on: store)
        let (snapshot, report) = try CoreDataImporter.snapshot(from: store, options: CoreDataImportOptions(model: model))
        #expect(try Kit.object(snapshot, "Event", id: .integer(1))["token"] == nil)
        #expect(report.warnings.contains { $0.hasPrefix("Event.token: 1 NULL value(s)") && $0.contains("were left out") }, "\(report.warnings)")
        #expect(!report.warnings.contains { $0.hasPrefix("Event.token") && $0.contains("took the model's default") }, "\(report.warnings)")
    }

    @Test func aColumnOutsideTheModelIsNamedWhateverItsSpelling() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, model) = try writeEventStore(in: directory, model: Self.eventModel())
        let (_, report) = try CoreDataImporter.snapshot(from: store, options: CoreDataImportOptions(model: model))
        #expect(report.warnings.contains { $0.contains("ZEVENT.legacy_note") }, "\(report.warnings)")
        #expect(report.warnings.contains { $0.contains("ZEVENT.ZUSERID1") }, "\(report.warnings)")
        #expect(!report.warnings.contains { $0.contains("Z_OPT") || $0.contains("Z_ENT") }, "\(report.warnings)")
    }

    @Test func twoAttributesWhoseNamesDifferOnlyInCaseAreRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, model) = try writeEventStore(in: directory, model: Self.eventModel(extra: #"<attribute name="userId" optional="YES" attributeType="String"/>"#))
        let error = SQLiteTestKit.storeError { _ = try CoreDataImporter.snapshot(from: store, options: CoreDataImportOptions(model: model)) }
        guard case .codingFailed(_, let entity, _, let reason)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(entity == "Event")
        #expect(reason.contains("Event.userID and Event.userId both name the store's column ZUSERID"))
    }
}
