import Foundation
import GRDB
import GraphStore

/// The SQLite store: opens and locks the database, loads the graph, and hands every commit to
/// the ``SQLiteWriter``.
///
/// Locking is SQLite's own: the connection runs in `locking_mode = EXCLUSIVE` and takes an
/// exclusive lock on the database file before it reads anything, holding it until ``close()``.
/// SQLite tracks these POSIX locks per connection, so a second container in this process, or
/// any other process (including the `sqlite3` shell), gets ``GraphStoreError/storeLocked(path:)``
/// ("database is locked") until the store closes. No lock file is created.
final class SQLiteBackend: StoreBackend {
    private let writer: SQLiteWriter
    /// The graph read at open, handed out once by ``load(schema:)``.
    private let opened: Guarded<GraphVersion?>

    /// Opens (creating if needed) and locks the database at `url` and loads its graph.
    ///
    /// - Throws: as ``StoreConfiguration/sqlite(_:options:)`` documents.
    /// - Complexity: O(rows).
    init(url: URL, options: SQLiteStoreOptions, schema: Schema) throws {
        let path = url.standardizedFileURL.path
        Self.checkNames(schema)
        try SQLiteFileHeader.check(path: path)
        let database: DatabaseQueue
        do {
            database = try DatabaseQueue(path: path, configuration: Self.configuration(options))
        } catch {
            throw GraphStoreError.sqlite(error, path: path, operation: "open the database")
        }
        let version: GraphVersion
        let layout: StoreLayout
        do {
            (version, layout) = try database.writeWithoutTransaction { db in
                var result: (GraphVersion, StoreLayout)?
                try db.inTransaction(.exclusive) {
                    result = try SQLiteStoreReader.open(db, schema: schema, path: path, modelVersion: options.modelVersion)
                    return .commit
                }
                if options.checksIntegrityOnOpen { try Self.checkIntegrity(db, path: path) }
                // Only a file found to be a GraphStore store is changed: to write-ahead logging,
                // with a sync at every commit so a finished write is durable.
                _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try options.didOpen?(db)
                guard let result else { preconditionFailure("GraphStoreSQLite: the opening transaction did not run") }
                return result
            }
        } catch {
            try? database.close()
            throw GraphStoreError.sqlite(error, path: path, operation: "open the store")
        }
        opened = Guarded(version)
        writer = SQLiteWriter(database: database, path: path, schema: schema, opened: version, layout: layout, options: options)
    }

    // MARK: - StoreBackend

    func load(schema: Schema) throws -> GraphVersion? {
        opened.withLock { opened in
            defer { opened = nil }
            return opened
        }
    }

    func didCommit(_ version: GraphVersion, change: GraphChange) {
        writer.didCommit(version, change: change)
    }

    func flush() async throws {
        try await writer.flush()
    }

    func close() async throws {
        try await writer.close()
    }

    var status: StoreStatus {
        writer.status
    }

    func events() -> AsyncStream<StoreEvent> {
        writer.events()
    }

    // MARK: - Private

    private static func configuration(_ options: SQLiteStoreOptions) -> Configuration {
        var configuration = Configuration()
        configuration.label = "GraphStoreSQLite"
        configuration.foreignKeysEnabled = false
        configuration.busyMode = .immediateError
        configuration.prepareDatabase { db in
            // Before anything reads the file: keep every lock this connection takes, and take
            // the exclusive one now. Another holder makes this throw SQLITE_BUSY.
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            try db.execute(sql: "BEGIN EXCLUSIVE")
            try db.execute(sql: "ROLLBACK")
        }
        return configuration
    }

    private static func checkIntegrity(_ db: Database, path: String) throws {
        let problems = try String.fetchAll(db, sql: "PRAGMA quick_check(5)")
        guard problems == ["ok"] else {
            let lines = problems.flatMap { $0.split(separator: "\n") }.filter { !$0.hasPrefix("***") }
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "SQLite's quick_check reports: \(lines.joined(separator: "; "))")
        }
    }

    /// Entity names become table names: they must not collide with SQLite's or the format's
    /// tables, nor with each other in SQLite's case-insensitive names.
    private static func checkNames(_ schema: Schema) {
        var seen: [String: String] = [:]
        for entity in schema.entities {
            precondition(
                !SQLiteFormatV1.isReserved(entity.name),
                "GraphStoreSQLite: the entity name '\(entity.name)' is reserved for SQLite's or GraphStore's own tables; give the entity another entityName.")
            if let other = seen.updateValue(entity.name, forKey: entity.name.lowercased()) {
                preconditionFailure("GraphStoreSQLite: the entities '\(other)' and '\(entity.name)' differ only in case, and SQLite table names do not; rename one.")
            }
        }
    }
}
