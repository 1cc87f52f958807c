import Foundation
import GRDB
import GraphStore

/// One write of the SQLite store: the rows a run of consecutive commits changed, encoded,
/// with the tables and columns they need, ready to run in one transaction.
///
/// The rows come from the newest of the commits: every object any of them inserted or
/// updated is upserted with its value in that version, every object absent from it is
/// deleted. That leaves the tables exactly as applying each commit's changes in order would,
/// with each row written once.
struct SQLiteWritePlan {
    /// The writes to one entity table.
    struct TableWrite {
        /// The table after this write.
        var table: TableLayout
        /// Whether the table must be created.
        var isNew: Bool
        /// The first column this write adds.
        var firstNewColumn: Int
        /// Full rows, in ``TableLayout/columns`` order.
        var upserts: [[DatabaseValue]] = []
        /// Ids of rows to delete.
        var deletes: [DatabaseValue] = []
        /// Whether every row goes (the entity has no object left): one statement instead of
        /// one per id.
        var deletesEverything = false
        /// Whether the table is dropped and created again with ``table``'s columns, and
        /// ``rebuildRows`` written into it, before the upserts and deletes: a field whose values
        /// came to encode as another kind than its column's.
        var replacesTable = false
        /// The rows the table held that fit ``table``'s columns: written into the table created
        /// again before the indexes and triggers other programs made on it are made again,
        /// so that this write's own upserts and deletes fire those triggers as any write's do
        /// (a changed row whose old value does not fit the new columns is inserted instead).
        var rebuildRows: [[DatabaseValue]] = []
    }

    private(set) var writes: [TableWrite] = []
    /// The store version the write makes durable.
    let storeVersion: UInt64
    /// The model version to record, when it differs from the file's.
    let modelVersion: String?
    /// The field types to record, when they differ from the file's (see ``SQLiteFieldTypes``).
    private(set) var fieldTypes: [String: [String: String]]?
    /// The approximate number of bytes of row data written.
    private(set) var byteCount = 0
    /// The number of rows upserted or deleted.
    private(set) var rowCount = 0
    /// The store's file, for errors.
    private let path: String

    /// Encodes the objects `changes` touched, as they are in `version`, against `layout`;
    /// `written` is the version the database holds now (its rows' ids are spelled as its
    /// objects' ids are).
    ///
    /// An id equal in Swift to the one a row holds may be spelled with other bytes ("é"
    /// precomposed or not), which SQLite compares byte by byte: a deletion deletes the row by
    /// the spelling `written` holds, and an update that changes the spelling deletes the old
    /// row. (An id whose own encoding is not stable, holding a `Dictionary` or a `Set`, is not
    /// helped: its re-encoding need not be the row's bytes.)
    ///
    /// - Returns: the plan, and the layout the file will have after it.
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` naming the object that
    ///   cannot be stored.
    /// - Complexity: O(changed objects × their size).
    static func make(
        version: GraphVersion, changes: [GraphChange], written: GraphVersion?, schema: Schema, layout: StoreLayout, modelVersion: String,
        path: String
    ) throws -> (SQLiteWritePlan, StoreLayout) {
        try make(
            version: version, keys: changedKeys(changes, schema: schema, version: version), written: written, schema: schema, layout: layout,
            modelVersion: modelVersion, path: path)
    }

    /// Encodes every object of `version` into new tables: what a store migrated to a new model
    /// writes after dropping its old tables. An entity without objects gets no table, as in a
    /// store that never held one.
    ///
    /// - Returns: the plan, and the layout the file will have after it.
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` naming the object that
    ///   cannot be stored.
    /// - Complexity: O(objects × their size).
    static func everything(
        in version: GraphVersion, schema: Schema, previousModelVersion: String, modelVersion: String, path: String
    ) throws -> (SQLiteWritePlan, StoreLayout) {
        let keys = version.tables.indices.compactMap { index -> (Int, [ObjectKey])? in
            version.tables[index].isEmpty ? nil : (index, Array(version.tables[index].keys))
        }
        return try make(
            version: version, keys: keys, written: nil, schema: schema, layout: StoreLayout(modelVersion: previousModelVersion), modelVersion: modelVersion,
            path: path)
    }

    /// Encodes the objects `keys` name (per entity index, in schema order), as they are in
    /// `version`, against `layout`.
    private static func make(
        version: GraphVersion, keys changedKeys: [(Int, [ObjectKey])], written: GraphVersion?, schema: Schema, layout: StoreLayout,
        modelVersion: String, path: String
    ) throws -> (SQLiteWritePlan, StoreLayout) {
        var plan = SQLiteWritePlan(storeVersion: version.number, modelVersion: layout.modelVersion == modelVersion ? nil : modelVersion, path: path)
        var newLayout = layout
        newLayout.modelVersion = modelVersion
        let json = SQLiteJSON.makeEncoder()
        for (entityIndex, keys) in changedKeys {
            let entity = schema.entities[entityIndex]
            let existing = layout.tables[entity.name]
            var table = existing ?? TableLayout(name: entity.name)
            let firstNewColumn = table.columns.count
            if version.tables[entityIndex].isEmpty {
                // No object of the entity is left (a delete-all): its ids were not listed.
                guard let existing else { continue }
                plan.writes.append(TableWrite(table: existing, isNew: false, firstNewColumn: firstNewColumn, deletesEverything: true))
                continue
            }
            /// The rows of the changed objects and the ids of the deleted ones, against
            /// `table` (which gains the new columns); `nil` when a value's kind is not its column's.
            func changes(against table: inout TableLayout) throws -> (rows: [[EncodedField]], deletes: [DatabaseValue])? {
                var rows: [[EncodedField]] = []
                var deletes: [DatabaseValue] = []
                for key in keys {
                    if let stored = version.tables[entityIndex][key] {
                        do {
                            let fields = try RowEncoder.encode(stored.value, existingKinds: table.kindByName, json: json)
                            guard try register(fields, in: &table) else { return nil }
                            rows.append(fields)
                            // The row the database holds for this id, when spelled otherwise, goes.
                            if existing != nil, let old = written?.tables[entityIndex][key], !spellsUniquely(old.value.id),
                               let new = fields.first(where: { $0.name == SQLiteFormatV1.idColumn })?.value.value {
                                let stored = try idValue(old.value.id, table: table, json: json)
                                if !sameKey(stored, new) { deletes.append(stored) }
                            }
                        } catch {
                            throw GraphStoreError.sqliteCoding(error, path: path, entity: entity.name, id: key.description)
                        }
                    } else if existing != nil {
                        do {
                            // As the row spells it: the deleting context may spell it otherwise.
                            deletes.append(try idValue(written?.tables[entityIndex][key]?.value.id ?? key.base, table: table, json: json))
                        } catch {
                            throw GraphStoreError.sqliteCoding(error, path: path, entity: entity.name, id: key.description)
                        }
                    }
                }
                return (rows, deletes)
            }
            var write: TableWrite
            var rows: [[EncodedField]]
            if let found = try changes(against: &table) {
                rows = found.rows
                guard !rows.isEmpty || !found.deletes.isEmpty else { continue }
                write = TableWrite(table: table, isNew: existing == nil, firstNewColumn: existing == nil ? 0 : firstNewColumn, deletes: found.deletes)
            } else {
                // A value of another kind than its column's: the table is written again, each
                // column with the kind the objects now write (JSON where they write several).
                (table, rows) = try rebuilt(entity: entity, rows: version.tables[entityIndex], existing: existing ?? table, json: json, path: path)
                write = TableWrite(table: table, isNew: true, firstNewColumn: 0, replacesTable: existing != nil)
                if existing != nil, let held = written?.tables[entityIndex] {
                    // First the rows the table holds, where they fit the new columns (every
                    // unchanged one does; a changed object's old value may not); then this
                    // write's changes, so that they fire other programs' triggers as any
                    // write's do.
                    let changed = Set(keys)
                    for (key, stored) in held {
                        var probe = table
                        let fields: [EncodedField]
                        do {
                            fields = try RowEncoder.encode(stored.value, existingKinds: table.kindByName, json: json)
                            guard try register(fields, in: &probe), probe.columns == table.columns else {
                                if changed.contains(key) { continue }
                                throw GraphStoreError.codingFailed(
                                    path: path, entity: entity.name, id: key.description,
                                    reason: "the stored object does not fit the columns its unchanged value made")
                            }
                        } catch let error as GraphStoreError {
                            throw error
                        } catch {
                            if changed.contains(key) { continue }
                            throw GraphStoreError.sqliteCoding(error, path: path, entity: entity.name, id: key.description)
                        }
                        write.rebuildRows.append(values(of: fields, in: table, byteCount: &plan.byteCount))
                    }
                    plan.rowCount += write.rebuildRows.count
                    guard let found = try changes(against: &table), table.columns == write.table.columns else {
                        throw GraphStoreError.codingFailed(
                            path: path, entity: entity.name, id: nil,
                            reason: "its objects' fields encode as other kinds on a second encoding than on the first")
                    }
                    rows = found.rows
                    write.deletes = found.deletes
                }
            }
            write.upserts = rows.map { values(of: $0, in: table, byteCount: &plan.byteCount) }
            plan.rowCount += rows.count + write.deletes.count
            plan.writes.append(write)
            newLayout.tables[entity.name] = table
            // The types the written objects hold, for tools that read the file without the
            // app's types (a sample, as a snapshot's header has).
            SQLiteFieldTypes.add(
                keys.lazy.compactMap { version.tables[entityIndex][$0]?.value }, of: entity.name, to: &newLayout.fieldTypes)
        }
        if newLayout.fieldTypes != layout.fieldTypes || layout.fieldTypesVersion != SQLiteFieldTypes.version {
            plan.fieldTypes = newLayout.fieldTypes
            newLayout.fieldTypesVersion = SQLiteFieldTypes.version
        }
        return (plan, newLayout)
    }

    /// Runs the plan in `db`, inside the caller's transaction.
    ///
    /// A table written again keeps the indexes and triggers other programs made on it: they are
    /// made again after the rows it held, before this write's own changes (so a trigger fires
    /// for the changes, as for any write, and not for rows that only moved).
    ///
    /// - Throws: SQLite's errors; ``GraphStoreError/codingFailed(path:entity:id:reason:)``
    ///   naming an index or trigger that cannot be made again on a table written again.
    func execute(in db: Database) throws {
        for write in writes {
            let table = write.table
            var companions: TableCompanions?
            if write.replacesTable {
                companions = try TableCompanions.read(of: table.name, in: db)
                try db.execute(sql: table.dropSQL)
                try SQLiteFormatV1.forgetColumns(of: table.name, in: db)
            }
            if write.isNew {
                try db.execute(sql: table.createSQL)
            } else {
                for index in write.firstNewColumn..<table.columns.count {
                    try db.execute(sql: table.addColumnSQL(at: index))
                }
            }
            for index in write.firstNewColumn..<table.columns.count {
                try SQLiteFormatV1.recordColumn(table.columns[index], kind: table.kinds[index], entity: table.name, in: db)
            }
            if !write.rebuildRows.isEmpty {
                let statement = try db.cachedStatement(sql: table.insertSQL)
                for values in write.rebuildRows {
                    try statement.execute(arguments: StatementArguments(values))
                }
            }
            if write.replacesTable {
                try companions?.makeAgain(in: db, path: path)
            }
            if !write.upserts.isEmpty {
                let statement = try db.cachedStatement(sql: table.upsertSQL)
                for values in write.upserts {
                    try statement.execute(arguments: StatementArguments(values))
                }
            }
            if write.deletesEverything {
                try db.execute(sql: table.deleteAllSQL)
            }
            if !write.deletes.isEmpty {
                let statement = try db.cachedStatement(sql: table.deleteSQL)
                for id in write.deletes {
                    try statement.execute(arguments: [id])
                }
            }
        }
        try SQLiteFormatV1.setMetadata(.storeVersion, to: Int64(truncatingIfNeeded: storeVersion), in: db)
        if let modelVersion {
            try SQLiteFormatV1.setMetadata(.modelVersion, to: modelVersion, in: db)
        }
        if let fieldTypes {
            try SQLiteFormatV1.setFieldTypes(fieldTypes, version: SQLiteFieldTypes.version, in: db)
        }
    }

    // MARK: - Private

    private init(storeVersion: UInt64, modelVersion: String?, path: String) {
        self.storeVersion = storeVersion
        self.modelVersion = modelVersion
        self.path = path
    }

    /// The ids every change touched, per entity index (in schema order), each once, in the
    /// order first touched; none for an entity `version` holds no object of (all its rows go).
    private static func changedKeys(_ changes: [GraphChange], schema: Schema, version: GraphVersion) -> [(Int, [ObjectKey])] {
        var ordered: [Int: [ObjectKey]] = [:]
        var seen: [Int: Set<ObjectKey>] = [:]
        for change in changes {
            for name in change.entityNames {
                guard let index = schema.index(named: name) else { continue }
                if version.tables[index].isEmpty {
                    ordered[index] = []
                    continue
                }
                for key in keys(of: schema.entities[index].type, in: change) where seen[index, default: []].insert(key).inserted {
                    ordered[index, default: []].append(key)
                }
            }
        }
        return ordered.sorted { $0.key < $1.key }
    }

    private static func keys<E: Entity>(of type: E.Type, in change: GraphChange) -> [ObjectKey] {
        (change.insertedIDs(type) + change.updatedIDs(type) + change.deletedIDs(type)).map { ObjectKey($0) }
    }

    /// Checks the kinds of a row's fields against the table and adds the columns it brings;
    /// `false` when a field's kind is not its column's (the table is then left as it was).
    private static func register(_ fields: [EncodedField], in table: inout TableLayout) throws -> Bool {
        var hasID = false
        var newColumns: [String: String] = [:]
        for field in fields {
            guard let kind = field.value.kind else { continue }
            if field.name == SQLiteFormatV1.idColumn { hasID = true }
            if let current = table.kindByName[field.name] {
                if current != kind { return false }
            } else if let other = table.column(clashingWith: field.name) ?? newColumns.updateValue(field.name, forKey: TableLayout.folded(field.name)) {
                throw EncodingError.invalidValue(field.name, EncodingError.Context(codingPath: [], debugDescription: TableLayout.caseClash(other, field.name)))
            }
        }
        for field in fields {
            guard let kind = field.value.kind, table.kindByName[field.name] == nil else { continue }
            table.append(field.name, kind: kind)
        }
        guard hasID else {
            throw EncodingError.invalidValue(fields.map(\.name), EncodingError.Context(
                codingPath: [],
                debugDescription: "it encodes no \"\(SQLiteFormatV1.idColumn)\" value; the SQLite store keys every row by its top-level \"\(SQLiteFormatV1.idColumn)\""))
        }
        return true
    }

    /// The table of `entity` written again whole: its columns (those of `existing`, in their
    /// order, then any new ones) and the rows of the objects of `rows`.
    ///
    /// Taken when an object writes a field as another kind than its column holds. The open
    /// check refuses a type whose field changed kind while the table holds values of the old
    /// one (see ``SQLiteColumnKindCheck``), so this is a table whose column has no value left
    /// (every row that held one was deleted), or a field whose values encode as different
    /// kinds (an enum with an `Int` case and a `String` case). Each column takes the one kind
    /// its objects now write; a column whose objects write several kinds, or that already held
    /// JSON, holds JSON (any kind fits it, and it reads back through the field's own
    /// `Codable`); a column no object writes a value to keeps its kind.
    ///
    /// - Throws: `EncodingError` for an object that cannot be stored, as the row encoder does.
    /// - Complexity: O(objects × their size), twice.
    private static func rebuilt<Objects: Collection>(
        entity: EntityDescription, rows objects: Objects, existing: TableLayout, json: SQLiteJSON.Writer, path: String
    ) throws -> (TableLayout, [[EncodedField]]) where Objects.Element == (key: ObjectKey, value: StoredObject) {
        var order = existing.columns
        var kinds: [String: ColumnKind] = [:]
        for (name, kind) in zip(existing.columns, existing.kinds) where kind == .json { kinds[name] = .json }
        var written: [String: ColumnKind] = [:]
        for (key, stored) in objects {
            let fields: [EncodedField]
            do {
                fields = try RowEncoder.encode(stored.value, existingKinds: kinds, json: json)
            } catch {
                throw GraphStoreError.sqliteCoding(error, path: path, entity: entity.name, id: key.description)
            }
            for field in fields {
                guard let kind = field.value.kind else { continue }
                // A new column goes after the existing ones, in the order first written.
                if existing.kindByName[field.name] == nil, written[field.name] == nil { order.append(field.name) }
                written[field.name] = written[field.name].map { $0 == kind ? kind : .json } ?? kind
            }
        }
        var table = TableLayout(name: existing.name)
        for name in order {
            let kind = kinds[name] ?? written[name] ?? existing.kindByName[name]
            guard let kind else { continue }
            if let other = table.column(clashingWith: name) {
                throw GraphStoreError.codingFailed(path: path, entity: entity.name, id: nil, reason: TableLayout.caseClash(other, name))
            }
            table.append(name, kind: kind)
        }
        var rows: [[EncodedField]] = []
        rows.reserveCapacity(objects.count)
        for (key, stored) in objects {
            do {
                let fields = try RowEncoder.encode(stored.value, existingKinds: table.kindByName, json: json)
                guard try register(fields, in: &table) else {
                    throw EncodingError.invalidValue(key.description, EncodingError.Context(
                        codingPath: [], debugDescription: "its fields encode as other kinds on a second encoding than on the first"))
                }
                rows.append(fields)
            } catch {
                throw GraphStoreError.sqliteCoding(error, path: path, entity: entity.name, id: key.description)
            }
        }
        return (table, rows)
    }

    /// A row's values in `table`'s column order (NULL for a column it has no value for),
    /// adding their size to `byteCount`.
    private static func values(of fields: [EncodedField], in table: TableLayout, byteCount: inout Int) -> [DatabaseValue] {
        var values = Array(repeating: DatabaseValue.null, count: table.columns.count)
        for field in fields {
            guard let index = table.index(of: field.name) else { continue }
            values[index] = field.value.value
            byteCount += field.value.byteCount
        }
        return values
    }

    /// Whether ids equal in Swift to `id` always encode to the same bytes: integers, UUIDs,
    /// dates and doubles do (SQLite compares numbers by value, so `-0.0` is `0.0` there too);
    /// strings do not ("é" precomposed or not), nor may types holding strings or dictionaries.
    private static func spellsUniquely(_ id: Any) -> Bool {
        id is any FixedWidthInteger || id is UUID || id is Date || id is Double || id is Float
    }

    /// Whether two column values name the same row, as SQLite compares a primary key: text
    /// and blobs byte by byte (`DatabaseValue`'s own `==` compares strings as Swift does, by
    /// canonical equivalence), numbers by value.
    static func sameKey(_ a: DatabaseValue, _ b: DatabaseValue) -> Bool {
        switch (a.storage, b.storage) {
        case let (.string(x), .string(y)): x.utf8.elementsEqual(y.utf8)
        case let (.blob(x), .blob(y)): x == y
        case let (.int64(x), .int64(y)): x == y
        case let (.double(x), .double(y)): x == y
        case let (.int64(x), .double(y)), let (.double(y), .int64(x)): Double(exactly: x) == y
        case (.null, .null): true
        default: false
        }
    }

    /// The stored form of an object's id: what its row's `id` column holds.
    static func idValue(_ base: Any, table: TableLayout, json: SQLiteJSON.Writer) throws -> DatabaseValue {
        guard let id = base as? any Encodable else {
            throw EncodingError.invalidValue("\(base)", EncodingError.Context(codingPath: [], debugDescription: "its id is not Encodable"))
        }
        var column = try ColumnEncoding.encode(id, codingPath: [], json: json)
        if table.kindByName[SQLiteFormatV1.idColumn] == .json, column.kind != .json {
            column = try ColumnEncoding.jsonValue(id, json: json)
        }
        return column.value
    }
}
