import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// Shared helpers for the importers' tests: a Core Data–shaped store built by hand, and checks
/// that an input file is left as it was.
enum ImportTestKit {
    // MARK: - A Core Data store

    /// The entity numbers (`Z_ENT`) of the test model. They differ between stores, so tests
    /// build the same store with other numbers too.
    struct EntityNumbers: Sendable {
        var comment: Int64 = 1
        var folder: Int64 = 2
        var item: Int64 = 5
        var note: Int64 = 7
        var photo: Int64 = 8
        var reminder: Int64 = 9
        var syncSession: Int64 = 11
        var tag: Int64 = 13
        /// The digits of the entity-number column beside `ZCOMMENT.ZITEM` (`Z3ITEM`).
        var itemEntityColumnDigits: Int64 = 3

        static let standard = EntityNumbers()
        static let shuffled = EntityNumbers(
            comment: 12, folder: 3, item: 20, note: 22, photo: 21, reminder: 4, syncSession: 6, tag: 2, itemEntityColumnDigits: 17)

        var joinTable: String { "Z_\(note)TAGS" }
        var itemEntityColumn: String { "Z\(itemEntityColumnDigits)ITEM" }
    }

    /// Dates as Core Data keeps them: seconds since 2001, REAL or INTEGER, before and after 2001.
    enum Dates {
        static let inboxCreated = -31_622_400.5            // 2000-01-01, minus half a second: REAL
        static let workCreated: Int64 = 600_000_000          // 2020-01-06: INTEGER
        static let groceriesCreated = 700_000_000.123_456_7  // REAL with every bit used
        static let groceriesModified: Int64 = -86_400        // 2000-12-31: negative INTEGER
        static let sunsetCreated = 712_345_678.987_654_3
        static let planCreated = -978_307_199.75             // 1970-01-01T00:00:00.25Z
        static let commentPosted = 0.5
        static let sessionStarted = 1_000_000_000.25
    }

    static let sessionIDs = [
        UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
        UUID(uuidString: "0B3F8A2C-9D4E-4F1A-8B7C-6D5E4F3A2B1C")!,
    ]
    /// 16 bytes that are not a UUID: must stay data.
    static let sessionToken = Data((0..<16).map { UInt8(255 - $0) })
    /// Every byte value, NUL included.
    static let sunsetImage = Data((0..<256).map { UInt8($0) })
    static let storeUUID = "5C3A2E1F-1111-4222-8333-944455556666"

    /// Writes a Core Data–shaped store to `url`, in write-ahead-log mode as Core Data does:
    ///
    /// - `Folder` (`ZFOLDER`), with a self-reference `parent` that is indexed but named like no
    ///   entity;
    /// - `Item` (`ZITEM`) with sub-entities `Note` and `Photo` in the same table; `Note.folder`
    ///   → `Folder`; `Note.tags` ↔ `Tag.notes` through the join table `Z_<note>TAGS`;
    /// - `Comment.item` → `Item`, an entity with sub-entities, so with the column `Z<n>ITEM`;
    ///   `Comment.syncSession` → `SyncSession`;
    /// - `SyncSession`, SwiftData-style, with `id` a 16-byte UUID BLOB and a 16-byte `token`;
    /// - `Reminder`, empty;
    /// - `Z_PRIMARYKEY`, `Z_METADATA` (a binary property list), `Z_MODELCACHE` without a row
    ///   (so the import has no model and names fields after the columns), and the
    ///   persistent-history tables `ACHANGE`, `ATRANSACTION`, `ATRANSACTIONSTRING`.
    static func makeCoreDataStore(at url: URL, numbers n: EntityNumbers = .standard, upperCaseNames: Bool = false) throws {
        let queue = try DatabaseQueue(path: url.path)
        try queue.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.inTransaction {
                try createCoreDataTables(db, n)
                try insertCoreDataRows(db, n, upperCaseNames: upperCaseNames)
                return .commit
            }
        }
        try queue.close()
    }

    private static func createCoreDataTables(_ db: Database, _ n: EntityNumbers) throws {
        try db.execute(sql: """
            CREATE TABLE ZCOMMENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZITEM INTEGER, \(n.itemEntityColumn) INTEGER, ZSYNCSESSION INTEGER, ZPOSTEDAT TIMESTAMP, ZBODY VARCHAR );
            CREATE INDEX ZCOMMENT_ZITEM_INDEX ON ZCOMMENT (ZITEM);
            CREATE INDEX ZCOMMENT_ZSYNCSESSION_INDEX ON ZCOMMENT (ZSYNCSESSION);
            CREATE TABLE ZFOLDER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZSORTINDEX INTEGER, ZPARENT INTEGER, ZCREATEDAT TIMESTAMP, ZNAME VARCHAR );
            CREATE INDEX ZFOLDER_ZPARENT_INDEX ON ZFOLDER (ZPARENT);
            CREATE TABLE ZITEM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZISARCHIVED INTEGER, ZFOLDER INTEGER, ZCREATEDAT TIMESTAMP, ZMODIFIEDAT TIMESTAMP, ZWIDTH FLOAT, ZTITLE VARCHAR, ZTEXT VARCHAR, ZIMAGEDATA BLOB );
            CREATE INDEX ZITEM_ZFOLDER_INDEX ON ZITEM (ZFOLDER);
            CREATE TABLE ZREMINDER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNOTE INTEGER, ZDUEDATE TIMESTAMP );
            CREATE INDEX ZREMINDER_ZNOTE_INDEX ON ZREMINDER (ZNOTE);
            CREATE TABLE ZSYNCSESSION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZSTARTEDAT TIMESTAMP, ZID BLOB, ZTOKEN BLOB, ZDEVICENAME VARCHAR );
            CREATE TABLE ZTAG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
            CREATE TABLE \(n.joinTable) ( Z_\(n.note)NOTES INTEGER, Z_\(n.tag)TAGS INTEGER, PRIMARY KEY (Z_\(n.note)NOTES, Z_\(n.tag)TAGS) );
            CREATE INDEX \(n.joinTable)_Z_\(n.tag)TAGS_INDEX ON \(n.joinTable) (Z_\(n.tag)TAGS, Z_\(n.note)NOTES);
            CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
            CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
            CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
            CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB );
            CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB );
            CREATE INDEX ATRANSACTION_ZTIMESTAMP_INDEX ON ATRANSACTION (ZTIMESTAMP);
            CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
            """)
    }

    private static func insertCoreDataRows(_ db: Database, _ n: EntityNumbers, upperCaseNames: Bool) throws {
        // Folders: a REAL date before 2001, an INTEGER date after, a NULL date.
        try db.execute(sql: "INSERT INTO ZFOLDER VALUES (1, ?, 1, 0, NULL, ?, 'Inbox')", arguments: [n.folder, Dates.inboxCreated])
        try db.execute(sql: "INSERT INTO ZFOLDER VALUES (2, ?, 3, 1, 1, ?, 'Work')", arguments: [n.folder, Dates.workCreated])
        try db.execute(sql: "INSERT INTO ZFOLDER VALUES (3, ?, 1, 2, 1, NULL, 'Ünïcödé 🎉')", arguments: [n.folder])
        // Items: notes, photos and a plain item share ZITEM.
        try db.execute(
            sql: "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZISARCHIVED, ZFOLDER, ZCREATEDAT, ZMODIFIEDAT, ZTITLE, ZTEXT) VALUES (1, ?, 2, 0, 1, ?, ?, 'Groceries', 'milk, eggs')",
            arguments: [n.note, Dates.groceriesCreated, Dates.groceriesModified])
        try db.execute(
            sql: "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZWIDTH, ZCREATEDAT, ZTITLE, ZIMAGEDATA) VALUES (2, ?, 1, 1920.5, ?, 'Sunset', ?)",
            arguments: [n.photo, Dates.sunsetCreated, sunsetImage])
        try db.execute(
            sql: "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZISARCHIVED, ZFOLDER, ZCREATEDAT, ZTITLE, ZTEXT) VALUES (3, ?, 1, 1, 2, ?, 'Plan', 'ship it')",
            arguments: [n.note, Dates.planCreated])
        try db.execute(sql: "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (4, ?, 1, 'Plain item')", arguments: [n.item])
        try db.execute(sql: "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZIMAGEDATA) VALUES (5, ?, 1, 'Empty photo', X'')", arguments: [n.photo])
        // Tags, and the notes' tags.
        for (pk, name) in [(1, "swift"), (2, "linux"), (3, "unused")] {
            try db.execute(sql: "INSERT INTO ZTAG VALUES (?, ?, 1, ?)", arguments: [pk, n.tag, name])
        }
        for (note, tag) in [(1, 2), (1, 1), (3, 2)] {
            try db.execute(sql: "INSERT INTO \(n.joinTable) VALUES (?, ?)", arguments: [note, tag])
        }
        // Sessions, SwiftData-style: `id: UUID` as a 16-byte BLOB.
        for (index, id) in sessionIDs.enumerated() {
            let bytes = withUnsafeBytes(of: id.uuid) { Data($0) }
            try db.execute(
                sql: "INSERT INTO ZSYNCSESSION VALUES (?, ?, 1, ?, ?, ?, ?)",
                arguments: [index + 1, n.syncSession, index == 0 ? Dates.sessionStarted : nil, bytes, sessionToken, index == 0 ? "iPhone" : "Mac"])
        }
        // Comments on a note, on a photo, and on nothing.
        try db.execute(sql: "INSERT INTO ZCOMMENT VALUES (1, ?, 1, 1, ?, 1, ?, 'Nice list')", arguments: [n.comment, n.note, Dates.commentPosted])
        try db.execute(sql: "INSERT INTO ZCOMMENT VALUES (2, ?, 1, 2, ?, NULL, NULL, 'Great shot')", arguments: [n.comment, n.photo])
        try db.execute(sql: "INSERT INTO ZCOMMENT VALUES (3, ?, 1, NULL, NULL, NULL, NULL, 'orphan')", arguments: [n.comment])
        // Core Data's bookkeeping.
        let entities: [(Int64, String, Int64, Int64)] = [
            (n.comment, "Comment", 0, 3), (n.folder, "Folder", 0, 3), (n.item, "Item", 0, 5), (n.note, "Note", n.item, 0),
            (n.photo, "Photo", n.item, 0), (n.reminder, "Reminder", 0, 0), (n.syncSession, "SyncSession", 0, 2), (n.tag, "Tag", 0, 3),
            (16001, "CHANGE", 0, 2), (16002, "TRANSACTION", 0, 1), (16003, "TRANSACTIONSTRING", 0, 2),
        ]
        for (number, name, parent, max) in entities {
            try db.execute(
                sql: "INSERT INTO Z_PRIMARYKEY VALUES (?, ?, ?, ?)", arguments: [number, upperCaseNames ? name.uppercased() : name, parent, max])
        }
        try db.execute(sql: "INSERT INTO Z_METADATA VALUES (1, ?, ?)", arguments: [storeUUID, try metadataPlist(entityNames: entities.prefix(8).map(\.1))])
        try db.execute(sql: "INSERT INTO ATRANSACTIONSTRING VALUES (1, 16003, 1, 'NSCoreDataCoreSpotlightExporter'), (2, 16003, 1, 'app')")
        try db.execute(sql: "INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZTIMESTAMP) VALUES (1, 16002, 1, 2, 785000000.5)")
        try db.execute(sql: "INSERT INTO ACHANGE VALUES (1, 16001, 1, 0, ?, 1, 1, NULL), (2, 16001, 1, 1, ?, 1, 1, X'01')", arguments: [n.note, n.tag])
    }

    /// A binary property list like Core Data's `Z_METADATA.Z_PLIST`.
    static func metadataPlist(entityNames: [String]) throws -> Data {
        var hashes: [String: Any] = [:]
        for (index, name) in entityNames.enumerated() { hashes[name] = Data(repeating: UInt8(index + 1), count: 32) }
        let plist: [String: Any] = [
            "NSStoreType": "SQLite",
            "NSStoreUUID": storeUUID,
            "NSStoreModelVersionHashes": hashes,
            "NSStoreModelVersionHashesVersion": 3,
            "NSStoreModelVersionIdentifiers": [""],
            "NSPersistenceFrameworkVersion": 1_414,
            "NSStoreModelVersionChecksumKey": "bMpud663vz0bXQE24C6Rh4MvJ5jVnzsD2sI3njZkKbc=",
        ]
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
    }

    /// Runs SQL on the database at `url`, then closes it.
    static func execute(_ sql: String, arguments: StatementArguments = [], on url: URL) throws {
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in try db.execute(sql: sql, arguments: arguments) }
        try queue.close()
    }

    // MARK: - Snapshot values

    /// The object of `snapshot`'s `entity` whose id is `id`.
    static func object(_ snapshot: GenericSnapshot, _ entity: String, id: SnapshotValue, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: SnapshotValue] {
        let object = snapshot.objects(of: entity).first { $0["id"] == id }
        guard case .object(let fields)? = object else {
            Issue.record("no \(entity) with id \(id)", sourceLocation: sourceLocation)
            throw MissingObject()
        }
        return fields
    }

    struct MissingObject: Error {}

    /// The value as a JSON snapshot reads it back: data as Base64 text, dates and doubles as
    /// numbers (a whole number within `Int64` reads back as an integer).
    static func asReadFromJSON(_ value: SnapshotValue) -> SnapshotValue {
        switch value {
        case .data(let data): return .string(data.base64EncodedString())
        case .date(let date): return asReadFromJSON(.double(date.timeIntervalSinceReferenceDate))
        case .double(let number):
            if number.rounded() == number, let integer = Int64(exactly: number) { return .integer(integer) }
            return value
        case .array(let values): return .array(values.map(asReadFromJSON))
        case .object(let fields): return .object(fields.mapValues(asReadFromJSON))
        default: return value
        }
    }

    // MARK: - Files

    /// Runs `body`, expecting a `GraphStoreError` naming `url`, and checks that `url` and its
    /// directory are unchanged.
    static func expectRefused(
        _ url: URL, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) throws -> GraphStoreError {
        let before = SQLiteTestKit.contents(url)
        let entries = SQLiteTestKit.entries(of: url.deletingLastPathComponent())
        let thrown = SQLiteTestKit.storeError(sourceLocation: sourceLocation, body)
        let error = try #require(thrown, sourceLocation: sourceLocation)
        #expect(error.description.contains(url.standardizedFileURL.path), "\(error)", sourceLocation: sourceLocation)
        #expect(SQLiteTestKit.contents(url) == before, "the file changed", sourceLocation: sourceLocation)
        #expect(SQLiteTestKit.entries(of: url.deletingLastPathComponent()) == entries, "files appeared or vanished", sourceLocation: sourceLocation)
        return error
    }

    /// Runs `body` and checks that `url` and its directory are unchanged by it.
    static func expectUnchanged<T>(_ url: URL, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) rethrows -> T {
        let before = SQLiteTestKit.contents(url)
        let entries = SQLiteTestKit.entries(of: url.deletingLastPathComponent())
        let result = try body()
        #expect(SQLiteTestKit.contents(url) == before, "the file changed", sourceLocation: sourceLocation)
        #expect(SQLiteTestKit.entries(of: url.deletingLastPathComponent()) == entries, "files appeared or vanished", sourceLocation: sourceLocation)
        return result
    }
}

/// Collects progress reports from any thread.
final class ProgressLog: Sendable {
    private let reports = Guarded<[MigrationProgress]>([])

    var callback: @Sendable (MigrationProgress) -> Void {
        { [reports] progress in reports.withLock { $0.append(progress) } }
    }

    var all: [MigrationProgress] { reports.value }
}
