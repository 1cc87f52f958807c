extension PlainSQLiteImportOptions {
    /// What becomes of a table whose primary key has several columns, such as a join table
    /// `note_tags(note_id, tag_id, PRIMARY KEY (note_id, tag_id))`.
    public enum CompositeKeys: Sendable, Hashable {
        /// The table is imported; an object's `id` is the text of its key columns, in key order,
        /// joined by `separator` (`"3|17"`): integers in decimal, reals as Swift prints them,
        /// text as is, BLOBs in lowercase hex. The key columns are kept under their own names
        /// too, with their own types, so nothing is lost. Two rows whose joined texts are equal
        /// (a separator inside a text part) make the import throw; choose another separator.
        case joined(separator: String)
        /// The table is skipped and listed in the report as
        /// ``SkippedTable/Reason/compositePrimaryKey``.
        case skip
    }
}
