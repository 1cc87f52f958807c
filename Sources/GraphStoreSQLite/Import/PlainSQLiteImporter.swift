import Foundation
import GRDB
import GraphStore

/// Reads any SQLite database into a ``GraphStore/GenericSnapshot``: a table becomes an entity,
/// a row an object.
///
/// ```swift
/// import GraphStoreSQLite
///
/// let (snapshot, report) = try PlainSQLiteImporter.snapshot(from: URL(fileURLWithPath: "app.sqlite"))
/// for table in report.skippedTables { print("skipped \(table)") }
/// try snapshot.write(to: URL(fileURLWithPath: "app.json.gz"), format: .json, compression: .gzip)
/// ```
///
/// The rules:
///
/// - **Tables.** Each table with a primary key becomes an entity named like the table. Tables
///   without one (their rows have no id), SQLite's own tables (`sqlite_sequence`, `sqlite_stat1`),
///   virtual tables (full-text search, R-tree) and the shadow tables that hold their data are
///   skipped and listed in ``PlainSQLiteImportReport/skippedTables`` with the reason, as are the
///   tables ``PlainSQLiteImportOptions/excludedTables`` names. Views are not read.
/// - **Ids.** A one-column primary key's value is the object's `id`, kept as it is: an INTEGER
///   key gives integer ids, a TEXT key string ids. When that column is not named `id`, its
///   value is *also* kept under the column's own name (`isbn` → `"id": "978…", "isbn": "978…"`),
///   so the object still decodes as a type with an `isbn` property. A key of several columns is
///   handled as ``PlainSQLiteImportOptions/compositeKeys`` says: by default the `id` is the
///   parts' text joined by `"|"` (`"3|17"`) and the parts stay under their names. A column
///   named `id` that is not the whole primary key is kept as `id_`, and the report says so.
/// - **Values** follow SQLite's storage class, whatever the declared type: INTEGER → integer,
///   REAL → double, TEXT → string, BLOB → data, and NULL leaves the key out, as `Codable`
///   leaves out a `nil` optional. The one exception: a column declared `BOOLEAN` or `BOOL`
///   gives `true`/`false` for 1/0 (see ``PlainSQLiteImportOptions/convertsBooleans``).
/// - **Dates are not converted.** A plain database may keep a date as Unix seconds, seconds since
///   2001, milliseconds, Julian days or ISO 8601 text, and its declared type (`DATE`,
///   `DATETIME`, `TIMESTAMP`) does not say which. So numbers stay numbers and text stays text;
///   convert them in the app, or import a Core Data store with ``CoreDataImporter``, whose
///   dates are known.
/// - **Header.** ``GraphStore/SnapshotHeaderV1/fieldTypes`` marks each column whose values are
///   all BLOBs as `"data"`, so the snapshot converts between JSON (Base64 text) and a property
///   list (native data). Entities are in table-name order, objects in primary-key order.
///
/// The database is opened read-only (see ``snapshot(from:options:progress:)``); the import
/// never changes it.
public enum PlainSQLiteImporter {
    /// Reads the SQLite database at `url` into a snapshot, following the rules above.
    ///
    /// ```swift
    /// let (snapshot, report) = try PlainSQLiteImporter.snapshot(from: url) { progress in
    ///     print("\(progress.entity) \(Int(progress.fractionCompleted * 100))%")
    /// }
    /// ```
    ///
    /// The whole database is read in one read transaction, so the snapshot is one consistent
    /// state even while another connection writes. The file is opened read-only; a database in
    /// write-ahead-log mode whose `-wal` file is missing or empty is opened `immutable`, so no
    /// `-wal` or `-shm` file appears beside it either. (With a non-empty `-wal`, SQLite reads
    /// it and may create or update the `-shm` index file.)
    ///
    /// - Parameters:
    ///   - url: The database file.
    ///   - options: Composite keys, Booleans, excluded tables, model version.
    ///   - progress: Called as each table is read (see ``MigrationProgress``), with the table
    ///     name as the entity: synchronously, one call at a time, before this method returns.
    /// - Returns: The snapshot (header with model version, import time as `savedAt`, store
    ///   version 0, counts and field types) and what was imported and skipped.
    /// - Throws: ``GraphStore/GraphStoreError/damagedFile(path:offset:reason:)`` for an empty
    ///   file, a file that is not a SQLite database, or one SQLite finds truncated or malformed;
    ///   ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)`` for a missing
    ///   or unreadable file; ``GraphStore/GraphStoreError/storeLocked(path:)`` while another
    ///   connection holds the database locked; ``GraphStore/GraphStoreError/codingFailed(path:entity:id:reason:)``
    ///   for a row with NULL in its primary key, two rows with the same joined composite key,
    ///   or a one-column key whose values are of two kinds (a number and text) or are one id to
    ///   the app though SQLite keeps them apart (`'caf\u{E9}'` and `'cafe\u{301}'`), naming
    ///   both rows.
    ///   The file is left unchanged.
    /// - Complexity: O(rows + total size of the values); the snapshot is built in memory.
    public static func snapshot(
        from url: URL, options: PlainSQLiteImportOptions = PlainSQLiteImportOptions(),
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws -> (GenericSnapshot, PlainSQLiteImportReport) {
        let database = try ForeignDatabase.open(url)
        defer { database.close() }
        return try database.read { db in
            try PlainTableReader(db: db, path: database.path, options: options, progress: progress).read()
        }
    }
}

// MARK: - Reading

/// Reads every table of one database inside a read transaction.
private struct PlainTableReader {
    let db: Database
    let path: String
    let options: PlainSQLiteImportOptions
    let progress: (@Sendable (MigrationProgress) -> Void)?

    func read() throws -> (GenericSnapshot, PlainSQLiteImportReport) {
        let tables = try ForeignDatabase.tables(in: db)
        let internalTables = ForeignDatabase.internalTables(tables, in: db)
        let excluded = Set(options.excludedTables.map { $0.lowercased() })
        var report = PlainSQLiteImportReport()
        var entities: [(name: String, objects: [SnapshotValue])] = []
        var fieldTypes: [String: [String: String]] = [:]
        for table in tables {
            if let reason = internalTables[table.name] {
                report.skippedTables.append(SkippedTable(name: table.name, reason: reason))
                continue
            }
            if excluded.contains(table.name.lowercased()) {
                report.skippedTables.append(SkippedTable(name: table.name, reason: .excluded))
                continue
            }
            let columns = try db.columns(in: table.name)
            let key = columns.filter { $0.primaryKeyIndex > 0 }.sorted { $0.primaryKeyIndex < $1.primaryKeyIndex }
            if key.isEmpty {
                report.skippedTables.append(SkippedTable(name: table.name, reason: .noPrimaryKey))
                continue
            }
            if key.count > 1, options.compositeKeys == .skip {
                report.skippedTables.append(SkippedTable(name: table.name, reason: .compositePrimaryKey))
                continue
            }
            let result = try readTable(table.name, columns: columns, key: key.map(\.name))
            entities.append((table.name, result.objects))
            report.importedTables.append(result.imported)
            if !result.fieldTypes.isEmpty { fieldTypes[table.name] = result.fieldTypes }
        }
        let header = SnapshotHeaderV1(
            modelVersion: options.modelVersion, savedAt: Date(), storeVersion: 0,
            counts: Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.objects.count) }),
            fieldTypes: fieldTypes.isEmpty ? nil : fieldTypes)
        return (GenericSnapshot(header: header, entities: entities), report)
    }

    /// One column as the reader handles it.
    private struct Field {
        let name: String
        let isBoolean: Bool
        /// Whether a BLOB / another non-NULL value was seen, for the `data` hint.
        var sawBlob = false
        var sawOther = false
        /// The rows (in key order) of the first BLOB and of the first other value.
        var firstBlobRow = 0, firstOtherRow = 0
    }

    private func readTable(_ table: String, columns: [ColumnInfo], key: [String]) throws -> (objects: [SnapshotValue], imported: PlainSQLiteImportReport.ImportedTable, fieldTypes: [String: String]) {
        let isSingleID = key == ["id"]
        var taken = Set(columns.map(\.name))
        var renamed: [String: String] = [:]
        var fields = columns.map { column -> Field in
            var name = column.name
            if name == "id", !isSingleID {
                name = "id_"
                while taken.contains(name) { name += "_" }
                taken.insert(name)
                renamed[column.name] = name
            }
            let type = column.type.uppercased()
            return Field(name: name, isBoolean: options.convertsBooleans && (type == "BOOLEAN" || type == "BOOL"))
        }
        let keyIndexes = key.map { name in columns.firstIndex { $0.name == name }! }
        let separator: String? = if case .joined(let separator) = options.compositeKeys, key.count > 1 { separator } else { nil }
        let quotedTable = table.quotedDatabaseIdentifier
        let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(quotedTable)") ?? 0
        let sql = "SELECT \(columns.map(\.name.quotedDatabaseIdentifier).joined(separator: ", ")) FROM \(quotedTable) ORDER BY \(key.map(\.quotedDatabaseIdentifier).joined(separator: ", "))"

        var reporter = ProgressReporter(entity: table, total: total, callback: progress)
        var objects: [SnapshotValue] = []
        objects.reserveCapacity(total)
        var ids = Set<SnapshotValue>()
        // A one-column key's ids as the app's id type holds them, by row number.
        var tracker = CoreDataIDIdentity.Tracker<Int>(type: nil, conversion: .asStored)
        var rowNumber = 0
        let rows = try Row.fetchCursor(db, sql: sql)
        while let row = try rows.next() {
            rowNumber += 1
            var object: [String: SnapshotValue] = [:]
            for index in columns.indices {
                let stored = try row.importedValue(
                    atIndex: index, path: path, entity: table, id: nil, column: "column \(columns[index].name)", row: "row \(rowNumber)")
                guard var value = SnapshotValue(stored: stored) else { continue }
                if case .data = value {
                    if !fields[index].sawBlob { fields[index].firstBlobRow = rowNumber }
                    fields[index].sawBlob = true
                } else {
                    if !fields[index].sawOther { fields[index].firstOtherRow = rowNumber }
                    fields[index].sawOther = true
                }
                if fields[index].sawBlob, fields[index].sawOther {
                    // A snapshot tells data from text (or numbers) by the column's type hint only:
                    // a BLOB among them would read back as Base64 text.
                    throw GraphStoreError.codingFailed(
                        path: path, entity: table, id: nil,
                        reason: "column \(columns[index].name) holds BLOBs (first at row \(fields[index].firstBlobRow)) and other values (first at row \(fields[index].firstOtherRow)); a snapshot keeps a column's BLOBs apart from text only when it holds nothing else, so they would arrive as Base64 text. Move the BLOBs to a column of their own first")
                }
                if fields[index].isBoolean, case .integer(let number) = value, number == 0 || number == 1 {
                    value = .bool(number == 1)
                }
                object[fields[index].name] = value
            }
            let id = try objectID(row: row, keyIndexes: keyIndexes, key: key, separator: separator, table: table, rowNumber: rowNumber)
            if separator == nil {
                // One Swift type holds an entity's ids, and two keys SQLite keeps apart may be
                // one id to it: either way the app could not open the snapshot.
                let stored: DatabaseValue = row[keyIndexes[0]]
                let column = key[0]
                let describe = CoreDataIDIdentity.describe
                switch tracker.add(id, stored: stored, row: rowNumber) {
                case .kinds(let first, let kind)?:
                    throw GraphStoreError.codingFailed(
                        path: path, entity: table, id: "\(id.jsonObject)",
                        reason: "row \(first.row) holds \(describe(first.stored)) and row \(rowNumber) \(describe(stored)) in the primary-key column \(column) (rows in primary-key order): ids of one entity are of one Swift type, which does not read both \(first.kind.rawValue) and \(kind.rawValue); make the column's values of one kind first")
                case .sameID(let other, _)?:
                    // (SQLite's own uniqueness refuses two keys it stores alike.)
                    throw GraphStoreError.codingFailed(
                        path: path, entity: table, id: "\(id.jsonObject)",
                        reason: "row \(other.row) holds \(describe(other.stored)) and row \(rowNumber) \(describe(stored)) in the primary-key column \(column) (rows in primary-key order): different in SQLite, but \(tracker.sameness(of: id)), so they have the same id to the app, which would take the two objects for one; make the keys distinct first")
                case nil:
                    break
                }
            }
            guard ids.insert(id).inserted else {
                throw GraphStoreError.codingFailed(
                    path: path, entity: table, id: "\(id.jsonObject)",
                    reason: "two rows have the id \(id.jsonObject): their key columns \(key.joined(separator: ", ")) joined by \"\(separator ?? "")\" give the same text; choose another separator")
            }
            object["id"] = id
            objects.append(.object(object))
            reporter.advance()
        }
        reporter.finish()

        var types: [String: String] = [:]
        for field in fields where field.sawBlob && !field.sawOther { types[field.name] = "data" }
        if separator == nil, let keyIndex = keyIndexes.first, fields[keyIndex].sawBlob, !fields[keyIndex].sawOther { types["id"] = "data" }
        let imported = PlainSQLiteImportReport.ImportedTable(name: table, rows: objects.count, primaryKey: key, renamedColumns: renamed)
        return (objects, imported, types)
    }

    /// The id of `row`: its one key column's value, or its key columns' text joined by `separator`.
    private func objectID(row: Row, keyIndexes: [Int], key: [String], separator: String?, table: String, rowNumber: Int) throws -> SnapshotValue {
        let parts = try zip(keyIndexes, key).map { index, column in
            try row.importedValue(atIndex: index, path: path, entity: table, id: nil, column: "key column \(column)", row: "row \(rowNumber)")
        }
        if let nullIndex = parts.firstIndex(where: \.isNull) {
            throw GraphStoreError.codingFailed(
                path: path, entity: table, id: nil,
                reason: "row \(rowNumber) (in primary-key order) has NULL in its primary-key column \(key[nullIndex]), so it has no id")
        }
        guard let separator else { return SnapshotValue(stored: parts[0])! }
        return .string(parts.map(\.importText).joined(separator: separator))
    }
}
