import Foundation
import GRDB
import GraphStore

/// A GraphStore SQLite file read without the app's types: its metadata and, for every entity
/// table (a table with columns in `graphstore_columns`; others are not the store's and are
/// left out), the layout from `graphstore_columns`; and its rows as generic values.
///
/// Read inside one read transaction of a read-only connection (see ``ForeignDatabase``), so
/// the file is never changed.
struct SQLiteStoreContents {
    let metadata: SQLiteFormatV1.Metadata
    /// The entity tables, sorted by name.
    let tables: [TableLayout]

    /// The metadata and table layouts of the store in `db`, checked.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/damagedFile(path:offset:reason:)`` for a database
    ///   that is not a GraphStore store, or whose tables disagree with `graphstore_columns`;
    ///   ``GraphStore/GraphStoreError/unsupportedFormatVersion(path:found:supported:)``.
    /// - Complexity: O(tables + columns).
    static func read(_ db: Database, path: String) throws -> SQLiteStoreContents {
        let tables = try SQLiteFormatV1.tableNames(in: db)
        let metadata = try SQLiteFormatV1.readMetadata(in: db, tables: tables, path: path)
        var kinds = try SQLiteFormatV1.readColumnKinds(in: db, tables: tables, path: path)
        var layouts: [TableLayout] = []
        for name in tables.sorted() where !SQLiteFormatV1.isReserved(name) {
            // A table without any recorded column is not GraphStore's (the store records a
            // table's columns when it creates it); the typed store ignores it, and so does this.
            guard let recorded = kinds.removeValue(forKey: name) else { continue }
            layouts.append(try SQLiteStoreReader.tableLayout(name, recorded: recorded, db: db, path: path))
        }
        if let orphan = kinds.keys.sorted().first {
            throw GraphStoreError.damagedFile(
                path: path, offset: nil, reason: "\(SQLiteFormatV1.columnsTable) lists columns of \(orphan), which has no table")
        }
        return SQLiteStoreContents(metadata: metadata, tables: layouts)
    }

    /// The number of rows of `table`.
    static func rowCount(of table: TableLayout, in db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.name.quotedDatabaseIdentifier)") ?? 0
    }

    /// Every row of `table` as an object: a key per non-NULL column. Reports progress per row.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/codingFailed(path:entity:id:reason:)`` naming the
    ///   row whose value does not fit its column's kind; SQLite's errors.
    /// - Complexity: O(rows × their size).
    static func objects(
        of table: TableLayout, in db: Database, path: String, progress: (@Sendable (MigrationProgress) -> Void)?
    ) throws -> [SnapshotValue] {
        var numbers = ExactNumbers()
        return try objects(of: table, in: db, path: path, progress: progress, numbers: &numbers)
    }

    /// ``objects(of:in:path:progress:)``, with the numbers of `json` columns that a double
    /// rounds added to `numbers` (see ``GraphStore/GenericSnapshot``).
    static func objects(
        of table: TableLayout, in db: Database, path: String, progress: (@Sendable (MigrationProgress) -> Void)?,
        numbers: inout ExactNumbers
    ) throws -> [SnapshotValue] {
        let total = try rowCount(of: table, in: db)
        var reporter = ProgressReporter(entity: table.name, total: total, callback: progress)
        var objects: [SnapshotValue] = []
        objects.reserveCapacity(total)
        let columns = table.columns
        let kinds = table.kinds
        let idIndex = table.index(of: SQLiteFormatV1.idColumn)
        // The statement's columns are read by index, without GRDB's generic row decoding.
        let statement = try db.makeStatement(sql: table.selectSQL)
        let sqliteStatement = statement.sqliteStatement
        let rows = try Row.fetchCursor(statement)
        while let row = try rows.next() {
            var bag = ExactNumbers.Bag()
            var fields: [String: SnapshotValue] = [:]
            fields.reserveCapacity(columns.count)
            for index in columns.indices {
                let stored = DatabaseValue(sqliteStatement: sqliteStatement, index: CInt(index))
                do {
                    if let value = try GenericColumnDecoding.decode(stored, kind: kinds[index], numbers: &bag) {
                        fields[columns[index]] = value
                    }
                } catch let mismatch as GenericColumnDecoding.Mismatch {
                    throw GraphStoreError.codingFailed(
                        path: path, entity: table.name, id: idIndex.map { ColumnDecoding.idText(row[$0]) }, reason: "\(columns[index]): \(mismatch.reason)")
                }
            }
            guard let id = fields[SQLiteFormatV1.idColumn] else {
                throw GraphStoreError.codingFailed(path: path, entity: table.name, id: nil, reason: "a row has a NULL id")
            }
            if !bag.isEmpty {
                bag.settle(with: .object(fields))
                numbers.set(bag, entity: table.name, id: id)
            }
            objects.append(.object(fields))
            reporter.advance()
        }
        reporter.finish()
        return objects
    }

    /// The field types of a snapshot of the store: for its `json` columns, the paths
    /// `graphstore_metadata` records in them (URLs, decimals, nested dates, data and strings;
    /// see ``SQLiteFormatV1``), and for the other columns their kinds' (``fieldTypes``), which
    /// the values stored in them follow whatever was recorded.
    var snapshotFieldTypes: [String: [String: String]] {
        var types = fieldTypes
        for table in tables {
            guard let recorded = metadata.fieldTypes?[table.name] else { continue }
            for (path, type) in recorded {
                // `shipment.when`, `history[]`, `prices{}`: the column is the path's first key.
                let column = String(path.prefix { $0 != "." && $0 != "[" && $0 != "{" })
                guard table.kindByName[column] == .json else { continue }
                types[table.name, default: [:]][path] = type
            }
        }
        return types
    }

    /// Per entity, its table's `json` columns, sorted.
    var jsonColumns: [String: [String]] {
        var columns: [String: [String]] = [:]
        for table in tables {
            let names = zip(table.columns, table.kinds).filter { $0.1 == .json }.map(\.0).sorted()
            if !names.isEmpty { columns[table.name] = names }
        }
        return columns
    }

    /// The header's field types for the tables' columns: `date`, `data`, `real` and `string`
    /// ones, by their kinds.
    var fieldTypes: [String: [String: String]] {
        var types: [String: [String: String]] = [:]
        for table in tables {
            let entries = zip(table.columns, table.kinds).compactMap { column, kind in
                GenericColumnDecoding.fieldType(of: kind).map { (column, $0) }
            }
            if !entries.isEmpty { types[table.name] = Dictionary(uniqueKeysWithValues: entries) }
        }
        return types
    }
}
