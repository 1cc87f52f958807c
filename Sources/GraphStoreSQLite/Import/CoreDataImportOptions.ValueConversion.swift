extension CoreDataImportOptions {
    /// How the values of one column become snapshot values. Without a model, a value that does
    /// not fit the conversion (text in a date column, a 20-byte BLOB in a UUID column) is kept
    /// as stored; with one, a value the attribute's type does not hold is refused, since the
    /// app's types could not read it.
    public enum ValueConversion: String, Sendable, Hashable, CaseIterable {
        /// As SQLite stores it: INTEGER → integer, REAL → double, TEXT → string, BLOB → data.
        case asStored
        /// A date: the number of seconds since 2001-01-01T00:00:00Z (REAL or INTEGER, negative
        /// before 2001) as a double, exactly, and `"date"` in the header's field types. The
        /// default for columns declared `TIMESTAMP`.
        case date
        /// A Boolean: 0 → `false`, 1 → `true`. Core Data keeps a Boolean as an INTEGER 0 or 1
        /// and declares it `INTEGER`, like any integer, so it is never chosen automatically.
        case bool
        /// A UUID: a 16-byte BLOB → its upper-case string, as `UUID` encodes with `Codable`.
        case uuid
    }
}
