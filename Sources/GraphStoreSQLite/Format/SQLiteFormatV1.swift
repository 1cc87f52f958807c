import Foundation
import GRDB
import GraphStore

/// The layout of a GraphStore SQLite file, format version 1.
///
/// - `graphstore_metadata(key TEXT PRIMARY KEY, value)`: `format` ("GraphStore SQLite"),
///   `formatVersion` (1), `modelVersion`, `storeVersion` (the commit the file holds),
///   `dateEncoding` ("secondsSince2001") and `lineage` (a UUID naming the store, which the
///   journal beside the file must carry to be replayed; absent in files written before
///   journals), `fieldTypes` and `fieldTypesVersion` (absent in files written before they
///   were recorded): what a snapshot header's ``GraphStore/SnapshotHeaderV1/fieldTypes`` and
///   ``GraphStore/SnapshotHeaderV1/fieldTypesVersion`` say, as JSON text (entity name → path →
///   type, keys sorted) and an integer. They tell a tool without the app's types where the
///   values in `json` columns hold URLs, decimals, dates and data, which a property list
///   holds in other shapes than JSON. The typed store records what it finds on a sample of
///   its objects at open and in each write's changed objects; a migration, its source's.
/// - `graphstore_columns(entity, column, kind)`: the ``ColumnKind`` of every column of every
///   entity table.
/// - A table per entity, named by its `entityName`, with a column per top-level Codable key and
///   `id` as the primary key. A table is created when the first object of its entity is
///   written; a column when the first non-nil value of its key is.
enum SQLiteFormatV1 {
    static let formatName = "GraphStore SQLite"
    /// The newest layout this version of GraphStore reads, and the one it writes.
    static let formatVersion = 1
    static let metadataTable = "graphstore_metadata"
    static let columnsTable = "graphstore_columns"
    static let idColumn = "id"
    static let dateEncoding = "secondsSince2001"

    /// The keys of `graphstore_metadata`.
    enum MetadataKey: String {
        case format, formatVersion, modelVersion, storeVersion, dateEncoding, lineage, fieldTypes, fieldTypesVersion
    }

    /// The metadata a store opens with.
    struct Metadata {
        var modelVersion: String
        var storeVersion: UInt64
        /// The file's layout version (at most ``formatVersion``).
        var formatVersion: Int = SQLiteFormatV1.formatVersion
        /// The store's lineage, which its journal carries; `nil` in a file written before
        /// journals.
        var lineage: UUID?
        /// The field types the file records (entity name → path → type); `nil` in a file
        /// written before they were recorded.
        var fieldTypes: [String: [String: String]]?
        /// Which field types the writer named (see ``GraphStore/SnapshotHeaderV1/fieldTypesVersion``).
        var fieldTypesVersion: Int?
    }

    /// Whether `name` is a table name SQLite or this format keeps for itself.
    static func isReserved(_ name: String) -> Bool {
        let lowercased = name.lowercased()
        return lowercased.hasPrefix("sqlite_") || lowercased.hasPrefix("graphstore_")
    }

    // MARK: - Creating

    /// Creates the metadata and column-kind tables of a new, empty store.
    static func create(in db: Database, modelVersion: String) throws {
        try db.execute(sql: "CREATE TABLE \(metadataTable) (key TEXT PRIMARY KEY NOT NULL, value)")
        try db.execute(sql: """
            CREATE TABLE \(columnsTable) (entity TEXT NOT NULL, "column" TEXT NOT NULL, kind TEXT NOT NULL, \
            PRIMARY KEY (entity, "column"))
            """)
        try setMetadata(.format, to: formatName, in: db)
        try setMetadata(.formatVersion, to: Int64(formatVersion), in: db)
        try setMetadata(.modelVersion, to: modelVersion, in: db)
        try setMetadata(.storeVersion, to: Int64(0), in: db)
        try setMetadata(.dateEncoding, to: dateEncoding, in: db)
        try setMetadata(.lineage, to: UUID().uuidString, in: db)
    }

    /// Sets one metadata value.
    static func setMetadata(_ key: MetadataKey, to value: some DatabaseValueConvertible, in db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO \(metadataTable) (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
            .execute(arguments: [key.rawValue, value])
    }

    /// Records the field types of the store's objects (see the type's description), replacing
    /// any recorded before.
    static func setFieldTypes(_ types: [String: [String: String]], version: Int?, in db: Database) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try setMetadata(.fieldTypes, to: String(decoding: try encoder.encode(types), as: UTF8.self), in: db)
        if let version {
            try setMetadata(.fieldTypesVersion, to: Int64(version), in: db)
        } else {
            try db.execute(sql: "DELETE FROM \(metadataTable) WHERE key = ?", arguments: [MetadataKey.fieldTypesVersion.rawValue])
        }
    }

    /// Records the kind of a new column.
    static func recordColumn(_ column: String, kind: ColumnKind, entity: String, in db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO \(columnsTable) (entity, \"column\", kind) VALUES (?, ?, ?)")
            .execute(arguments: [entity, column, kind.rawValue])
    }

    /// Forgets the recorded columns of `entity`'s table, which is being created again.
    static func forgetColumns(of entity: String, in db: Database) throws {
        try db.execute(sql: "DELETE FROM \(columnsTable) WHERE entity = ?", arguments: [entity])
    }

    // MARK: - Reading

    /// The names of the tables in `db`.
    static func tableNames(in db: Database) throws -> Set<String> {
        Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
    }

    /// The metadata of the store in `db`, whose tables are `tables`, checked. The one test of
    /// whether a SQLite database is a GraphStore store, for the store and the tools alike.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` for a database without
    ///   `graphstore_metadata` (naming its tables) and for a missing or wrong value,
    ///   ``GraphStoreError/unsupportedFormatVersion(path:found:supported:)`` for a newer format.
    static func readMetadata(in db: Database, tables: Set<String>, path: String) throws -> Metadata {
        guard tables.contains(metadataTable) else {
            let names = tables.sorted().prefix(10).joined(separator: ", ")
            throw GraphStoreError.damagedFile(
                path: path, offset: nil,
                reason: "it is a SQLite database but not a GraphStore store: it has no \(metadataTable) table"
                    + (names.isEmpty ? " (it has no tables)" : " (its tables: \(names))"))
        }
        var values: [String: DatabaseValue] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT key, value FROM \(metadataTable)") {
            if let key = row.text(at: 0) { values[key] = row[1] as DatabaseValue }
        }
        func damaged(_ reason: String) -> GraphStoreError {
            .damagedFile(path: path, offset: nil, reason: "\(metadataTable) \(reason)")
        }
        guard let format = values[MetadataKey.format.rawValue] else { throw damaged("has no \"format\"") }
        guard String.fromDatabaseValue(format) == formatName else {
            throw damaged("names format \(ColumnDecoding.describe(format)), not \"\(formatName)\"")
        }
        guard let versionValue = values[MetadataKey.formatVersion.rawValue], case .int64(let version) = versionValue.storage else {
            throw damaged("has no integer \"formatVersion\"")
        }
        guard version <= formatVersion else {
            throw GraphStoreError.unsupportedFormatVersion(path: path, found: Int(clamping: version), supported: formatVersion)
        }
        guard version >= 1 else { throw damaged("has format version \(version)") }
        guard let storeValue = values[MetadataKey.storeVersion.rawValue], case .int64(let store) = storeValue.storage, let storeVersion = UInt64(exactly: store) else {
            throw damaged("has no valid \"storeVersion\"")
        }
        let modelVersion = values[MetadataKey.modelVersion.rawValue].flatMap { String.fromDatabaseValue($0) } ?? ""
        var lineage: UUID?
        if let value = values[MetadataKey.lineage.rawValue], !value.isNull {
            guard let text = String.fromDatabaseValue(value), let uuid = UUID(uuidString: text) else {
                throw damaged("has the lineage \(ColumnDecoding.describe(value)), which is not a UUID")
            }
            lineage = uuid
        }
        var metadata = Metadata(modelVersion: modelVersion, storeVersion: storeVersion, formatVersion: Int(version), lineage: lineage)
        if let value = values[MetadataKey.fieldTypes.rawValue], !value.isNull {
            guard let text = String.fromDatabaseValue(value),
                  let types = try? JSONDecoder().decode([String: [String: String]].self, from: Data(text.utf8))
            else {
                throw damaged("has the field types \(ColumnDecoding.describe(value)), which are not a JSON object of entity names to objects of paths and types")
            }
            metadata.fieldTypes = types
        }
        if let value = values[MetadataKey.fieldTypesVersion.rawValue], !value.isNull {
            guard case .int64(let number) = value.storage, let fieldTypesVersion = Int(exactly: number) else {
                throw damaged("has the field types version \(ColumnDecoding.describe(value)), which is not an integer")
            }
            metadata.fieldTypesVersion = fieldTypesVersion
        }
        return metadata
    }

    /// Column name → kind, per entity name, from `graphstore_columns` (`tables` are the
    /// database's tables).
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` for a missing table or
    ///   an unknown kind.
    static func readColumnKinds(in db: Database, tables: Set<String>, path: String) throws -> [String: [String: ColumnKind]] {
        guard tables.contains(columnsTable) else {
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "it has no \(columnsTable) table")
        }
        var kinds: [String: [String: ColumnKind]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT entity, \"column\", kind FROM \(columnsTable)") {
            // A damaged file may hold NULL or another type here.
            guard let entity = row.text(at: 0), let column = row.text(at: 1), let name = row.text(at: 2) else {
                let values = (0..<3).map { ColumnDecoding.describe(row[$0] as DatabaseValue) }.joined(separator: ", ")
                throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "\(columnsTable) has a row that is not three texts (\(values))")
            }
            guard let kind = ColumnKind(rawValue: name) else {
                throw GraphStoreError.damagedFile(
                    path: path, offset: nil, reason: "\(columnsTable) gives column \(entity).\(column) the unknown kind \"\(name)\"")
            }
            kinds[entity, default: [:]][column] = kind
        }
        return kinds
    }
}
