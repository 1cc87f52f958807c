import CGraphStoreSQLite
import Foundation
import GRDB
import GraphStore
import Logging

/// The SQLite store: opens and locks the database, loads the graph, and hands every commit to
/// the ``SQLiteWriter``.
///
/// Locking is SQLite's own: the connection runs in `locking_mode = EXCLUSIVE` and takes an
/// exclusive lock on the database file before it reads anything, holding it until ``close()``.
/// SQLite tracks these POSIX locks per connection, so a second container in this process, or
/// any other process (including the `sqlite3` shell), gets ``GraphStoreError/storeLocked(path:)``
/// ("database is locked") until the store closes. No lock file is created. Because the kernel
/// drops a process's POSIX locks on a file when the process closes any descriptor of it, nothing
/// else in this process opens the file while the store is open: a second container is refused
/// before it reads the header, and a migration's copy of the old file is read through
/// descriptors kept open until the store closes (``OpenSQLiteStores``).
final class SQLiteBackend: StoreBackend {
    private let writer: SQLiteWriter
    private let path: String
    /// This container's claim on the path (``OpenSQLiteStores``).
    private let claim: UInt64
    private let durability: Durability
    /// The journal of this run (`nil` under ``Durability/coalesced``).
    private let runJournal: StoreJournal?
    /// The graph read at open, handed out once by ``load(schema:)``.
    private let opened: Guarded<GraphVersion?>
    private let isClosed = Guarded(false)

    /// Opens (creating if needed) and locks the database at `url`, loads its graph and replays
    /// the journal beside it.
    ///
    /// In one exclusive transaction: read the store, replay the journal records newer than it,
    /// check that the app's types still encode the kinds its columns record, write the
    /// replayed rows, and record the store's lineage and the field types its objects hold
    /// (see ``SQLiteFieldTypes``). A store of an older model version is
    /// migrated instead, in the same transaction (see ``SQLiteStoreMigration``). Anything
    /// failing rolls it all back (and removes the copies of the old files a migration kept),
    /// so a store that does not open is left as it was.
    ///
    /// - Throws: as ``StoreConfiguration/sqlite(_:options:)`` documents.
    /// - Complexity: O(rows + journal size).
    init(url: URL, options: SQLiteStoreOptions, schema: Schema) throws {
        // Through a symbolic link, the file it points to: the journal beside it is the file's.
        let path = try StorePath.resolve(url).path
        // A container on this file that was released without `close()` may still be closing.
        StoreClosings.waitUntilClosed(path)
        self.path = path
        durability = options.durability
        Self.checkNames(schema)
        // Before anything reads the file: reading it while a container of this process has it
        // open would drop that container's lock (see ``OpenSQLiteStores``).
        let claim = try OpenSQLiteStores.claim(path)
        self.claim = claim
        var isOpen = false
        defer { if !isOpen { OpenSQLiteStores.release(path, token: claim) } }
        try SQLiteFileHeader.check(path: path)
        let hadLog = FileManager.default.fileExists(atPath: path + "-wal")
        let database: DatabaseQueue
        do {
            database = try DatabaseQueue(path: path, configuration: Self.configuration(options))
        } catch {
            throw GraphStoreError.sqlite(error, path: path, operation: "open the database")
        }
        let journalPath = JournalReplay.path(forStoreAt: path)
        let loaded: Loaded
        var keptCopies: [URL] = []
        var isCommitted = false
        do {
            loaded = try database.writeWithoutTransaction { db in
                var result: Loaded?
                // Pages the opening transaction changes stay in memory until it commits: SQLite
                // otherwise writes the overflow of its page cache to the log before the commit,
                // and a migration or replay that then fails would leave the log of a crashed
                // store larger than it was (the rollback leaves appended frames behind).
                try db.execute(sql: "PRAGMA cache_spill = OFF")
                try db.inTransaction(.exclusive) {
                    // Before the opening transaction writes anything (replayed rows, a
                    // migration): damage is reported with the file as it was.
                    if options.checksIntegrityOnOpen { try Self.checkIntegrity(db, path: path) }
                    result = try Self.load(db, schema: schema, path: path, journalPath: journalPath, options: options, keptCopies: &keptCopies)
                    return .commit
                }
                isCommitted = true
                try db.execute(sql: "PRAGMA cache_spill = ON")
                // What a process killed while creating or rotating the journal, or while
                // keeping a copy of the store an open migrated, left; the database's exclusive
                // lock says no other process is at work.
                let storeName = URL(fileURLWithPath: path).lastPathComponent
                StoreJournal.removeLeftovers(beside: journalPath) { OlderStoreMigration.isCopyTemporary($0, ofStoreNamed: storeName) }
                // Only a file found to be a GraphStore store is changed: to write-ahead logging,
                // with a sync at every commit so a finished write is durable.
                _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try options.didOpen?(db)
                guard let result else { preconditionFailure("GraphStoreSQLite: the opening transaction did not run") }
                return result
            }
        } catch {
            if isCommitted {
                // The opening transaction is in the database: checkpointed at close as usual.
                try? database.close()
            } else {
                Self.closeUnchanged(database, path: path, removingLog: !hadLog)
                SQLiteStoreMigration.removeCopies(keptCopies)
            }
            throw GraphStoreError.sqlite(error, path: path, operation: "open the store")
        }
        // The database now holds every replayed record (committed with synchronous = FULL).
        var journal: StoreJournal?
        do {
            if options.durability != .coalesced {
                let started = try StoreJournal.start(
                    path: journalPath, durability: options.durability, interval: options.journalSyncInterval, clock: options.clock,
                    lineage: loaded.lineage, openedAt: loaded.version.number, existing: loaded.journal,
                    fileSystem: options.journalFileSystem)
                journal = started
                // The database holds these records now (committed with synchronous = FULL), so
                // dropping them is tidying: it needs room for the journal's rotation, and a
                // journal that keeps them stays correct (a replay skips what the database holds),
                // as after a write. The open does not fail for it.
                do {
                    try started.dropRecords(through: loaded.version.number)
                } catch {
                    Logger(label: "GraphStoreSQLite.SQLiteBackend").warning(
                        "Could not drop the journal records the database holds; the journal keeps them and stays correct",
                        metadata: ["path": "\(journalPath)", "error": "\(error)"])
                }
            } else if loaded.journal != nil || loaded.replacesJournal {
                try Self.removeJournal(at: journalPath)
            }
        } catch {
            try? journal?.detach()
            try? database.close()
            throw error
        }
        runJournal = journal
        opened = Guarded(loaded.version)
        writer = SQLiteWriter(
            database: database, path: path, schema: schema, opened: loaded.version, layout: loaded.layout, options: options, journal: journal)
        isOpen = true
    }

    deinit {
        // A backend released without `close()` (its container failed to open): the claim goes
        // with it. After `close()` this does nothing.
        OpenSQLiteStores.release(path, token: claim)
    }

    // MARK: - StoreBackend

    func load(schema: Schema) throws -> GraphVersion? {
        opened.withLock { opened in
            defer { opened = nil }
            return opened
        }
    }

    var storePath: String? { path }

    var journal: StoreJournal? { runJournal }

    func didCommit(_ version: GraphVersion, change: GraphChange) {
        writer.didCommit(version, change: change)
    }

    /// With a journal: returns once the journal is fsynced (the rows follow in the background),
    /// or, after an fsync of the journal failed, once a transaction holds every earlier commit.
    /// Without: once a transaction holds every earlier commit.
    func flush() async throws {
        guard let runJournal else {
            try await writer.flush()
            return
        }
        guard !isClosed.withLock({ $0 }) else { throw GraphStoreError.containerClosed }
        try await runJournal.flush(orWritingTheStore: writer.flush)
        // A write that cannot succeed (a value that no longer fits its column) is an error of
        // the store even though the journal keeps the commits.
        if let error = writer.permanentError { throw error }
    }

    /// Writes the remaining rows, then removes the journal (which they cover) before the
    /// database's lock is released. When the last write fails, the journal stays for the next
    /// open to replay, and the error is thrown.
    func close() async throws {
        isClosed.withLock { $0 = true }
        // Once the writer closed the connection, and whatever the closing threw.
        defer { OpenSQLiteStores.release(path, token: claim) }
        let journal = runJournal
        try await writer.close { flushed in
            guard let journal else { return }
            switch flushed {
            case .success: try journal.remove()
            case .failure: try journal.detach()
            }
        }
    }

    var status: StoreStatus {
        var status = writer.status
        if let runJournal { status.durableVersion = max(status.durableVersion, runJournal.durableVersion) }
        return status
    }

    func events() -> AsyncStream<StoreEvent> {
        writer.events()
    }

    // MARK: - Opening

    /// What the opening transaction found and wrote.
    private struct Loaded: Sendable {
        var version: GraphVersion
        var layout: StoreLayout
        var lineage: UUID
        /// The journal to continue (`nil`: none, or one a migration replaced).
        var journal: JournalContents?
        /// A migration replayed the journal beside the store, in the old model: a new one
        /// replaces it.
        var replacesJournal = false
    }

    /// Reads the store, replays the journal onto it and writes the replayed rows, or migrates
    /// it; inside the opening transaction, which any error rolls back. `keptCopies` gets the
    /// copies of the old files a migration kept, to be removed if the transaction does not
    /// commit.
    private static func load(
        _ db: Database, schema: Schema, path: String, journalPath: String, options: SQLiteStoreOptions, keptCopies: inout [URL]
    ) throws -> Loaded {
        let stored = try SQLiteStoreReader.open(db, schema: schema, path: path, modelVersion: options.modelVersion)
        if let migration = stored.migration, let lineage = stored.lineage {
            keptCopies = migration.keptCopies
            try options.beforeMigrationCommit?(db)
            // The journal was replayed onto the old rows before they were migrated.
            return Loaded(
                version: stored.version, layout: stored.layout, lineage: lineage, journal: nil, replacesJournal: migration.replacesJournal)
        }
        let replay = try JournalReplay.open(
            journalAt: journalPath, stored: stored.isNew ? nil : stored.version, storedLineage: stored.lineage, storePath: path,
            schema: schema, recover: false)
        let version = replay.version ?? stored.version
        var layout = stored.layout
        // Before anything is written: every column must still take what the types encode.
        let notEncoded = try SQLiteColumnKindCheck.check(version, schema: schema, layout: layout, path: path, db: db)
        // …and no column may hold values the types neither read nor write.
        try SQLiteUnkeptColumnCheck.check(notEncoded, schema: schema, layout: layout, db: db, path: path)
        // Rows whose ids the writes would not find by their bytes (a lowercase UUID) get them as
        // the writes spell them, before the replay writes any.
        try SQLiteStoreReader.respell(stored.respellings, in: db)
        if !replay.replayed.isEmpty {
            let (plan, next) = try SQLiteWritePlan.make(
                version: version, changes: replay.replayed, written: stored.version, schema: schema, layout: layout,
                modelVersion: schema.model.label(option: options.modelVersion), path: path)
            try plan.execute(in: db)
            layout = next
        }
        // Where the objects hold URLs, decimals, dates and data, for tools without the types.
        try SQLiteFieldTypes.recordAtOpen(version, schema: schema, layout: &layout, in: db)
        if stored.lineage != replay.lineage {
            try SQLiteFormatV1.setMetadata(.lineage, to: replay.lineage.uuidString, in: db)
        }
        return Loaded(version: version, layout: layout, lineage: replay.lineage, journal: replay.journal)
    }

    private static func removeJournal(at path: String) throws {
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw GraphStoreError.fileOperationFailed(path: path, operation: "remove the journal the database now covers", reason: "\(error)")
        }
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
            // Every commit, the opening one included, is on the device when it returns.
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "BEGIN EXCLUSIVE")
            try db.execute(sql: "ROLLBACK")
        }
        return configuration
    }

    /// Closes the connection of a store that failed to open without checkpointing its
    /// write-ahead log, which SQLite otherwise does when the last connection closes: a log a
    /// crash left stays beside the database, and both files stay byte for byte as they were.
    /// With `removingLog`, the log (which this connection created, and which holds nothing but
    /// what the failed opening transaction did not commit) is removed.
    private static func closeUnchanged(_ database: DatabaseQueue, path: String, removingLog: Bool) {
        database.inDatabase { db in
            if let connection = db.sqliteConnection {
                _ = graphstore_sqlite_skip_checkpoint_on_close(UnsafeMutableRawPointer(connection))
            }
        }
        try? database.close()
        if removingLog {
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
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
