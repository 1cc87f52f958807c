/// Choices for ``PlainSQLiteImporter/snapshot(from:options:progress:)``.
///
/// ```swift
/// var options = PlainSQLiteImportOptions()
/// options.excludedTables = ["event_log"]
/// options.compositeKeys = .joined(separator: "/")
/// let (snapshot, report) = try PlainSQLiteImporter.snapshot(from: url, options: options)
/// ```
public struct PlainSQLiteImportOptions: Sendable {
    /// What becomes of a table whose primary key has several columns. Default
    /// ``CompositeKeys/joined(separator:)`` with `"|"`.
    public var compositeKeys: CompositeKeys
    /// Whether a column declared `BOOLEAN` or `BOOL` gives `true` and `false` for its 0 and 1
    /// (other values are kept as they are). SQLite has no Boolean type: without a declared
    /// type, or when this is off, they are integers. Default `true`.
    public var convertsBooleans: Bool
    /// Tables not to import, by name (SQLite's names: any case). They are listed in the
    /// report as ``SkippedTable/Reason/excluded``.
    public var excludedTables: Set<String>
    /// The model version written into the snapshot's header. Default `"1"`.
    public var modelVersion: String

    /// Options with the documented defaults: composite keys joined with `"|"`, Booleans
    /// converted, no table excluded, model version `"1"`.
    public init(
        compositeKeys: CompositeKeys = .joined(separator: "|"), convertsBooleans: Bool = true,
        excludedTables: Set<String> = [], modelVersion: String = "1"
    ) {
        self.compositeKeys = compositeKeys
        self.convertsBooleans = convertsBooleans
        self.excludedTables = excludedTables
        self.modelVersion = modelVersion
    }
}
