/// What ``PlainSQLiteImporter/snapshot(from:options:progress:)`` imported and skipped.
///
/// ```swift
/// let (_, report) = try PlainSQLiteImporter.snapshot(from: url)
/// for table in report.importedTables { print(table.name, table.rows) }
/// for table in report.skippedTables { print(table) }
/// ```
public struct PlainSQLiteImportReport: Sendable, Hashable {
    /// The tables that became entities, by name.
    public var importedTables: [ImportedTable]
    /// The tables that did not, by name, each with its reason.
    public var skippedTables: [SkippedTable]

    /// A report of the given tables; the importer makes these.
    public init(importedTables: [ImportedTable] = [], skippedTables: [SkippedTable] = []) {
        self.importedTables = importedTables
        self.skippedTables = skippedTables
    }
}
