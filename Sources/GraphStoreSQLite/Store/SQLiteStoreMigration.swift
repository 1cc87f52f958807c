import Foundation
import GRDB
import GraphStore
import Logging

/// Opening a SQLite store written by an older model version: its rows are read as generic
/// values, the journal a crash left beside it is replayed onto them, the migrations run, and
/// the result is decoded with the app's types and checked as a graph, exactly as a snapshot
/// store's are (the shared code is GraphStore's); only then is anything written.
///
/// The write happens inside the opening transaction (exclusive, `synchronous = FULL`):
/// 1. the old database is copied to `<file>.v<old version>` (with its `-wal`, if it has one,
///    as `<file>.v<old version>-wal`, and its journal as `<file>.v<old version>.journal`),
///    each durably (temporary file, fsync, rename, fsync of the directory), under a name no
///    earlier migration took;
/// 2. every entity table is dropped and written again in the new model's layout, and the
///    metadata records the new model version and the store version the journal reached;
///    indexes and triggers other programs made on the tables are made again after the rows,
///    each that still fits (a renamed or removed table or column leaves one out, with a
///    warning in the log naming it; the kept copy has it);
/// 3. the transaction commits. Should anything fail before that, it rolls back and the copies
///    are removed: the store is left as it was.
///
/// After the commit the store replaces its journal: the old one is in the old model, and its
/// records are in the migrated rows.
enum SQLiteStoreMigration {
    /// What a migration at open did.
    struct Outcome: Sendable {
        /// The model version the file had.
        var from: Int
        /// The copies of the old files, removed again if the transaction does not commit.
        var keptCopies: [URL]
        /// Whether a journal beside the store was replayed: it must be replaced once the
        /// transaction commits.
        var replacesJournal: Bool
    }

    /// Migrates the store in `db` (inside the caller's transaction), whose metadata says model
    /// version `stored`, to the app's version, and returns it as the database now holds it.
    ///
    /// - Throws: ``GraphStoreError/migrationFailed(path:fromVersion:toVersion:entity:field:id:reason:)``
    ///   for a missing link in the chain, a step that throws or is refused, a result that does
    ///   not decode with the app's types or cannot be stored, a relationship or unique
    ///   constraint the result breaks, or a field the app's types would drop;
    ///   ``GraphStoreError/codingFailed(path:entity:id:reason:)`` for a row that does not fit
    ///   its column; ``GraphStoreError/damagedFile(path:offset:reason:)`` for a damaged
    ///   journal, one of another store, or tables that disagree with `graphstore_columns`;
    ///   ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` when the old files
    ///   cannot be copied; SQLite's errors. Nothing is then left written.
    /// - Complexity: O(rows + journal size) generic and typed work, one durable copy of the
    ///   file, and O(rows) rows written.
    static func migrate(
        _ db: Database, from stored: Int, metadata: SQLiteFormatV1.Metadata, schema: Schema, path: String, modelVersion label: String
    ) throws -> SQLiteStoreReader.Stored {
        // The version the comparison found older than: the option's number, for a container
        // that declares none.
        let target = schema.model.appVersion(option: label) ?? schema.model.version
        let contents = try SQLiteStoreContents.read(db, path: path)
        var entities: [(name: String, objects: [SnapshotValue])] = []
        var numbers = ExactNumbers()
        for table in contents.tables {
            entities.append((table.name, try SQLiteStoreContents.objects(of: table, in: db, path: path, progress: nil, numbers: &numbers)))
        }
        let migrated = try OlderStoreMigration.migrate(
            MigratingStore(conventional: entities), from: stored, to: target, storeVersion: metadata.storeVersion, lineage: metadata.lineage, schema: schema, path: path,
            // The column kinds as hints: a text column's "NaN" in a journal record is a string.
            numbers: numbers, fieldTypes: contents.fieldTypes)
        let plan: SQLiteWritePlan
        let layout: StoreLayout
        do {
            (plan, layout) = try SQLiteWritePlan.everything(
                in: migrated.version, schema: schema, previousModelVersion: metadata.modelVersion, modelVersion: label, path: path)
        } catch GraphStoreError.codingFailed(_, let entity, let id, let reason) {
            throw GraphStoreError.migrationFailed(
                path: path, fromVersion: stored, toVersion: target, entity: entity, field: nil, id: id,
                reason: "the migrated object cannot be stored in its table: \(reason)")
        }

        // Everything is checked: keep the old files, then rewrite the tables.
        let copies = try keepOldFiles(path: path, version: stored, journal: migrated.journal)
        var notMadeAgain: [(item: TableCompanions.Item, reason: String)] = []
        do {
            // Other programs' indexes and triggers go with the tables: made again after the
            // rows, those that still fit the new tables.
            let companions = try contents.tables.map { try TableCompanions.read(of: $0.name, in: db) }
            for table in contents.tables {
                try db.execute(sql: "DROP TABLE \(table.name.quotedDatabaseIdentifier)")
            }
            try db.execute(sql: "DELETE FROM \(SQLiteFormatV1.columnsTable)")
            try plan.execute(in: db)
            for table in companions {
                notMadeAgain += try table.makeAgainWhatFits(in: db)
            }
            if migrated.lineage != metadata.lineage {
                try SQLiteFormatV1.setMetadata(.lineage, to: migrated.lineage.uuidString, in: db)
            }
        } catch {
            removeCopies(copies)
            throw error
        }
        Logger(label: "GraphStoreSQLite.SQLiteStoreMigration").notice("Migrating the store to the app's model version", metadata: [
            "path": "\(path)", "from": "\(stored)", "to": "\(target)", "keptAs": "\(copies.first?.path ?? "")",
        ])
        for (item, reason) in notMadeAgain {
            Logger(label: "GraphStoreSQLite.SQLiteStoreMigration").warning("An index or trigger of another program does not fit the migrated tables", metadata: [
                "path": "\(path)", "type": "\(item.type)", "name": "\(item.name)", "reason": "\(reason)", "keptIn": "\(copies.first?.path ?? "")",
            ])
        }
        let outcome = Outcome(from: stored, keptCopies: copies, replacesJournal: migrated.journal != nil)
        return SQLiteStoreReader.Stored(version: migrated.version, layout: layout, lineage: migrated.lineage, isNew: false, migration: outcome)
    }

    /// Removes the copies a migration kept, when its transaction did not commit.
    static func removeCopies(_ copies: [URL]) {
        for url in copies { try? FileManager.default.removeItem(at: url) }
    }

    // MARK: - Private

    /// Copies the database file, its write-ahead log (when it holds anything) and the journal
    /// beside it, durably, under `<file>.v<version>`. Nothing has been written to the database
    /// in this transaction yet, so the file and its log on disk are the old store as read.
    private static func keepOldFiles(path: String, version: Int, journal: JournalContents?) throws -> [URL] {
        // Through descriptors kept open until the store closes: closing one would drop the
        // lock this connection holds on the file (see ``OpenSQLiteStores``).
        var kept: [(suffix: String, data: Data)] = [("", try OpenSQLiteStores.read(path, of: path))]
        if FileManager.default.fileExists(atPath: path + "-wal") {
            let log = try OpenSQLiteStores.read(path + "-wal", of: path)
            if !log.isEmpty { kept.append(("-wal", log)) }
        }
        if let journal { kept.append((JournalReplay.path(forStoreAt: ""), journal.bytes)) }
        return try OlderStoreMigration.keepCopies(kept, of: URL(fileURLWithPath: path), version: version, companions: [".journal", "-wal", "-shm"])
    }
}
