import Foundation
import GRDB
import GraphStore

extension StoreConfiguration {
    /// A store kept in a SQLite database: a table per entity, a column per top-level property,
    /// and a save writes only the rows it changed.
    ///
    /// ```swift
    /// import GraphStore
    /// import GraphStoreSQLite
    ///
    /// let container = try GraphContainer(
    ///     for: [Post.self, Note.self, Tag.self],
    ///     store: .sqlite(url))
    /// container.mainContext.insert(Tag(name: "swift"))
    /// try container.mainContext.save()     // visible and journaled; its row follows in the background
    /// try await container.flush()          // durable, also against power loss
    /// ```
    ///
    /// Opening loads the whole graph into memory, as every GraphStore store does; fetches never
    /// touch the file. A missing file (or an empty SQLite database) becomes a new store.
    ///
    /// Each entity has a table named by its `entityName`, with `id` as the primary key and a
    /// column per top-level `Codable` key: integers as INTEGER, `Bool` as INTEGER 0/1, `Double`
    /// as REAL, `Date` as REAL seconds since 2001-01-01 (exactly `timeIntervalSinceReferenceDate`),
    /// `String` and `UUID` as TEXT, `Data` as BLOB, and nested values and arrays as JSON TEXT
    /// written like the snapshot file's JSON. A key seen for the first time (an optional that
    /// was always `nil`) adds its column. The tables `graphstore_metadata` (format, format
    /// version, model version, store version) and `graphstore_columns` (the kind of every
    /// column) make the file readable without the app's types.
    ///
    /// After a commit, a background writer upserts the inserted and updated objects and deletes
    /// the deleted ones, in commit order, in one transaction per write (write-ahead log,
    /// `synchronous = FULL`); commits made while a write runs are grouped into the next
    /// transaction. The saving thread never waits for SQLite. What survives depends on
    /// ``SQLiteStoreOptions/durability``:
    ///
    /// - ``Durability/journaled`` (default): `save()` appends the change set to
    ///   `<file>.journal` with one `write(2)` before it returns, so a save that returned survives
    ///   the process dying; the journal is fsynced in the background within a second and by
    ///   ``GraphContainer/flush()``, and a committed transaction drops the records it covers.
    /// - ``Durability/synchronous``: as `.journaled`, and the append is fsynced before `save()`
    ///   returns (concurrent saves share one fsync), so the save also survives power loss.
    /// - ``Durability/coalesced``: nothing reaches the disk until the writer's transaction
    ///   commits; `flush()` waits for that transaction.
    ///
    /// A failed append (disk full, read-only, I/O error) makes `save()` throw and commits
    /// nothing. Opening replays the journal's newer records and writes their rows in the
    /// opening transaction; ``GraphContainer/close()`` writes the rest and removes the journal.
    /// A failed write (disk full, I/O error) is reported through
    /// ``GraphContainer/storeStatus``, ``GraphContainer/storeEvents`` and the log, rolled back,
    /// and retried; the graph in memory and the journal are kept.
    ///
    /// While the container is open it holds an exclusive SQLite lock on the file: another
    /// container or process, including the `sqlite3` shell, cannot read or write it until
    /// ``GraphContainer/close()``.
    ///
    /// > Important: Visible after `save()`, durable after ``GraphContainer/flush()``; under
    /// > `.journaled` a save that returned also survives the process dying.
    ///
    /// Values SQLite would change are kept as BLOBs in their column: NaN and -0.0 (a REAL
    /// column turns them into NULL and 0), a `UInt64` above `Int64.max`, a string containing
    /// NUL. An `Int128` or `UInt128` is an integer within 64 bits and, beyond them, the JSON
    /// number with every digit (as a snapshot file writes it), so its column turns to JSON as
    /// below. Round trips are lossless: dates to the bit, `Data`, optionals, nested `Codable`,
    /// integer extremes, Unicode.
    ///
    /// Limits: an entity must encode its properties with `encode(_:forKey:)` in a keyed
    /// container, including a top-level `id` (synthesized `Codable` does). A column takes the
    /// kind of its first value; a field whose values encode as different kinds (an enum with an
    /// `Int` case and a `String` case) turns it into a JSON column, writing the entity's table
    /// again once (with the indexes and triggers other programs made on it). A field whose type changed kind (`Int` to `Double`) while its column holds
    /// values is refused when the store opens. An object that cannot be stored at all fails its
    /// write with ``GraphStoreError/codingFailed(path:entity:id:reason:)``, and later saves
    /// throw that error.
    ///
    /// - Parameters:
    ///   - url: The database file, such as `store.sqlite`. SQLite keeps `<file>-wal` beside it
    ///     while the store is open, and the store its journal, `<file>.journal`, with the
    ///     file's permissions. Through a symbolic link, the file the link points to (created
    ///     there when it does not exist yet).
    ///   - options: Model version, checks at open and durability.
    /// - Returns: A configuration for ``GraphContainer/init(for:store:)``, which throws:
    ///   ``GraphStoreError/damagedFile(path:offset:reason:)`` for a file that is not a SQLite
    ///   database, is truncated or malformed, is a SQLite database without GraphStore's
    ///   metadata, or holds duplicate ids or dangling references;
    ///   ``GraphStoreError/unsupportedFormatVersion(path:found:supported:)`` for a file of a newer
    ///   format; ``GraphStoreError/codingFailed(path:entity:id:reason:)`` for a row that does
    ///   not decode as its entity or a field whose Swift type no longer writes its column's
    ///   kind (naming the entity and field); ``GraphStoreError/damagedFile(path:offset:reason:)``
    ///   naming the journal for a damaged journal or one of another store;
    ///   ``GraphStoreError/newerModelVersion(path:found:supported:)`` for a store of a newer
    ///   model version than the container's, and
    ///   ``GraphStoreError/migrationFailed(path:fromVersion:toVersion:entity:field:id:reason:)``
    ///   when an older one cannot be migrated (see ``GraphContainer/init(for:store:version:migrations:)``:
    ///   an older store is migrated in the opening transaction, its old file kept as
    ///   `<file>.v<old version>`); ``GraphStoreError/storeLocked(path:)`` while another
    ///   container or process has the store open;
    ///   ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` when the file cannot
    ///   be opened (symbolic links that form a loop, say), or the journal cannot be created. A
    ///   file that fails to open is left unchanged.
    /// - Complexity: Opening is O(rows + journal size) (plus O(file size) with
    ///   ``SQLiteStoreOptions/checksIntegrityOnOpen``); a save appends O(changed objects) bytes;
    ///   a write is O(changed rows × log(rows)).
    public static func sqlite(_ url: URL, options: SQLiteStoreOptions = SQLiteStoreOptions()) -> StoreConfiguration {
        StoreConfiguration(description: url.path) { schema in
            try SQLiteBackend(url: url, options: options, schema: schema)
        }
    }
}

/// Choices for a SQLite store.
public struct SQLiteStoreOptions: Sendable {
    /// The application's model version, recorded in `graphstore_metadata` at the next write.
    public var modelVersion: String
    /// Runs SQLite's `PRAGMA quick_check` when the store opens, so damage anywhere in the file
    /// (not only in the rows read) is found before the first write. Costs a pass over the
    /// file. Off by default: the header, the metadata and every row are checked anyway.
    public var checksIntegrityOnOpen: Bool
    /// How much of a save reaches the disk before `save()` returns; ``Durability/journaled``
    /// by default. See ``StoreConfiguration/sqlite(_:options:)``.
    public var durability: Durability
    /// How long a ``Durability/journaled`` append may wait for its background fsync.
    package var journalSyncInterval: Duration
    /// The clock the writer schedules retries by; tests inject a manual one.
    package var clock: any WriterClock
    /// The seam of the journal's fsyncs; tests inject failures here.
    package var journalFileSystem: any FileSystem
    /// Runs inside every write transaction, before the rows are written; a test hook (it may
    /// throw to fail the write, or set `PRAGMA max_page_count` to make SQLite run out of room).
    package var beforeTransaction: (@Sendable (Database) throws -> Void)?
    /// Runs inside the opening transaction of a store that was just migrated to the app's
    /// model version, after its tables were rewritten and before the transaction commits; a
    /// test hook (it may throw to make the migration roll back).
    package var beforeMigrationCommit: (@Sendable (Database) throws -> Void)?
    /// Runs once on the writer's connection after the store opened; a test hook (for example
    /// to add a `TransactionObserver` that counts the rows SQLite changes).
    package var didOpen: (@Sendable (Database) throws -> Void)?

    /// Options with the given model version, checks and durability.
    public init(modelVersion: String = "1", checksIntegrityOnOpen: Bool = false, durability: Durability = .journaled) {
        self.modelVersion = modelVersion
        self.checksIntegrityOnOpen = checksIntegrityOnOpen
        self.durability = durability
        journalSyncInterval = .seconds(1)
        clock = SystemWriterClock()
        journalFileSystem = PosixFileSystem()
        beforeTransaction = nil
        beforeMigrationCommit = nil
        didOpen = nil
    }
}
