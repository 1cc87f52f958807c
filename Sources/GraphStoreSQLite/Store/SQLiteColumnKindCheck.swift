import Foundation
import GRDB
import GraphStore

/// Finds, when a store opens, the columns whose recorded kind no longer matches what the app's
/// Swift types encode: a field changed from `Int` to `Double` reads back (an INTEGER converts to
/// a `Double`), but the values written from then on would be of another kind than the ones
/// stored. A type that writes the recorded kind for some objects and another for others (an
/// enum with an `Int` case and a `String` case) did not change; the writer turns its column
/// into JSON (see ``SQLiteWritePlan``). Nor did it when no object writes the recorded kind any
/// more (saves a crash left in the journal changed every one) but a value the database holds,
/// decoded and encoded again, still does.
///
/// Each entity's objects are encoded with the store's row encoder until every column of its
/// table has been seen with a non-NULL value, or ``sampleLimit`` objects were encoded. A column
/// still unseen then (NULL in every sampled object) is looked up in the database: its first
/// row with a value is decoded and encoded again, so a changed type is found however few
/// objects hold a value in that field. A table
/// with no rows has nothing to compare: the first write of a value of another kind writes the
/// table again with the kinds its objects write. Columns of kind `json` take any value and are
/// never a mismatch; nor is an `integer` column that an `Int128` or `UInt128` beyond 64 bits
/// writes JSON for, even when no object still writes an integer (every value grew in saves a
/// crash left in the journal): the writer turns the column to `json` as it always does.
enum SQLiteColumnKindCheck {
    /// The most objects of one entity encoded at open.
    static let sampleLimit = 1_000

    /// Checks the objects of `version` against the column kinds of `layout`.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` naming the file, the
    ///   entity, the object and the field, with the kind stored and the kind the type now writes.
    /// - Complexity: O(entities × min(objects, ``sampleLimit``) × object size); every object
    ///   of an entity when one writes a column as another kind.
    /// - Returns: per entity name, the columns that no sampled object encoded (a column of a
    ///   field the type no longer has, or of an optional field `nil` in every sampled object),
    ///   for ``SQLiteUnkeptColumnCheck``.
    @discardableResult
    static func check(_ version: GraphVersion, schema: Schema, layout: StoreLayout, path: String, db: Database? = nil) throws -> [String: Set<String>] {
        let json = SQLiteJSON.makeEncoder()
        var notEncoded: [String: Set<String>] = [:]
        for (index, entity) in schema.entities.enumerated() {
            guard let table = layout.tables[entity.name] else { continue }
            var unseen = Set(table.columns.filter { table.kindByName[$0] != .json })
            var unencoded = Set(table.columns)
            unencoded.remove(SQLiteFormatV1.idColumn)
            defer { notEncoded[entity.name] = unencoded }
            var sampled = 0
            // The first object writing each column as another kind than the recorded one, and
            // the columns some object writes as the recorded kind: a type that writes both
            // (an enum with an `Int` case and a `String` case) did not change; the writer turns
            // such a column to JSON (see ``SQLiteWritePlan``).
            var mismatches: [String: (kind: ColumnKind, id: String)] = [:]
            var fitting: Set<String> = []
            var isUnresolved: Bool { mismatches.keys.contains { !fitting.contains($0) } }
            for (key, stored) in version.tables[index] {
                guard ((!unseen.isEmpty || !unencoded.isEmpty) && sampled < sampleLimit) || isUnresolved else { break }
                sampled += 1
                let fields: [EncodedField]
                do {
                    fields = try RowEncoder.encode(stored.value, existingKinds: table.kindByName, json: json)
                } catch {
                    throw GraphStoreError.sqliteCoding(error, path: path, entity: entity.name, id: key.description)
                }
                for field in fields {
                    unencoded.remove(field.name)
                    guard let kind = field.value.kind else { continue }
                    unseen.remove(field.name)
                    if let recorded = table.kindByName[field.name], recorded != kind, !ColumnEncoding.widens(recorded, to: field.value) {
                        if mismatches[field.name] == nil { mismatches[field.name] = (kind, key.description) }
                    } else {
                        fitting.insert(field.name)
                    }
                }
            }
            for (field, mismatch) in mismatches.sorted(by: { $0.key < $1.key }) where !fitting.contains(field) {
                // No object writes the recorded kind any more: saves a crash left in the journal
                // may have changed every one of them. A value the database holds that the type
                // still writes as the recorded kind shows the type did not change.
                if let db, try rowWritesRecordedKind(field, of: entity, table: table, db: db, json: json, path: path) { continue }
                try compare(field, mismatch.kind, table: table, entity: entity.name, id: mismatch.id, path: path)
            }
            if let db, !unseen.isEmpty, sampled < version.tables[index].count {
                try checkRows(holding: unseen, of: entity, table: table, db: db, json: json, path: path)
            }
        }
        return notEncoded
    }

    /// For each of `columns`, the first row with a value there, decoded with the app's type and
    /// encoded again: the kind it writes must be the column's.
    ///
    /// - Complexity: one query per column, at most a scan of the table each.
    private static func checkRows(
        holding columns: Set<String>, of entity: EntityDescription, table: TableLayout, db: Database, json: SQLiteJSON.Writer, path: String
    ) throws {
        let decoder = SQLiteJSON.makeDecoder()
        for column in columns.sorted() {
            guard let row = try firstRow(withValueIn: column, table: table, db: db) else { continue }
            let id = SQLiteStoreReader.id(of: row, table: table)
            let object = try SQLiteStoreReader.decode(row, of: entity, table: table, json: decoder, path: path)
            if let kind = try encodedValue(of: object, in: column, entity: entity, id: id, table: table, json: json, path: path)?.kind {
                try compare(column, kind, table: table, entity: entity.name, id: id, path: path)
            }
        }
    }

    /// Whether the first row with a value in `column`, decoded with the app's type and encoded
    /// again, writes the column's recorded kind there.
    ///
    /// - Complexity: one query, at most a scan of the table.
    private static func rowWritesRecordedKind(
        _ column: String, of entity: EntityDescription, table: TableLayout, db: Database, json: SQLiteJSON.Writer, path: String
    ) throws -> Bool {
        guard let recorded = table.kindByName[column], let row = try firstRow(withValueIn: column, table: table, db: db) else { return false }
        let id = SQLiteStoreReader.id(of: row, table: table)
        // A row the type no longer decodes says nothing here; the mismatch found stands.
        guard let object = try? SQLiteStoreReader.decode(row, of: entity, table: table, json: SQLiteJSON.makeDecoder(), path: path),
              let value = try encodedValue(of: object, in: column, entity: entity, id: id, table: table, json: json, path: path)
        else { return false }
        return value.kind == recorded || ColumnEncoding.widens(recorded, to: value)
    }

    /// The first row of `table` with a value in `column`, if any.
    private static func firstRow(withValueIn column: String, table: TableLayout, db: Database) throws -> Row? {
        try Row.fetchOne(db, sql: table.selectSQL + " WHERE \(column.quotedDatabaseIdentifier) IS NOT NULL LIMIT 1")
    }

    /// What `object` (the row with id `id`, decoded) writes in `column` when encoded again, if
    /// anything.
    ///
    /// - Throws: ``GraphStoreError`` naming the object when it cannot be encoded.
    private static func encodedValue(
        of object: any Entity, in column: String, entity: EntityDescription, id: String?, table: TableLayout, json: SQLiteJSON.Writer, path: String
    ) throws -> ColumnValue? {
        do {
            return try RowEncoder.encode(object, existingKinds: table.kindByName, json: json).first { $0.name == column }?.value
        } catch {
            throw GraphStoreError.sqliteCoding(error, path: path, entity: entity.name, id: id)
        }
    }

    private static func compare(_ field: String, _ kind: ColumnKind, table: TableLayout, entity: String, id: String?, path: String) throws {
        if let recorded = table.kindByName[field], recorded != kind {
            throw GraphStoreError.codingFailed(
                path: path, entity: entity, id: id,
                reason: mismatch(entity: entity, field: field, stored: recorded, written: kind) + " The file was left untouched.")
        }
    }

    /// What a field whose column holds `stored` values but whose type now writes `written`
    /// values means, and what to do about it.
    static func mismatch(entity: String, field: String, stored: ColumnKind, written: ColumnKind) -> String {
        "field \"\(field)\": column \(entity).\(field) stores \(stored.rawValue) values (\(stored.declaredType)), but \(entity)'s Swift type now encodes \"\(field)\" as \(written.rawValue) (\(written.declaredType)); a column keeps the kind of its first value. The field's type changed: migrate the stored values to the new type (a model migration, or migrating the store through a snapshot file), or restore the old type."
    }
}
