import Foundation
import GRDB
import GraphStore

/// One entity of a snapshot as the table the typed store would have: its columns (`id` first,
/// then the other keys by name) with the kinds ``ColumnKindInference`` chose.
struct SQLiteTablePlan {
    /// The entity's index in ``GraphStore/GenericSnapshot/entities``.
    let entityIndex: Int
    let table: TableLayout

    /// The tables for the snapshot's entities that have objects (the typed store creates a
    /// table with the first object of its entity).
    ///
    /// - Throws: ``GraphStore/GraphStoreError/codingFailed(path:entity:id:reason:)`` for an
    ///   entity name SQLite's or GraphStore's own tables use, two entity names or two field names
    ///   of one entity that differ only in case, an object that is not an object or has no `id`.
    /// - Complexity: O(objects × top-level keys).
    static func plans(for snapshot: GenericSnapshot, path: String) throws -> [SQLiteTablePlan] {
        var plans: [SQLiteTablePlan] = []
        var seen: [String: String] = [:]
        let isFromJSON = snapshot.format == .json
        let numbers = snapshot.exactNumbers.byID
        for (entityIndex, entity) in snapshot.entities.enumerated() where !entity.objects.isEmpty {
            func refuse(_ reason: String, id: String? = nil) -> GraphStoreError {
                .codingFailed(path: path, entity: entity.name, id: id, reason: reason)
            }
            guard !entity.name.isEmpty, !SQLiteFormatV1.isReserved(entity.name) else {
                throw refuse("the name is reserved for SQLite's or GraphStore's own tables, so it cannot name a table")
            }
            if let other = seen.updateValue(entity.name, forKey: entity.name.lowercased()) {
                throw refuse("its name differs from the entity \(other) only in case, and SQLite table names do not")
            }
            var inferences: [String: ColumnKindInference] = [:]
            for (index, object) in entity.objects.enumerated() {
                guard case .object(let fields) = object else {
                    throw refuse("object #\(index) is \(GenericColumnEncoding.describe(object)), not an object")
                }
                guard let id = fields[SQLiteFormatV1.idColumn], id != .null else {
                    throw refuse("object #\(index) has no id; the SQLite store keys every row by its top-level \"id\"")
                }
                // The object's numbers a double rounds: their column keeps their digits.
                let bag = numbers.isEmpty ? nil : numbers[id]
                for (key, value) in fields {
                    inferences[key, default: ColumnKindInference(isFromJSON: isFromJSON)].add(value, numbers: bag)
                }
            }
            let hints = snapshot.header.fieldTypes?[entity.name] ?? [:]
            var table = TableLayout(name: entity.name)
            let names = inferences.keys.sorted { ($0 == SQLiteFormatV1.idColumn ? 0 : 1, $0) < ($1 == SQLiteFormatV1.idColumn ? 0 : 1, $1) }
            for name in names {
                guard let kind = inferences[name]!.kind(hint: hints[name]) else { continue }
                if let other = table.column(clashingWith: name) { throw refuse(TableLayout.caseClash(other, name)) }
                table.append(name, kind: kind)
            }
            plans.append(SQLiteTablePlan(entityIndex: entityIndex, table: table))
        }
        return plans
    }

    /// Creates the SQLite file at `url` with GraphStore's metadata and a table per plan holding
    /// the entity's objects, then switches it to write-ahead logging as the typed store does and
    /// closes it. The file is not synced; the caller syncs it before renaming it into place.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/codingFailed(path:entity:id:reason:)`` naming the
    ///   object whose value cannot be stored, or whose id another object has too;
    ///   ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)`` and the other
    ///   errors of SQLite, with `destination` as their path.
    /// - Complexity: O(objects × their size).
    static func build(
        _ plans: [SQLiteTablePlan], snapshot: GenericSnapshot, at url: URL, destination: URL, modelVersion: String,
        progress: (@Sendable (MigrationProgress) -> Void)?
    ) throws {
        let path = destination.path
        var configuration = Configuration()
        configuration.label = "GraphStoreSQLite.Migration"
        configuration.foreignKeysEnabled = false
        do {
            let database = try DatabaseQueue(path: url.path, configuration: configuration)
            do {
                try database.writeWithoutTransaction { db in
                    // A failed build is deleted, never recovered: no need for a journal on disk.
                    _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = MEMORY")
                    try db.execute(sql: "PRAGMA synchronous = OFF")
                    try db.inTransaction(.exclusive) {
                        try SQLiteFormatV1.create(in: db, modelVersion: modelVersion)
                        try SQLiteFormatV1.setMetadata(.storeVersion, to: Int64(truncatingIfNeeded: snapshot.header.storeVersion), in: db)
                        // The source's field types, which tell a tool what its `json` columns
                        // hold: the file is as good as its source for writing a property list.
                        try SQLiteFormatV1.setFieldTypes(snapshot.header.fieldTypes ?? [:], version: snapshot.header.fieldTypesVersion, in: db)
                        var remaining = plans[...]
                        let numbers = snapshot.exactNumbers.byID
                        for (index, entity) in snapshot.entities.enumerated() {
                            guard let plan = remaining.first, plan.entityIndex == index else {
                                // An entity without objects has no table; it still finishes.
                                ProgressReporter(entity: entity.name, total: 0, callback: progress).finish()
                                continue
                            }
                            remaining = remaining.dropFirst()
                            try plan.write(entity.objects, numbers: numbers, in: db, path: path, progress: progress)
                        }
                        return .commit
                    }
                    _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                }
                try database.close()
            } catch {
                try? database.close()
                throw error
            }
        } catch {
            throw GraphStoreError.sqlite(error, path: path, operation: "write the migrated database")
        }
    }

    // MARK: - Private

    /// Creates the table, records its columns' kinds and inserts one row per object.
    private func write(
        _ objects: [SnapshotValue], numbers: ExactNumbers.ByID, in db: Database, path: String, progress: (@Sendable (MigrationProgress) -> Void)?
    ) throws {
        try db.execute(sql: table.createSQL)
        for (column, kind) in zip(table.columns, table.kinds) {
            try SQLiteFormatV1.recordColumn(column, kind: kind, entity: table.name, in: db)
        }
        var reporter = ProgressReporter(entity: table.name, total: objects.count, callback: progress)
        let statement = try db.makeStatement(sql: table.insertSQL)
        var values = [DatabaseValue](repeating: .null, count: table.columns.count)
        for object in objects {
            guard case .object(let fields) = object else { continue }
            let bag = numbers.isEmpty ? nil : fields[SQLiteFormatV1.idColumn].flatMap { numbers[$0] }
            for index in values.indices { values[index] = .null }
            for (key, value) in fields {
                guard let index = table.index(of: key) else { continue }
                do {
                    values[index] = try GenericColumnEncoding.encode(value, as: table.kinds[index], numbers: bag).value
                } catch let mismatch as GenericColumnEncoding.Mismatch {
                    throw GraphStoreError.codingFailed(path: path, entity: table.name, id: Self.idText(fields), reason: "\(key): \(mismatch.reason)")
                } catch {
                    throw GraphStoreError.codingFailed(path: path, entity: table.name, id: Self.idText(fields), reason: "\(key): \(error)")
                }
            }
            do {
                try statement.execute(arguments: StatementArguments(values))
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw GraphStoreError.codingFailed(path: path, entity: table.name, id: Self.idText(fields), reason: "two objects have this id")
            } catch let error as DatabaseError where error.resultCode == .SQLITE_MISMATCH {
                throw GraphStoreError.codingFailed(
                    path: path, entity: table.name, id: Self.idText(fields),
                    reason: "SQLite cannot keep this id in an INTEGER PRIMARY KEY column (\(error.message ?? "datatype mismatch"))")
            }
            reporter.advance()
        }
        reporter.finish()
    }

    /// The object's id as text, for messages.
    private static func idText(_ fields: [String: SnapshotValue]) -> String? {
        switch fields[SQLiteFormatV1.idColumn] {
        case .string(let text): text
        case .integer(let number): String(number)
        case .unsigned(let number): String(number)
        case let value?: value.jsonObject as? String ?? GenericColumnEncoding.describe(value)
        case nil: nil
        }
    }
}
