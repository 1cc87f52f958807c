extension PlainSQLiteImportReport {
    /// A table that became an entity of the same name.
    public struct ImportedTable: Sendable, Hashable {
        /// The table's name, which is also the entity's.
        public var name: String
        /// The number of rows, which is the number of objects.
        public var rows: Int
        /// The primary key's columns, in key order.
        public var primaryKey: [String]
        /// Columns kept under another name, column → field: a column named `id` that is not the
        /// whole primary key becomes `id_` (or `id__`, …, when that is taken).
        public var renamedColumns: [String: String]

        /// The table `name`, imported with `rows` objects; the importer makes these.
        public init(name: String, rows: Int, primaryKey: [String], renamedColumns: [String: String] = [:]) {
            self.name = name
            self.rows = rows
            self.primaryKey = primaryKey
            self.renamedColumns = renamedColumns
        }
    }
}
