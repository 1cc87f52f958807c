import GRDB
import GraphStore

/// The field types a SQLite store records in `graphstore_metadata` (see ``SQLiteFormatV1``):
/// what a snapshot header's ``GraphStore/SnapshotHeaderV1/fieldTypes`` says, found the same
/// way, on a sample of the objects (an optional `nil` counts by its declared type). A tool
/// reading the file without the app's types needs them to write a property list the app opens:
/// a `json` column holds a URL as a string and a decimal as a number, and nested dates and data
/// as numbers and Base64, where a property list holds dictionaries and native values.
///
/// The store adds what it finds at open (up to 64 objects per entity) and in each write (up to
/// 64 of the objects it writes per entity) to what the file records: a path found again takes
/// the type found now, a path not found again keeps its type.
enum SQLiteFieldTypes {
    /// The ``GraphStore/SnapshotHeaderV1/fieldTypesVersion`` the store records.
    static var version: Int { SnapshotHeaderV1.currentFieldTypesVersion }

    /// Adds the field types found in `objects` (the first 64) to those of `entity` in `types`.
    ///
    /// - Complexity: O(size of the probed objects).
    static func add(_ objects: some Sequence<any Entity>, of entity: String, to types: inout [String: [String: String]]) {
        let merged = FieldTypeProbe.merged(types[entity] ?? [:], probing: objects)
        types[entity] = merged.isEmpty ? nil : merged
    }

    /// When the store opens: adds the field types of every entity's objects in `version` to
    /// those `layout` records, and records the result in `db` (inside the opening transaction)
    /// when it differs, so that a file written before field types were recorded has them from
    /// its first open on.
    ///
    /// - Throws: SQLite's errors.
    /// - Complexity: O(entities × 64 objects' size).
    static func recordAtOpen(_ version: GraphVersion, schema: Schema, layout: inout StoreLayout, in db: Database) throws {
        var types = layout.fieldTypes
        for entity in schema.entities where !version.tables[entity.index].isEmpty {
            add(version.tables[entity.index].lazy.map(\.value.value), of: entity.name, to: &types)
        }
        guard types != layout.fieldTypes || layout.fieldTypesVersion != Self.version else { return }
        try SQLiteFormatV1.setFieldTypes(types, version: Self.version, in: db)
        layout.fieldTypes = types
        layout.fieldTypesVersion = Self.version
    }
}
