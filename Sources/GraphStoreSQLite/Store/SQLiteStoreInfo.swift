import Foundation
import GRDB
import GraphStore

/// What a GraphStore SQLite file holds, read without the app's types: format, versions, and
/// each entity's columns, rows and size. What `graphstore inspect` and `verify` print.
///
/// ```swift
/// if SQLiteStoreInfo.isSQLiteDatabase(at: url) {
///     let info = try SQLiteStoreInfo.verify(url)   // or `inspect(_:)`, which reads no rows
///     for entity in info.entities { print(entity.name, entity.rows) }
/// }
/// ```
public struct SQLiteStoreInfo: Sendable, Hashable {
    /// One entity table.
    public struct Entity: Sendable, Hashable {
        /// The entity (and table) name.
        public var name: String
        /// The number of rows: objects.
        public var rows: Int
        /// The columns, in table order.
        public var columns: [Column]
        /// The bytes of the pages the table and its indexes use, from SQLite's `dbstat`; `nil`
        /// when the SQLite library was built without it.
        public var bytes: Int?
    }

    /// One column of an entity table.
    public struct Column: Sendable, Hashable {
        /// The column's name, the entity's field name.
        public var name: String
        /// Its kind in `graphstore_columns`: `integer`, `real`, `text`, `blob`, `bool`, `json`
        /// or `date`.
        public var kind: String
    }

    /// The file.
    public var path: String
    /// The file's size in bytes.
    public var fileSize: Int
    /// `GraphStore SQLite`.
    public var format: String
    /// The layout version.
    public var formatVersion: Int
    /// The application's model version.
    public var modelVersion: String
    /// The store version (commit number) the file holds.
    public var storeVersion: UInt64
    /// SQLite's page size, in bytes.
    public var pageSize: Int
    /// Whether the file is in write-ahead-log mode (as the store leaves it).
    public var isWriteAheadLog: Bool
    /// The entity tables, sorted by name.
    public var entities: [Entity]

    /// Whether the file at `url` starts with SQLite's magic, `SQLite format 3` and a NUL; `false`
    /// for anything but a regular file (through symbolic links).
    ///
    /// - Complexity: reads 16 bytes.
    public static func isSQLiteDatabase(at url: URL) -> Bool {
        // A store this process has open is one, and its file must not be opened here.
        if OpenSQLiteStores.isOpen(url.standardizedFileURL.path) { return true }
        // Not a pipe, whose reading would block until some writer came.
        guard (try? FileStatus.of(path: url.path).get())?.isRegular == true else { return false }
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        let start = (try? handle.read(upToCount: SQLiteFileHeader.magic.count)) ?? Data()
        return start.elementsEqual(SQLiteFileHeader.magic)
    }

    /// Reads the file's metadata, column kinds, row counts and sizes, checking that it is a
    /// GraphStore store. Reads no rows; the file is opened read-only.
    ///
    /// - Throws: as ``Migration/readSQLite(from:progress:)``, except for the rows; that includes
    ///   ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)`` naming the
    ///   journal when it holds saves newer than the file (see ``GraphStore/UnreplayedSaves``).
    /// - Complexity: O(tables + columns), plus a pass over the pages for the sizes.
    public static func inspect(_ url: URL) throws -> SQLiteStoreInfo {
        try read(url, verifying: false, progress: nil)
    }

    /// Checks the whole file: SQLite's `PRAGMA quick_check`, the metadata, that every column of
    /// every table has a kind, and that every value of every row decodes as its column's kind.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/damagedFile(path:offset:reason:)`` when SQLite finds
    ///   the file damaged, and the errors of ``Migration/readSQLite(from:progress:)``.
    /// - Complexity: O(file size).
    public static func verify(_ url: URL, progress: (@Sendable (MigrationProgress) -> Void)? = nil) throws -> SQLiteStoreInfo {
        try read(url, verifying: true, progress: progress)
    }

    // MARK: - Private

    private static func read(_ url: URL, verifying: Bool, progress: (@Sendable (MigrationProgress) -> Void)?) throws -> SQLiteStoreInfo {
        let database = try ForeignDatabase.open(url)
        defer { database.close() }
        let path = database.path
        return try database.read { db in
            if verifying {
                let problems = try String.fetchAll(db, sql: "PRAGMA quick_check(5)")
                guard problems == ["ok"] else {
                    let lines = problems.flatMap { $0.split(separator: "\n") }.filter { !$0.hasPrefix("***") }
                    throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "SQLite's quick_check reports: \(lines.joined(separator: "; "))")
                }
            }
            let contents = try SQLiteStoreContents.read(db, path: path)
            // As for snapshot files: the file alone is not the store while its journal holds newer saves.
            if let saves = try UnreplayedSaves.find(forStoreAt: url, fileVersion: contents.metadata.storeVersion, lineage: contents.metadata.lineage) {
                throw saves.error(reading: path)
            }
            let sizes = tableSizes(db)
            var entities: [Entity] = []
            for table in contents.tables {
                let rows: Int
                if verifying {
                    rows = try SQLiteStoreContents.objects(of: table, in: db, path: path, progress: progress).count
                } else {
                    rows = try SQLiteStoreContents.rowCount(of: table, in: db)
                }
                entities.append(Entity(
                    name: table.name, rows: rows,
                    columns: zip(table.columns, table.kinds).map { Column(name: $0, kind: $1.rawValue) },
                    bytes: sizes?[table.name]))
            }
            return SQLiteStoreInfo(
                path: path, fileSize: MigrationFile.size(of: path), format: SQLiteFormatV1.formatName,
                formatVersion: contents.metadata.formatVersion, modelVersion: contents.metadata.modelVersion,
                storeVersion: contents.metadata.storeVersion, pageSize: try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0,
                isWriteAheadLog: isWriteAheadLog(path), entities: entities)
        }
    }

    /// The bytes of each table's pages and its indexes' pages, or `nil` without `dbstat`.
    private static func tableSizes(_ db: Database) -> [String: Int]? {
        let sql = """
            SELECT m.tbl_name, SUM(s.pgsize) FROM dbstat AS s JOIN sqlite_master AS m ON s.name = m.name GROUP BY m.tbl_name
            """
        guard let rows = try? Row.fetchAll(db, sql: sql) else { return nil }
        return Dictionary(rows.map { ($0[0] as String, $0[1] as Int) }, uniquingKeysWith: +)
    }

    /// Whether the header's read and write versions (bytes 18 and 19) say write-ahead log.
    private static func isWriteAheadLog(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 20)) ?? Data()
        return header.count == 20 && (header[header.startIndex + 18] == 2 || header[header.startIndex + 19] == 2)
    }
}
