import GRDB

/// The columns of one entity's table, in table order, with their kinds; and the SQL that reads
/// and writes its rows.
struct TableLayout: Sendable {
    /// The table name: the entity name.
    let name: String
    private(set) var columns: [String] = []
    private(set) var kinds: [ColumnKind] = []
    /// Column name → kind, for the row encoder.
    private(set) var kindByName: [String: ColumnKind] = [:]
    private var indexByName: [String: Int] = [:]
    /// Column name folded as SQLite folds identifiers → column name.
    private var columnByFoldedName: [String: String] = [:]

    init(name: String) {
        self.name = name
    }

    /// The position of `column` in ``columns``.
    ///
    /// - Complexity: O(1).
    func index(of column: String) -> Int? {
        indexByName[column]
    }

    /// The column SQLite would take `column` for, when it is spelled otherwise: SQLite
    /// compares identifiers ignoring the case of ASCII letters, so `url` and `URL` cannot both
    /// be columns of one table.
    ///
    /// - Complexity: O(length of `column`).
    func column(clashingWith column: String) -> String? {
        columnByFoldedName[Self.folded(column)].flatMap { $0 == column ? nil : $0 }
    }

    /// `name` as SQLite compares identifiers: ASCII letters in lower case, every other
    /// character as it is.
    static func folded(_ name: String) -> String {
        String(decoding: name.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Why an entity whose fields `first` and `second` differ only in case cannot be stored.
    static func caseClash(_ first: String, _ second: String) -> String {
        "its fields \"\(first)\" and \"\(second)\" differ only in case, and SQLite column names do not; give one of them another coding key"
    }

    /// Adds a column at the end. The caller checks ``column(clashingWith:)`` first.
    mutating func append(_ column: String, kind: ColumnKind) {
        precondition(indexByName[column] == nil, "GraphStoreSQLite: column \(column) added twice")
        precondition(self.column(clashingWith: column) == nil, "GraphStoreSQLite: column \(column) clashes with another in case")
        columnByFoldedName[Self.folded(column)] = column
        indexByName[column] = columns.count
        kindByName[column] = kind
        columns.append(column)
        kinds.append(kind)
    }

    // MARK: - SQL

    private var quotedName: String { name.quotedDatabaseIdentifier }

    /// `CREATE TABLE` with the current columns; `id` is the primary key.
    var createSQL: String {
        let definitions = zip(columns, kinds).map { column, kind in
            let key = column == SQLiteFormatV1.idColumn ? " PRIMARY KEY NOT NULL" : ""
            return "\(column.quotedDatabaseIdentifier) \(kind.declaredType)\(key)"
        }
        return "CREATE TABLE \(quotedName) (\(definitions.joined(separator: ", ")))"
    }

    /// `ALTER TABLE … ADD COLUMN` for the column at `index`.
    func addColumnSQL(at index: Int) -> String {
        "ALTER TABLE \(quotedName) ADD COLUMN \(columns[index].quotedDatabaseIdentifier) \(kinds[index].declaredType)"
    }

    /// Every column of every row, in column order.
    var selectSQL: String {
        "SELECT \(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")) FROM \(quotedName)"
    }

    /// Inserts a row; a row with the same id is a constraint error. What a migration, which
    /// writes each object once, uses.
    var insertSQL: String {
        let names = columns.map(\.quotedDatabaseIdentifier)
        return "INSERT INTO \(quotedName) (\(names.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))"
    }

    /// Inserts a row, or updates every column of the row with its id. An upsert rather than
    /// `INSERT OR REPLACE`, so SQLite (and its update hook) sees one update, not a delete and
    /// an insert.
    var upsertSQL: String {
        let names = columns.map(\.quotedDatabaseIdentifier)
        let id = SQLiteFormatV1.idColumn.quotedDatabaseIdentifier
        let updates = names.filter { $0 != id }.map { "\($0) = excluded.\($0)" }
        let action = updates.isEmpty ? "NOTHING" : "UPDATE SET \(updates.joined(separator: ", "))"
        return "INSERT INTO \(quotedName) (\(names.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", "))) ON CONFLICT(\(id)) DO \(action)"
    }

    /// Deletes the row with an id.
    var deleteSQL: String {
        "DELETE FROM \(quotedName) WHERE \(SQLiteFormatV1.idColumn.quotedDatabaseIdentifier) = ?"
    }

    /// Drops the table.
    var dropSQL: String {
        "DROP TABLE \(quotedName)"
    }

    /// Deletes every row (SQLite's truncate optimization applies: no row is visited).
    var deleteAllSQL: String {
        "DELETE FROM \(quotedName)"
    }
}

/// The tables of a store as they are on disk, by entity name, plus the model version and the
/// field types recorded.
struct StoreLayout: Sendable {
    var tables: [String: TableLayout] = [:]
    var modelVersion: String
    /// The field types `graphstore_metadata` records (see ``SQLiteFormatV1``).
    var fieldTypes: [String: [String: String]] = [:]
    /// Their version; `nil` while the file records none.
    var fieldTypesVersion: Int?
}
