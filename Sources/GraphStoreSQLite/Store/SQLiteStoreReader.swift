import Foundation
import GRDB
import GraphStore

/// Opens the store inside a SQLite database: initializes an empty database, or checks the
/// metadata and column kinds of an existing store and loads every entity table.
enum SQLiteStoreReader {
    /// What a store's database holds when it opens.
    struct Stored {
        /// The graph, at the store version the file records.
        var version: GraphVersion
        /// The tables and columns on disk.
        var layout: StoreLayout
        /// The lineage in `graphstore_metadata`, or `nil` for a file written before journals.
        var lineage: UUID?
        /// Whether the database was empty and has just been given the metadata tables.
        var isNew: Bool
        /// Set when the file was of an older model version and has just been migrated, in the
        /// caller's transaction.
        var migration: SQLiteStoreMigration.Outcome?
        /// Rows whose id the database spells otherwise than the store writes it (see
        /// ``respell(_:in:)``), per table.
        var respellings: [String: [Respelling]] = [:]
    }

    /// A row's id as the database holds it, and as the store writes the same id: a UUID in
    /// lowercase (from an import or another program) reads as the UUID the app knows, which the
    /// store writes in capitals.
    struct Respelling {
        var stored: DatabaseValue
        var written: DatabaseValue
    }

    /// The graph and table layout of the store in `db`. Run it inside a transaction: it only
    /// reads, except that a database with no tables at all gets the two metadata tables, and a
    /// store of an older model version is migrated (see ``SQLiteStoreMigration``): its tables
    /// are rewritten, which the transaction commits or rolls back.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` for a database that is
    ///   not a GraphStore store or whose tables disagree with `graphstore_columns`, duplicate ids
    ///   or dangling references; ``GraphStoreError/unsupportedFormatVersion(path:found:supported:)``;
    ///   ``GraphStoreError/codingFailed(path:entity:id:reason:)`` for a row that does not decode
    ///   as its entity; the errors of ``checkModelVersion(_:schema:path:option:)`` and
    ///   ``SQLiteStoreMigration/migrate(_:from:metadata:schema:path:modelVersion:)``; SQLite's
    ///   errors as thrown.
    /// - Complexity: O(rows in the entity tables); a migration also rewrites every row.
    static func open(_ db: Database, schema: Schema, path: String, modelVersion option: String) throws -> Stored {
        let modelVersion = schema.model.label(option: option)
        let tables = try SQLiteFormatV1.tableNames(in: db)
        if tables.isEmpty {
            try SQLiteFormatV1.create(in: db, modelVersion: modelVersion)
            let empty = try schema.loadedVersion(Array(repeating: [], count: schema.entities.count), number: 0, path: path)
            return Stored(version: empty, layout: StoreLayout(modelVersion: modelVersion), lineage: nil, isNew: true)
        }
        let metadata = try SQLiteFormatV1.readMetadata(in: db, tables: tables, path: path)
        if let older = try checkModelVersion(metadata.modelVersion, schema: schema, path: path, option: option) {
            return try SQLiteStoreMigration.migrate(db, from: older, metadata: metadata, schema: schema, path: path, modelVersion: modelVersion)
        }
        var kinds = try SQLiteFormatV1.readColumnKinds(in: db, tables: tables, path: path)
        var layout = StoreLayout(modelVersion: metadata.modelVersion, fieldTypes: metadata.fieldTypes ?? [:], fieldTypesVersion: metadata.fieldTypesVersion)
        var objects: [[any Entity]] = []
        var respellings: [String: [Respelling]] = [:]
        let json = SQLiteJSON.makeDecoder()
        let idEncoder = SQLiteJSON.makeEncoder()
        for entity in schema.entities {
            let recorded = kinds.removeValue(forKey: entity.name) ?? [:]
            guard tables.contains(entity.name) else {
                guard recorded.isEmpty else {
                    throw GraphStoreError.damagedFile(
                        path: path, offset: nil, reason: "\(SQLiteFormatV1.columnsTable) lists columns of \(entity.name), which has no table")
                }
                objects.append([])
                continue
            }
            let table = try tableLayout(entity.name, recorded: recorded, db: db, path: path)
            layout.tables[entity.name] = table
            let (read, respelled) = try readObjects(of: entity, table: table, db: db, path: path, json: json, idEncoder: idEncoder)
            objects.append(read)
            if !respelled.isEmpty { respellings[entity.name] = respelled }
        }
        // As a snapshot store: rows of an entity the app does not register would be left behind
        // by every delete rule and relationship check, and orphaned when the app registers it
        // again (a cascade that could not run leaves references to nothing).
        for name in kinds.keys.sorted() where tables.contains(name) {
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(name.quotedDatabaseIdentifier)") ?? 0
            if count > 0 {
                throw GraphStoreError.codingFailed(path: path, entity: name, id: nil, reason: UnregisteredEntity.reason(name: name, count: count))
            }
        }
        let version = try schema.loadedVersion(objects, number: metadata.storeVersion, path: path)
        return Stored(version: version, layout: layout, lineage: metadata.lineage, isNew: false, respellings: respellings)
    }

    /// Gives the rows of `respellings` their ids as the store writes them, so that later
    /// writes, which find a row by the id's bytes as they encode it, update and delete those
    /// rows instead of adding a second one (after which the store would not open: "the id
    /// appears twice"). Run it in the opening transaction, after the checks that read the file
    /// as it was.
    ///
    /// - Throws: SQLite's errors.
    /// - Complexity: O(respelled rows × log rows).
    static func respell(_ respellings: [String: [Respelling]], in db: Database) throws {
        for (name, rows) in respellings {
            let statement = try db.makeStatement(
                sql: "UPDATE \(name.quotedDatabaseIdentifier) SET \(SQLiteFormatV1.idColumn.quotedDatabaseIdentifier) = ? WHERE \(SQLiteFormatV1.idColumn.quotedDatabaseIdentifier) = ?")
            for row in rows { try statement.execute(arguments: [row.written, row.stored]) }
        }
    }

    /// The layout of an existing table: its columns in table order, each with the kind recorded
    /// in `graphstore_columns`. Also used by ``Migration`` and ``SQLiteStoreInfo``.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` when the table and
    ///   `graphstore_columns` disagree or the table has no `id` column.
    static func tableLayout(_ name: String, recorded: [String: ColumnKind], db: Database, path: String) throws -> TableLayout {
        var table = TableLayout(name: name)
        for column in try db.columns(in: name) {
            guard let kind = recorded[column.name] else {
                throw GraphStoreError.damagedFile(
                    path: path, offset: nil, reason: "column \(name).\(column.name) has no kind in \(SQLiteFormatV1.columnsTable)")
            }
            table.append(column.name, kind: kind)
        }
        if let missing = recorded.keys.sorted().first(where: { table.index(of: $0) == nil }) {
            throw GraphStoreError.damagedFile(
                path: path, offset: nil, reason: "\(SQLiteFormatV1.columnsTable) lists column \(name).\(missing), which the table does not have")
        }
        guard table.index(of: SQLiteFormatV1.idColumn) != nil else {
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "table \(name) has no \(SQLiteFormatV1.idColumn) column")
        }
        return table
    }

    // MARK: - Private

    /// The objects of `table`, and the rows whose id the database spells otherwise than the
    /// store writes it.
    private static func readObjects(
        of entity: EntityDescription, table: TableLayout, db: Database, path: String, json: SQLiteJSON.Reader, idEncoder: SQLiteJSON.Writer
    ) throws -> ([any Entity], [Respelling]) {
        var objects: [any Entity] = []
        var respellings: [Respelling] = []
        let idIndex = table.index(of: SQLiteFormatV1.idColumn)
        let rows = try Row.fetchCursor(db, sql: table.selectSQL)
        while let row = try rows.next() {
            let object = try decode(row, of: entity, table: table, json: json, path: path)
            objects.append(object)
            // Integers and strings read back as they are stored; other ids may not (a UUID in
            // lowercase).
            let id: Any = object.id
            guard let idIndex, !(id is any FixedWidthInteger), !(id is String) else { continue }
            let stored: DatabaseValue = row[idIndex]
            // A UUID's text without a lowercase letter is the one the store writes: the common
            // case, checked without encoding the id.
            if id is UUID, case .string(let text) = stored.storage, text.utf8.count == 36,
               !text.utf8.contains(where: { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }) {
                continue
            }
            do {
                let written = try SQLiteWritePlan.idValue(id, table: table, json: idEncoder)
                if !SQLiteWritePlan.sameKey(stored, written) { respellings.append(Respelling(stored: stored, written: written)) }
            } catch {
                throw GraphStoreError.sqliteCoding(error, path: path, entity: entity.name, id: ColumnDecoding.idText(stored))
            }
        }
        return (objects, respellings)
    }

    /// The object in `row`, a row of `table.selectSQL`, decoded with `entity`'s type.
    ///
    /// - Throws: ``GraphStore/GraphStoreError`` (`sqliteCoding`) naming the file, the entity and
    ///   the row's id.
    /// - Complexity: O(columns).
    static func decode(_ row: Row, of entity: EntityDescription, table: TableLayout, json: SQLiteJSON.Reader, path: String) throws -> any Entity {
        let values = (0..<table.columns.count).map { index -> DatabaseValue in row[index] }
        do {
            return try RowDecoder.decode(entity.type, table: table, values: values, json: json)
        } catch {
            throw GraphStoreError.sqliteCoding(error, path: path, entity: entity.name, id: id(of: row, table: table))
        }
    }

    /// The id `row` (a row of `table.selectSQL`) holds, as text for an error message.
    static func id(of row: Row, table: TableLayout) -> String? {
        table.index(of: SQLiteFormatV1.idColumn).map { ColumnDecoding.idText(row[$0]) }
    }
}

extension SQLiteStoreReader {
    /// Compares the store's model version with the app's: returns `nil` when they are the
    /// same, the store's version when it is older (the store is then migrated at open by the
    /// container's migrations, see ``SQLiteStoreMigration``), and refuses the rest, before
    /// anything is written.
    ///
    /// - Throws: ``GraphStoreError/newerModelVersion(path:found:supported:)`` for a store of a
    ///   newer model version, ``GraphStoreError/unknownModelVersion(path:found:expected:)`` for
    ///   a version that is not a number, for a container that declares its version.
    /// - Complexity: O(1).
    static func checkModelVersion(_ found: String, schema: Schema, path: String, option: String) throws -> Int? {
        switch schema.model.compare(found: found, option: option) {
        case .same:
            return nil
        case .newer(let stored, let app):
            throw GraphStoreError.newerModelVersion(path: path, found: stored, supported: app)
        case .unknown(let expected):
            throw GraphStoreError.unknownModelVersion(path: path, found: found, expected: expected)
        case .older(let stored, _):
            return stored
        }
    }
}
