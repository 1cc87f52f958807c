import Foundation
import GRDB
import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A SQLite database that GraphStore did not write, opened read-only for an import.
///
/// Opening checks the file before SQLite sees it (missing, empty, not SQLite, truncated) and
/// reads the schema once, so a damaged file fails at open with an error naming it. The
/// connection is read-only (`SQLITE_OPEN_READONLY`): nothing an import does can change the
/// database.
///
/// A database in write-ahead-log mode whose `-wal` file is missing or empty (every commit is in
/// the database file) is opened `immutable`, so SQLite does not create the `-wal` and `-shm`
/// files a read-only reader otherwise leaves beside it. An immutable connection takes no lock,
/// so the database's locks are looked at first: one another process holds (a GraphStore
/// store's exclusive lock, while its app runs) is refused as SQLite would refuse it. One with
/// a non-empty `-wal` is read with it, and SQLite may then create or update its `-shm` index.
struct ForeignDatabase {
    let path: String
    private let queue: DatabaseQueue

    /// Opens the database at `url` read-only.
    ///
    /// - Throws: ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` for a missing
    ///   file, a directory or an unreadable file; ``GraphStoreError/damagedFile(path:offset:reason:)``
    ///   for an empty file, one that is not a SQLite database, a truncated or malformed one;
    ///   ``GraphStoreError/storeLocked(path:)`` while another connection holds it locked.
    /// - Complexity: reads the 100-byte header and the schema.
    static func open(_ url: URL) throws -> ForeignDatabase {
        // Through symbolic links, the file SQLite opens: its write-ahead log and rollback
        // journal are beside it, not beside a link, and must be seen before it is read as one
        // file alone.
        let path = StorePath.canonical(url).path
        // A store this process has open is locked, as for another process; reading its file
        // here would drop that lock (see ``OpenSQLiteStores``).
        if OpenSQLiteStores.isOpen(path) { throw GraphStoreError.storeLocked(path: path) }
        let header = try checkFile(path)
        try SQLiteFileHeader.check(path: path)
        do {
            if isWAL(header), !SQLiteFileHeader.hasContent(path + "-wal") {
                if SQLiteSharedLockRange.isWriteLockedElsewhere(path) { throw GraphStoreError.storeLocked(path: path) }
                do {
                    return ForeignDatabase(path: path, queue: try connect(immutableURI(path)))
                } catch let error as DatabaseError where error.resultCode == .SQLITE_CANTOPEN {
                    // A SQLite built without URI names takes the URI for a file name, which
                    // does not exist: open by path instead. Any other error is the file's.
                }
            }
            return ForeignDatabase(path: path, queue: try connect(path))
        } catch {
            throw GraphStoreError.sqlite(error, path: path, operation: "open the database")
        }
    }

    /// Runs `body` in one read transaction, so it sees a single state of the database.
    ///
    /// - Throws: what `body` throws; SQLite's errors as ``GraphStoreError`` (see
    ///   `GraphStoreError.sqlite(_:path:operation:)`).
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try queue.read(body)
        } catch {
            throw GraphStoreError.sqlite(error, path: path, operation: "read the database")
        }
    }

    /// Closes the connection.
    func close() {
        try? queue.close()
    }

    // MARK: - Schema

    /// A table of the database, as `sqlite_master` lists it.
    struct Table {
        let name: String
        let isVirtual: Bool
    }

    /// The tables (not views, not indexes), sorted by name.
    static func tables(in db: Database) throws -> [Table] {
        try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").map { row in
            let sql: String = row["sql"] ?? ""
            return Table(name: row["name"], isVirtual: sql.uppercased().hasPrefix("CREATE VIRTUAL TABLE"))
        }
    }

    /// Why each of SQLite's own, virtual and shadow tables is no entity; the other tables are
    /// not in the result.
    static func internalTables(_ tables: [Table], in db: Database) -> [String: SkippedTable.Reason] {
        var reasons: [String: SkippedTable.Reason] = [:]
        let virtual = tables.filter(\.isVirtual).map(\.name)
        // SQLite 3.37 and later says which tables are shadow tables; older ones are recognized
        // by the name, which SQLite's modules build as `<virtual table>_<suffix>`.
        let shadows = (try? Row.fetchAll(db, sql: "PRAGMA main.table_list")).map { rows in
            Set(rows.filter { ($0["type"] as String?) == "shadow" }.compactMap { $0["name"] as String? })
        }
        for table in tables {
            if table.name.lowercased().hasPrefix("sqlite_") {
                reasons[table.name] = .sqliteInternal
            } else if table.isVirtual {
                reasons[table.name] = .virtualTable
            } else if let owner = virtual.filter({ table.name.lowercased().hasPrefix($0.lowercased() + "_") }).max(by: { $0.count < $1.count }),
                shadows?.contains(table.name) ?? true {
                reasons[table.name] = .shadowTable(of: owner)
            }
        }
        return reasons
    }

    // MARK: - Private

    /// A read-only connection to `sqlitePath` (a path or a `file:` URI), with the schema read.
    private static func connect(_ sqlitePath: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "GraphStoreSQLite.Import"
        configuration.busyMode = .timeout(2)
        configuration.foreignKeysEnabled = false
        let queue = try DatabaseQueue(path: sqlitePath, configuration: configuration)
        do {
            // SQLite reads the file lazily: reading the schema now makes a file that is not a
            // database, or is damaged at its start, fail here.
            _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
        } catch {
            try? queue.close()
            throw error
        }
        return queue
    }

    /// Checks that `path` is a non-empty regular file and returns its first 100 bytes.
    private static func checkFile(_ path: String) throws -> Data {
        // Through a symbolic link: the file SQLite would open, not the link.
        let status = try FileStatus.found(atPath: path, operation: "open")
        if status.isDirectory {
            throw GraphStoreError.fileOperationFailed(path: path, operation: "open", reason: "it is a directory, not a SQLite database file")
        }
        if !status.isRegular {
            throw GraphStoreError.fileOperationFailed(path: path, operation: "open", reason: "it is not a regular file (a pipe, a device or a socket), not a SQLite database file")
        }
        guard status.size > 0 else {
            throw GraphStoreError.damagedFile(path: path, offset: 0, reason: "the file is empty, not a SQLite database")
        }
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            return try handle.read(upToCount: SQLiteFileHeader.size) ?? Data()
        } catch {
            throw GraphStoreError.fileOperationFailed(path: path, operation: "read the SQLite header", reason: "\(error)")
        }
    }

    /// Whether the header's read and write versions (bytes 18 and 19) say write-ahead log.
    private static func isWAL(_ header: Data) -> Bool {
        header.count >= 20 && (header[header.startIndex + 18] == 2 || header[header.startIndex + 19] == 2)
    }


    /// The URI that opens `path` read-only as an immutable file: no locks, no `-wal`, no `-shm`.
    private static func immutableURI(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let escaped = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
        return "file:\(escaped)?mode=ro&immutable=1"
    }
}

// MARK: - Values

extension Row {
    /// The value at `index` as SQLite stores it, with TEXT read whole from its bytes: GRDB's
    /// `DatabaseValue` reads text through `sqlite3_column_text`, which ends it at a NUL
    /// character and replaces bytes that are not UTF-8, so `"milk\0honey"` would arrive as
    /// `"milk"`.
    ///
    /// - Parameters: `path`, `entity`, `id`, `column` and `row` name the value in the error.
    /// - Throws: ``GraphStore/GraphStoreError/codingFailed(path:entity:id:reason:)`` for TEXT
    ///   whose bytes are not UTF-8, naming its first bytes.
    /// - Complexity: O(length of the value).
    func importedValue(atIndex index: Int, path: String, entity: String, id: String?, column: String, row: String) throws -> DatabaseValue {
        let value: DatabaseValue = self[index]
        guard case .string = value.storage else { return value }
        return try withUnsafeData(atIndex: index) { data -> DatabaseValue in
            let bytes = data ?? Data()
            guard let text = String(validating: bytes, as: UTF8.self) else {
                let prefix = bytes.prefix(16).map { String(format: "%02x", $0) }.joined(separator: " ")
                throw GraphStoreError.codingFailed(
                    path: path, entity: entity, id: id,
                    reason: "\(column) of \(row) holds text that is not UTF-8 (bytes \(prefix)); it was not imported as a wrong string. Convert the column to UTF-8 text (or to a BLOB) first")
            }
            return text.databaseValue
        }
    }
}

extension SnapshotValue {
    /// The value SQLite stores, by its storage class: INTEGER as ``integer(_:)``, REAL as
    /// ``double(_:)``, TEXT as ``string(_:)``, BLOB as ``data(_:)``; `nil` for NULL.
    init?(stored value: DatabaseValue) {
        switch value.storage {
        case .null: return nil
        case .int64(let number): self = .integer(number)
        case .double(let number): self = .double(number)
        case .string(let text): self = .string(text)
        case .blob(let data): self = .data(data)
        }
    }
}

extension DatabaseValue {
    /// The value as text for messages and joined keys: numbers in decimal, text as is, a BLOB
    /// in lowercase hex, NULL as `NULL`.
    var importText: String {
        switch storage {
        case .null: "NULL"
        case .int64(let number): String(number)
        case .double(let number): "\(number)"
        case .string(let text): text
        case .blob(let data): data.map { String(format: "%02x", $0) }.joined()
        }
    }
}
