import Foundation
import GRDB
import GraphStore

/// Finds, when a store opens at its own model version, a column holding values that the app's
/// type neither reads nor writes: a field renamed or removed without a new model version. Its
/// values would read as nothing, and the writer stores NULL in every column an object does
/// not encode, so each save of an object would erase its value. The snapshot store refuses
/// the same fields (see the `UnkeptFields` check of GraphStore).
///
/// The candidates are the columns that no object of ``SQLiteColumnKindCheck``'s sample
/// encoded. For each, the first row with a value in it is decoded twice, with the value and
/// with NULL: when the two objects encode alike, the type does not read the column.
enum SQLiteUnkeptColumnCheck {
    /// Checks the columns of `notEncoded` (per entity name) in `db`.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` naming the file, the
    ///   entity, a row's id and the column; nothing has been written.
    /// - Complexity: per candidate column, one query that may scan the table (a column NULL in
    ///   every row), and four encodings or decodings of one row.
    static func check(_ notEncoded: [String: Set<String>], schema: Schema, layout: StoreLayout, db: Database, path: String) throws {
        let decoder = SQLiteJSON.makeDecoder()
        let encoder = SQLiteJSON.makeEncoder()
        for entity in schema.entities {
            guard let table = layout.tables[entity.name], let columns = notEncoded[entity.name] else { continue }
            for column in columns.sorted() {
                guard let position = table.index(of: column),
                      let row = try Row.fetchOne(db, sql: table.selectSQL + " WHERE \(column.quotedDatabaseIdentifier) IS NOT NULL LIMIT 1")
                else { continue }
                let values = (0..<table.columns.count).map { index -> DatabaseValue in row[index] }
                var without = values
                without[position] = .null
                guard let with = try? fields(of: values, entity: entity, table: table, decoder: decoder, encoder: encoder),
                      !with.names.contains(column),
                      // A type that needs the column reads it.
                      let withoutColumn = try? fields(of: without, entity: entity, table: table, decoder: decoder, encoder: encoder),
                      with.description == withoutColumn.description
                else { continue }
                let id = table.index(of: SQLiteFormatV1.idColumn).map { ColumnDecoding.idText(values[$0]) }
                throw GraphStoreError.codingFailed(
                    path: path, entity: entity.name, id: id,
                    reason: UnkeptFields.reason(entity: entity.name, field: column) + ". The file was left untouched")
            }
        }
    }

    /// The row `values` decoded as the entity and encoded again: the field names, and a
    /// description of the fields to compare.
    private static func fields(
        of values: [DatabaseValue], entity: EntityDescription, table: TableLayout, decoder: SQLiteJSON.Reader, encoder: SQLiteJSON.Writer
    ) throws -> (names: Set<String>, description: String) {
        let object = try RowDecoder.decode(entity.type, table: table, values: values, json: decoder)
        let fields = try RowEncoder.encode(object, existingKinds: table.kindByName, json: encoder)
        return (Set(fields.map(\.name)), fields.map { "\($0.name)=\(comparable($0.value))" }.joined(separator: "\n"))
    }

    /// A column value in a form that is the same for the same value: a JSON column's text with
    /// the members of its objects in sorted order. A dictionary is written in its iteration
    /// order, which differs between two dictionaries of the same entries (each has its own
    /// hash seed), so the two encodings of one row compared as written could differ while the
    /// type reads the column as nothing, and the check let the store open.
    static func comparable(_ value: ColumnValue) -> String {
        guard value.kind == .json, case .string(let text) = value.value.storage,
              let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]),
              let sorted = try? JSONSerialization.data(withJSONObject: parsed, options: [.sortedKeys, .fragmentsAllowed])
        else { return "\(value.value)" }
        return String(decoding: sorted, as: UTF8.self)
    }
}
