/// A table of an imported SQLite database that did not become an entity, and why.
///
/// ```swift
/// let (_, report) = try PlainSQLiteImporter.snapshot(from: url)
/// for table in report.skippedTables { print(table) }   // "log: it has no primary key"
/// ```
public struct SkippedTable: Sendable, Hashable, CustomStringConvertible {
    /// Why a table was skipped.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// SQLite's own table (`sqlite_sequence`, `sqlite_stat1`, …).
        case sqliteInternal
        /// A virtual table (full-text search, R-tree, …), whose rows its module computes.
        case virtualTable
        /// A table a virtual table keeps its data in (`notes_fts_content` of `notes_fts`).
        case shadowTable(of: String)
        /// The table has no `PRIMARY KEY`, so its rows have no id.
        case noPrimaryKey
        /// The primary key has several columns and the options skip such tables.
        case compositePrimaryKey
        /// The options exclude the table.
        case excluded
        /// Core Data's bookkeeping: `Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`.
        case coreDataMetadata
        /// A table of Core Data's own entities: persistent history (`ACHANGE`, `ATRANSACTION`,
        /// `ATRANSACTIONSTRING`) or CloudKit mirroring (`ANSCK…`).
        case coreDataInternal
        /// No entity of the Core Data model (`Z_PRIMARYKEY`) owns the table, and it is not one of
        /// the model's join tables.
        case notInModel

        public var description: String {
            switch self {
            case .sqliteInternal: "it is SQLite's own table"
            case .virtualTable: "it is a virtual table"
            case .shadowTable(let table): "it holds the data of the virtual table \(table)"
            case .noPrimaryKey: "it has no primary key"
            case .compositePrimaryKey: "its primary key has several columns"
            case .excluded: "the options exclude it"
            case .coreDataMetadata: "it is Core Data's metadata"
            case .coreDataInternal: "it holds Core Data's own entities (persistent history or CloudKit mirroring)"
            case .notInModel: "no entity of the Core Data model uses it"
            }
        }
    }

    /// The table's name in the database.
    public var name: String
    /// Why it was skipped.
    public var reason: Reason

    /// The table `name`, skipped for `reason`.
    public init(name: String, reason: Reason) {
        self.name = name
        self.reason = reason
    }

    public var description: String {
        "\(name): \(reason)"
    }
}
