import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// An input that is not a (good) SQLite database, or not a Core Data store, gives an error that
/// names the file, and the file and its directory are left exactly as they were.
@Suite struct ImportDamagedFileTests {
    typealias Kit = ImportTestKit

    enum Importer: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case plain, coreData
        var testDescription: String { rawValue }

        func run(_ url: URL) throws {
            switch self {
            case .plain: _ = try PlainSQLiteImporter.snapshot(from: url)
            case .coreData: _ = try CoreDataImporter.snapshot(from: url)
            }
        }
    }

    @Test(arguments: Importer.allCases)
    func randomBytesAreNotADatabase(_ importer: Importer) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("input.sqlite")
        try SplitMix64.bytes(4096).write(to: url)

        let error = try Kit.expectRefused(url) { try importer.run(url) }
        guard case .damagedFile(_, let offset, let reason) = error else { throw Unexpected(error) }
        #expect(offset == 0)
        #expect(reason.contains("not a SQLite database"))
    }

    @Test(arguments: Importer.allCases)
    func anEmptyFileIsNotADatabase(_ importer: Importer) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("input.sqlite")
        try Data().write(to: url)

        let error = try Kit.expectRefused(url) { try importer.run(url) }
        guard case .damagedFile(_, 0, let reason) = error else { throw Unexpected(error) }
        #expect(reason.contains("empty"))
    }

    @Test(arguments: Importer.allCases)
    func aTruncatedDatabaseIsRefused(_ importer: Importer) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("input.sqlite")
        try Kit.makeCoreDataStore(at: url)
        try Kit.execute("WITH RECURSIVE n(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM n WHERE i < 999) INSERT INTO ZTAG SELECT i, 13, 1, printf('%.200c', 'x') FROM n", on: url)
        let full = try #require(SQLiteTestKit.contents(url))
        try full.prefix(full.count / 2).write(to: url)

        let error = try Kit.expectRefused(url) { try importer.run(url) }
        guard case .damagedFile(_, let offset, let reason) = error else { throw Unexpected(error) }
        #expect(offset == full.count / 2)
        #expect(reason.contains("truncated"))
    }

    @Test(arguments: Importer.allCases)
    func aFileCutInsideTheHeaderIsRefused(_ importer: Importer) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("input.sqlite")
        try Kit.makeCoreDataStore(at: url)
        try #require(SQLiteTestKit.contents(url)).prefix(40).write(to: url)

        let error = try Kit.expectRefused(url) { try importer.run(url) }
        guard case .damagedFile(_, 40, _) = error else { throw Unexpected(error) }
    }

    @Test(arguments: Importer.allCases)
    func aMissingFileIsAFailedOpen(_ importer: Importer) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("missing.sqlite")

        let error = try #require(SQLiteTestKit.storeError { try importer.run(url) })
        guard case .fileOperationFailed(let path, "open", let reason) = error else { throw Unexpected(error) }
        #expect(path == url.path)
        #expect(reason == "no such file")
        #expect(SQLiteTestKit.entries(of: directory.url).isEmpty)
    }

    @Test(arguments: Importer.allCases)
    func aWriteAheadLogDatabaseDamagedInItsSchemaLeavesNoFilesBeside(_ importer: Importer) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("input.sqlite")
        try Kit.makeCoreDataStore(at: url)
        // The B-tree page header of sqlite_master, just after the 100-byte file header.
        let handle = try FileHandle(forUpdating: url)
        try handle.seek(toOffset: 100)
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 16))
        try handle.close()

        let error = try Kit.expectRefused(url) { try importer.run(url) }
        guard case .damagedFile = error else { throw Unexpected(error) }
    }

    @Test func aSQLiteDatabaseWithoutZPrimaryKeyIsNotACoreDataStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("plain.sqlite")
        try Kit.execute("CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO note VALUES (1, 'hi')", on: url)

        let error = try Kit.expectRefused(url) { _ = try CoreDataImporter.snapshot(from: url) }
        guard case .damagedFile(_, nil, let reason) = error else { throw Unexpected(error) }
        #expect(reason.contains("not a Core Data store"))
        #expect(reason.contains("Z_PRIMARYKEY"))
        #expect(reason.contains("note"))
        #expect(error.description.contains(url.path))
    }

    @Test func metadataThatIsNoPropertyListIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Notes.sqlite")
        try Kit.makeCoreDataStore(at: url)
        try Kit.execute("UPDATE Z_METADATA SET Z_PLIST = X'00112233445566778899'", on: url)

        let error = try Kit.expectRefused(url) { _ = try CoreDataImporter.snapshot(from: url) }
        guard case .damagedFile(_, nil, let reason) = error else { throw Unexpected(error) }
        #expect(reason.contains("Z_METADATA.Z_PLIST"))
    }

    @Test func aRowOfAnUnknownEntityIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Notes.sqlite")
        try Kit.makeCoreDataStore(at: url)
        try Kit.execute("INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (99, 42, 1, 'stray')", on: url)

        let error = try Kit.expectRefused(url) { _ = try CoreDataImporter.snapshot(from: url) }
        guard case .damagedFile(_, nil, let reason) = error else { throw Unexpected(error) }
        #expect(reason.contains("ZITEM") && reason.contains("42"), "\(reason)")
    }

    @Test func aMalformedTablePageIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Notes.sqlite")
        try Kit.makeCoreDataStore(at: url)
        try Kit.execute("WITH RECURSIVE n(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM n WHERE i < 999) INSERT INTO ZTAG SELECT i, 13, 1, printf('%.200c', 'x') FROM n", on: url)
        try Self.corruptRootPage(of: "ZTAG", at: url)

        for importer in Importer.allCases {
            let error = try Kit.expectRefused(url) { try importer.run(url) }
            guard case .damagedFile(_, _, let reason) = error else { throw Unexpected(error) }
            #expect(reason.contains("malformed"), "\(importer): \(reason)")
        }
    }

    // MARK: - Helpers

    struct Unexpected: Error, CustomStringConvertible {
        let error: GraphStoreError
        init(_ error: GraphStoreError) { self.error = error }
        var description: String { "unexpected error: \(error)" }
    }

    /// Overwrites the page header of `table`'s root B-tree page with bytes no page starts with.
    private static func corruptRootPage(of table: String, at url: URL) throws {
        let queue = try DatabaseQueue(path: url.path)
        let (rootPage, pageSize) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = ?", arguments: [table])!,
             try Int.fetchOne(db, sql: "PRAGMA page_size")!)
        }
        try queue.close()
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64((rootPage - 1) * pageSize))
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 16))
    }
}
