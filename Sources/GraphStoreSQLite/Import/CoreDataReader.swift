import Foundation
import GRDB
import GraphStore

/// Reads a Core Data store inside one read transaction: the model, a plan per entity, the ids
/// references are translated to, the join tables, then every entity's rows.
struct CoreDataReader {
    let db: Database
    let path: String
    /// The caller's options, with ``CoreDataImportOptions/model`` set to the store's model
    /// cache when the caller gave no model.
    private(set) var options: CoreDataImportOptions
    let progress: (@Sendable (MigrationProgress) -> Void)?

    private var model = CoreDataModel()
    /// Per entity table whose ids are not all `Z_PK`: `Z_PK` → id, for every row.
    private var translations: [String: [Int64: SnapshotValue]] = [:]
    /// Per entity table whose ids are `Z_PK`, the `Z_PK` of every row: a reference to any other
    /// is dangling.
    private var primaryKeys: [String: Set<Int64>] = [:]
    /// References left out because their target does not exist, per "Entity.field".
    private var dangling: [String: Int] = [:]
    /// The first dangling reference of each "Entity.field", as the warning names it.
    private var firstDangling: [String: String] = [:]
    private var warnings: [String] = []
    /// NULLs in non-optional attributes given the model's default, per "Entity.field".
    private var defaulted: [String: Int] = [:]
    /// Per `Entity.attribute`, the NULLs of a non-optional attribute without a default (a
    /// UUID's): left out, so the app's type refuses those objects until they get a value.
    private var leftOut: [String: Int] = [:]
    /// External-storage values whose file is not beside the store, per "Entity.field".
    private var missingExternal: [String: Int] = [:]

    init(db: Database, path: String, options: CoreDataImportOptions, progress: (@Sendable (MigrationProgress) -> Void)?) {
        self.db = db
        self.path = path
        self.options = options
        self.progress = progress
    }

    mutating func read() throws -> (GenericSnapshot, CoreDataImportReport) {
        let tables = try ForeignDatabase.tables(in: db)
        model = try CoreDataModel.read(db, tables: tables, path: path, options: options)
        if options.model == nil, options.usesModelCache { options.model = try CoreDataModelCache.read(db, tables: tables, path: path) }
        if let description = options.model { try checkEntities(against: description) }
        var entityTables: [String: CoreDataTable] = [:]
        for name in Set(model.entities.values.map(\.table)).sorted() {
            entityTables[name] = try CoreDataTable(name, db: db, path: path)
        }
        var joins: [CoreDataJoinTable] = []
        for (name, reason) in model.skippedTables.sorted(by: { $0.key < $1.key }) where reason == .notInModel {
            guard let join = CoreDataJoinTable(name, columns: try db.columns(in: name).map(\.name), model: model) else { continue }
            joins.append(join)
            model.skippedTables[name] = nil
        }
        let counts = try countRows(in: entityTables)

        var planner = CoreDataPlanner(db: db, path: path, model: model, options: options)
        var plans: [CoreDataEntityPlan] = []
        for entity in model.entities.values.sorted(by: { $0.snapshotName < $1.snapshotName }) {
            plans.append(try planner.plan(entity, table: entityTables[entity.table]!, joins: joins))
        }
        planner.warnAboutUnusedOptions()
        warnings = planner.warnings
        if options.model != nil { warnings += Self.storeDataOutsideTheModel(plans: plans, tables: entityTables, joins: joins) }
        try readIDs(plans)
        for (name, table) in entityTables where translations[name] == nil { primaryKeys[name] = try readPrimaryKeys(of: table) }
        var links: [String: [Int64: [Int64]]] = [:]
        // Only the links some plan reads: a join table the model does not use is warned about,
        // not read.
        let usedJoins = Set(plans.flatMap { $0.toMany.map(\.join.name) })
        for join in joins where usedJoins.contains(join.name) { links[join.name] = try readLinks(join) }
        for plan in plans {
            for ordered in plan.orderedToMany where links[ordered.key] == nil { links[ordered.key] = try readLinks(ordered, of: plan) }
        }

        var entities: [(name: String, objects: [SnapshotValue])] = []
        var fieldTypes: [String: [String: String]] = [:]
        var report = CoreDataImportReport(skippedEntities: model.skippedEntities, storeUUID: model.storeUUID)
        report.model = options.model
        for plan in plans {
            let (objects, types) = try readObjects(plan, total: counts[plan.entity.number] ?? 0, links: links)
            entities.append((plan.entity.snapshotName, objects))
            if !types.isEmpty { fieldTypes[plan.entity.snapshotName] = types }
            report.entities.append(importedEntity(plan, objects: objects.count))
        }
        report.skippedTables = model.skippedTables.map { SkippedTable(name: $0.key, reason: $0.value) }.sorted { $0.name < $1.name }
        report.warnings = warnings + dangling.keys.sorted().map {
            "\($0): \(dangling[$0]!) reference(s) to objects that do not exist were left out (the first: \(firstDangling[$0]!))"
        }
            + defaulted.keys.sorted().map { "\($0): \(defaulted[$0]!) NULL value(s) of a non-optional attribute took the model's default" }
            + leftOut.keys.sorted().map { "\($0): \(leftOut[$0]!) NULL value(s) of a non-optional attribute with no default were left out; give them a value before the app opens the store" }
            + missingExternal.keys.sorted().map { "\($0): \(missingExternal[$0]!) externally stored value(s) were kept as Core Data's reference: their files are not in the store's support folder beside it" }
        let header = SnapshotHeaderV1(
            modelVersion: options.modelVersion, savedAt: Date(), storeVersion: 0,
            counts: Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.objects.count) }),
            fieldTypes: fieldTypes.isEmpty ? nil : fieldTypes)
        return (GenericSnapshot(header: header, entities: entities), report)
    }

    /// The snapshot value of a stored value under `conversion`; `nil` for NULL.
    static func convert(_ stored: DatabaseValue, _ conversion: CoreDataImportOptions.ValueConversion) -> SnapshotValue? {
        switch (conversion, stored.storage) {
        case (_, .null): nil
        case (.date, .int64(let seconds)): .double(Double(seconds))
        case (.date, .double(let seconds)): .double(seconds)
        case (.bool, .int64(let number)) where number == 0 || number == 1: .bool(number == 1)
        case (.bool, .double(let number)) where number == 0 || number == 1: .bool(number == 1)
        case (.uuid, .blob(let bytes)) where bytes.count == 16: .string(UUID(sixteenBytes: bytes).uuidString)
        default: SnapshotValue(stored: stored)
        }
    }

    // MARK: - Private

    /// Throws when the model declares an entity the store does not have.
    private func checkEntities(against description: CoreDataModelDescription) throws {
        let stored = Set(model.entities.values.map(\.name))
        for entity in description.entities where !stored.contains(entity.name) {
            throw GraphStoreError.codingFailed(
                path: description.path, entity: entity.name, id: nil,
                reason: "the model declares the entity \(entity.name), which the store \(path) does not have (no Z_PRIMARYKEY row or no table); \(description.mismatchAdvice)")
        }
    }

    /// Owner `Z_PK` → target `Z_PK`s of an ordered one-to-many relationship, in their order.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` for a target row whose
    ///   inverse column holds a value other than an integer `Z_PK` (or NULL).
    private func readLinks(_ ordered: CoreDataEntityPlan.OrderedToMany, of plan: CoreDataEntityPlan) throws -> [Int64: [Int64]] {
        let owner = ordered.inverseColumn.quotedDatabaseIdentifier
        return try links(
            sql: "SELECT \(owner), Z_PK FROM \(ordered.targetTable.quotedDatabaseIdentifier) WHERE \(owner) IS NOT NULL ORDER BY \(owner), \(ordered.orderColumn.quotedDatabaseIdentifier), Z_PK"
        ) { ownerValue, targetValue in
            .codingFailed(
                path: path, entity: plan.entity.snapshotName, id: nil,
                reason: "the row Z_PK \(targetValue.importText) of \(ordered.targetTable) holds \(CoreDataIDIdentity.describe(ownerValue)) in \(ordered.inverseColumn), the inverse of the ordered relationship \(ordered.name), not the integer Z_PK of a \(plan.entity.name): the link cannot be followed, and leaving it out would lose it; fix the row in the store")
        }
    }

    /// Owner `Z_PK` → target `Z_PK`s from the (owner, target) rows `sql` selects, in their
    /// order. A row with a NULL key links nothing and is skipped.
    ///
    /// - Parameter refusal: The error for a row whose keys are not both integers (or NULL),
    ///   given the owner and target values.
    private func links(sql: String, refusal: (DatabaseValue, DatabaseValue) -> GraphStoreError) throws -> [Int64: [Int64]] {
        let rows = try Row.fetchCursor(db, sql: sql)
        var links: [Int64: [Int64]] = [:]
        while let row = try rows.next() {
            let ownerValue: DatabaseValue = row[0]
            let targetValue: DatabaseValue = row[1]
            guard case .int64(let ownerPK) = ownerValue.storage, case .int64(let targetPK) = targetValue.storage else {
                if ownerValue.isNull || targetValue.isNull { continue }
                throw refusal(ownerValue, targetValue)
            }
            links[ownerPK, default: []].append(targetPK)
        }
        return links
    }

    /// The bytes of an attribute that allows external storage: Core Data prefixes the value
    /// with 1 when the bytes follow inline, 2 when a file name follows, the file being in
    /// `.<store name>_SUPPORT/_EXTERNAL_DATA/` beside the store. A value without a marker, or
    /// whose file is not there, is kept as stored (and warned about).
    private mutating func externalValue(_ bytes: Data, plan: CoreDataEntityPlan, field: String) -> SnapshotValue {
        guard let marker = bytes.first else { return .data(bytes) }
        switch marker {
        case 1:
            return .data(Data(bytes.dropFirst()))
        case 2:
            let name = String(decoding: bytes.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
            let store = URL(fileURLWithPath: path)
            let file = store.deletingLastPathComponent()
                .appendingPathComponent(".\(store.deletingPathExtension().lastPathComponent)_SUPPORT")
                .appendingPathComponent("_EXTERNAL_DATA").appendingPathComponent(name)
            if !name.contains("/"), let data = try? Data(contentsOf: file) { return .data(data) }
            missingExternal["\(plan.entity.snapshotName).\(field)", default: 0] += 1
            return .data(bytes)
        default:
            return .data(bytes)
        }
    }

    /// The number of rows of each entity, by entity number.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` for a row whose `Z_ENT`
    ///   names no entity of its table.
    private func countRows(in tables: [String: CoreDataTable]) throws -> [Int64: Int] {
        var counts: [Int64: Int] = [:]
        for (name, table) in tables.sorted(by: { $0.key < $1.key }) {
            let entityColumn = table.columns[table.entityNumber].name.quotedDatabaseIdentifier
            for row in try Row.fetchAll(db, sql: "SELECT \(entityColumn), count(*) FROM \(name.quotedDatabaseIdentifier) GROUP BY \(entityColumn)") {
                let numberValue: DatabaseValue = row[0]
                let count: Int = row[1]
                guard case .int64(let number) = numberValue.storage, model.entities[number]?.table == name else {
                    throw GraphStoreError.damagedFile(
                        path: path, offset: nil,
                        reason: "the Core Data table \(name) has \(count) row(s) whose Z_ENT is \(numberValue.importText), which Z_PRIMARYKEY does not list as an entity of that table")
                }
                counts[number] = count
            }
        }
        return counts
    }

    /// Fills ``translations`` for the tables where an entity's ids come from a column, checking
    /// that those ids are present and unique.
    private mutating func readIDs(_ plans: [CoreDataEntityPlan]) throws {
        for plan in plans where plan.idColumn != nil && translations[plan.entity.table] == nil {
            var ids: [Int64: SnapshotValue] = [:]
            for other in plans where other.entity.table == plan.entity.table {
                try readIDs(of: other, into: &ids)
            }
            translations[plan.entity.table] = ids
        }
    }

    /// Reads the ids of `plan`'s rows into `ids` (`Z_PK` → id).
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` naming the row
    ///   (`Z_PK`) and the column for an id that is NULL; for two rows whose ids are one id to
    ///   the app (see ``CoreDataIDIdentity``), however SQLite stores them; and for ids of kinds
    ///   no one Swift type reads (a number in one row and text in another).
    private func readIDs(of plan: CoreDataEntityPlan, into ids: inout [Int64: SnapshotValue]) throws {
        let table = plan.table
        let primaryKey = table.columns[table.primaryKey].name.quotedDatabaseIdentifier
        let entityColumn = table.columns[table.entityNumber].name.quotedDatabaseIdentifier
        let idColumn = plan.idColumn.map { table.columns[$0].name.quotedDatabaseIdentifier } ?? primaryKey
        let rows = try Row.fetchCursor(
            db, sql: "SELECT \(primaryKey), \(idColumn) FROM \(table.name.quotedDatabaseIdentifier) WHERE \(entityColumn) = ?", arguments: [plan.entity.number])
        let column = plan.idColumn.map { table.columns[$0].name } ?? table.columns[table.primaryKey].name
        // The way out: another column, or `Z_PK`, as the ids; a column that would otherwise
        // be the field `id` then needs a field name of its own, or it would collide with them.
        // The table's root entity: an entry for it applies to every entity sharing the table,
        // so that one table's ids stay of one kind (a sub-entity's alone would mix them).
        let name = plan.entity.lineage.last.flatMap { model.entities[$0]?.name } ?? plan.entity.name
        let keptAsField = plan.fields.contains { $0.column == plan.idColumn }
        let advice = keptAsField
            ? "choose another column, or Z_PK, in idColumns ([\"\(name)\": \"Z_PK\"]; graphstore migrate: --id-column \(name)=Z_PK)"
            : "choose another column in idColumns, or import the ids from Z_PK and keep \(column) under a name of its own: idColumns [\"\(name)\": \"Z_PK\"] with attributeNames [\"\(name)\": [\"\(column)\": \"importedID\"]] (graphstore migrate: --id-column \(name)=Z_PK --attribute-name \(name).\(column)=importedID)"
        func refuse(_ pk: Int64, _ reason: String) -> GraphStoreError {
            .codingFailed(path: path, entity: plan.entity.snapshotName, id: "Z_PK \(pk)", reason: reason + "; " + advice)
        }
        var tracker = CoreDataIDIdentity.Tracker<Int64>(type: plan.idType, conversion: plan.idConversion)
        while let row = try rows.next() {
            let primaryKeyValue: DatabaseValue = row[0]
            guard case .int64(let pk) = primaryKeyValue.storage else { throw nonIntegerPrimaryKey(primaryKeyValue, plan) }
            let idValue = try row.importedValue(
                atIndex: 1, path: path, entity: plan.entity.snapshotName, id: "Z_PK \(pk)", column: "the id column", row: "Z_PK \(pk)")
            guard var id = Self.convert(idValue, plan.idConversion) else {
                throw refuse(pk, "its id column \(column) is NULL")
            }
            if let type = plan.idType {
                guard let fitted = CoreDataValueFit.fitted(id, stored: idValue, type: type) else {
                    throw CoreDataValueFit.refusal(
                        "its id column \(column) (\(type.rawValue) in the model)", stored: idValue, type: type, path: path, entity: plan.entity.snapshotName, pk: pk)
                }
                id = fitted
            }
            // One Swift type holds an entity's ids: none reads a number and text alike, so the
            // app could open neither the objects nor the references to them.
            switch tracker.add(id, stored: idValue, row: pk) {
            case .kinds(let first, let kind)?:
                throw refuse(pk, "Z_PK \(first.row) holds \(CoreDataIDIdentity.describe(first.stored)) and Z_PK \(pk) \(CoreDataIDIdentity.describe(idValue)) in the id column \(column): ids of one entity are of one Swift type, which does not read both \(first.kind.rawValue) and \(kind.rawValue)")
            case .sameID(let other, identical: false)?:
                throw refuse(pk, "Z_PK \(other.row) holds \(CoreDataIDIdentity.describe(other.stored)) and Z_PK \(pk) \(CoreDataIDIdentity.describe(idValue)) in \(column): different in SQLite, but \(tracker.sameness(of: id)), so they have the same id to the app, which would take the two objects, and the references to them, for one")
            case .sameID(let other, identical: true)?:
                throw refuse(pk, "Z_PK \(other.row) and \(pk) have the same id \(id.jsonObject) in \(column)")
            case nil:
                break
            }
            ids[pk] = id
        }
    }

    /// The integer `Z_PK`s of `table`'s rows (a row whose key is not an integer is refused when
    /// its objects are read).
    private func readPrimaryKeys(of table: CoreDataTable) throws -> Set<Int64> {
        let primaryKey = table.columns[table.primaryKey].name.quotedDatabaseIdentifier
        let rows = try DatabaseValue.fetchCursor(db, sql: "SELECT \(primaryKey) FROM \(table.name.quotedDatabaseIdentifier)")
        var keys = Set<Int64>()
        while let value = try rows.next() {
            if case .int64(let pk) = value.storage { keys.insert(pk) }
        }
        return keys
    }

    /// Owner `Z_PK` → target `Z_PK`s, in ascending order.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` for a join row with a
    ///   key other than an integer `Z_PK` (or NULL).
    private func readLinks(_ join: CoreDataJoinTable) throws -> [Int64: [Int64]] {
        let owner = join.ownerColumn.quotedDatabaseIdentifier
        let target = join.targetColumn.quotedDatabaseIdentifier
        let order = join.orderColumn.map { "\($0.quotedDatabaseIdentifier), " } ?? ""
        return try links(sql: "SELECT \(owner), \(target) FROM \(join.name.quotedDatabaseIdentifier) ORDER BY \(owner), \(order)\(target)") { ownerValue, targetValue in
            let (column, value) = ownerValue.storage.isInteger ? (join.targetColumn, targetValue) : (join.ownerColumn, ownerValue)
            return .codingFailed(
                path: path, entity: model.entities[join.owner]?.snapshotName ?? join.name,
                id: ownerValue.storage.isInteger ? "Z_PK \(ownerValue.importText)" : nil,
                reason: "the join table \(join.name) has a row (\(CoreDataIDIdentity.describe(ownerValue)), \(CoreDataIDIdentity.describe(targetValue))) whose \(column) holds \(CoreDataIDIdentity.describe(value)), not an integer Z_PK: the link cannot be followed, and leaving it out would lose it; fix the row in the store")
        }
    }

    private mutating func readObjects(_ plan: CoreDataEntityPlan, total: Int, links: [String: [Int64: [Int64]]]) throws -> ([SnapshotValue], [String: String]) {
        let table = plan.table
        let columns = table.columns.map(\.name.quotedDatabaseIdentifier).joined(separator: ", ")
        let entityColumn = table.columns[table.entityNumber].name.quotedDatabaseIdentifier
        let primaryKey = table.columns[table.primaryKey].name.quotedDatabaseIdentifier
        var reporter = ProgressReporter(entity: plan.entity.snapshotName, total: total, callback: progress)
        var objects: [SnapshotValue] = []
        objects.reserveCapacity(total)
        var types: [String: String] = [:]
        // Decimals and URIs read as numbers and strings: the header names them, so that a
        // property list holds them as `Decimal` and `URL` encode them (dictionaries) and the
        // app opens it. A decimal is known by the model, or without one by the column Core
        // Data declares `DECIMAL`; a URI only by the model (its column is `VARCHAR`).
        let marked: [(field: Int, type: String)] = plan.fields.indices.compactMap { index in
            let field = plan.fields[index]
            guard case .attribute(.asStored) = field.role else { return nil }
            switch field.attribute?.type {
            case .decimal: return (index, "decimal")
            case .uri: return (index, "url")
            case nil where table.columns[field.column].type.uppercased().hasPrefix("DECIMAL"): return (index, "decimal")
            default: return nil
            }
        }
        let rows = try Row.fetchCursor(
            db, sql: "SELECT \(columns) FROM \(table.name.quotedDatabaseIdentifier) WHERE \(entityColumn) = ? ORDER BY \(primaryKey)", arguments: [plan.entity.number])
        while let row = try rows.next() {
            let primaryKeyValue: DatabaseValue = row[table.primaryKey]
            guard case .int64(let pk) = primaryKeyValue.storage else { throw nonIntegerPrimaryKey(primaryKeyValue, plan) }
            var object: [String: SnapshotValue] = [:]
            for field in plan.fields {
                guard let value = try value(of: field, in: row, plan: plan, pk: pk) else { continue }
                if case .attribute(.date) = field.role, case .double = value { types[field.name] = "date" }
                if case .data = value { types[field.name] = "data" }
                object[field.name] = value
            }
            for (index, type) in marked where types[plan.fields[index].name] == nil {
                switch (type, object[plan.fields[index].name]) {
                case ("decimal", .integer?), ("decimal", .double?), ("url", .string?): types[plan.fields[index].name] = type
                default: break
                }
            }
            let id = plan.idColumn == nil ? SnapshotValue.integer(pk) : translations[table.name]![pk]!
            if case .data = id { types["id"] = "data" }
            object["id"] = id
            for toMany in plan.toMany {
                let targets = links[toMany.join.name]?[pk] ?? []
                let targetTable = model.entities[toMany.join.target]?.table
                object[toMany.name] = .array(targets.compactMap { reference($0, in: targetTable, from: plan, pk: pk, field: toMany.name) })
            }
            for ordered in plan.orderedToMany {
                let targets = links[ordered.key]?[pk] ?? []
                object[ordered.name] = .array(targets.compactMap { reference($0, in: ordered.targetTable, from: plan, pk: pk, field: ordered.name) })
            }
            objects.append(.object(object))
            reporter.advance()
        }
        reporter.finish()
        return (objects, types)
    }

    /// The value of one field of a row; `nil` leaves the key out.
    private mutating func value(of field: CoreDataEntityPlan.Field, in row: Row, plan: CoreDataEntityPlan, pk: Int64) throws -> SnapshotValue? {
        let stored = try row.importedValue(
            atIndex: field.column, path: path, entity: plan.entity.snapshotName, id: "Z_PK \(pk)", column: field.name, row: "Z_PK \(pk)")
        switch field.role {
        case .attribute(let conversion):
            guard let attribute = field.attribute else { return Self.convert(stored, conversion) }
            if attribute.allowsExternalStorage, case .blob(let bytes) = stored.storage {
                return externalValue(bytes, plan: plan, field: field.name)
            }
            if let value = Self.convert(stored, conversion) {
                guard let fitted = CoreDataValueFit.fitted(value, stored: stored, type: attribute.type) else {
                    let imported = field.name == attribute.name ? "" : " (imported as \(field.name))"
                    throw CoreDataValueFit.refusal(
                        "its attribute \(attribute.name)\(imported) (column \(plan.table.columns[field.column].name), \(attribute.type.rawValue) in the model)",
                        stored: stored, type: attribute.type, path: path, entity: plan.entity.snapshotName, pk: pk)
                }
                return fitted
            }
            guard !attribute.isOptional else { return nil }
            let name = "\(plan.entity.snapshotName).\(field.name)"
            // A default the app's type cannot read (a URI's empty text) is no default.
            guard let value = CoreDataPlanner.defaultValue(of: attribute).flatMap({ CoreDataValueFit.fitted($0, stored: stored, type: attribute.type) }) else {
                leftOut[name, default: 0] += 1
                return nil
            }
            defaulted[name, default: 0] += 1
            return value
        case .toOne(let target, let entityColumn):
            if case .null = stored.storage { return nil }
            guard case .int64(let targetPK) = stored.storage else {
                let advice = options.model == nil
                    ? "fix the row in the store, or, if the column is no relationship, declare it a plain attribute with relationships: [\"\(plan.entity.name)\": [\"\(plan.table.columns[field.column].name)\": \"\"]]"
                    : "fix the row in the store"
                throw GraphStoreError.codingFailed(
                    path: path, entity: plan.entity.snapshotName, id: "Z_PK \(pk)",
                    reason: "its to-one relationship \(field.name) (column \(plan.table.columns[field.column].name)) holds \(CoreDataIDIdentity.describe(stored)), not the integer Z_PK of the row it refers to, so the reference cannot be followed; \(advice)")
            }
            var targetTable = target.flatMap { model.entities[$0]?.table }
            if let entityColumn {
                let numberValue: DatabaseValue = row[entityColumn]
                if case .int64(let number) = numberValue.storage, let entity = model.entities[number] { targetTable = entity.table }
            }
            return reference(targetPK, in: targetTable, from: plan, pk: pk, field: field.name)
        case .entityNumber:
            guard case .int64(let number) = stored.storage, number != 0 else { return nil }
            return model.entities[number].map { .string($0.snapshotName) } ?? .integer(number)
        }
    }

    /// The id of the row `target` of `table`, referenced by the row `pk` of `plan`'s entity:
    /// `Z_PK` itself, or the translated id; `nil` (counted as dangling, and named in the
    /// warnings) when `table` has no such row, so that the snapshot never holds a reference the
    /// app would refuse to open.
    private mutating func reference(
        _ target: Int64, in table: String?, from plan: CoreDataEntityPlan, pk: Int64, field: String
    ) -> SnapshotValue? {
        guard let table else { return .integer(target) }
        if let ids = translations[table] {
            if let id = ids[target] { return id }
        } else if primaryKeys[table]?.contains(target) == true {
            return .integer(target)
        }
        let name = "\(plan.entity.snapshotName).\(field)"
        dangling[name, default: 0] += 1
        if firstDangling[name] == nil {
            firstDangling[name] = "\(plan.entity.snapshotName) Z_PK \(pk) references Z_PK \(target) of \(table), which has no such row"
        }
        return nil
    }

    private func nonIntegerPrimaryKey(_ value: DatabaseValue, _ plan: CoreDataEntityPlan) -> GraphStoreError {
        .damagedFile(path: path, offset: nil, reason: "the Core Data table \(plan.table.name) has a row of \(plan.entity.name) whose Z_PK is \(value.importText), not an integer")
    }

    private func importedEntity(_ plan: CoreDataEntityPlan, objects: Int) -> CoreDataImportReport.ImportedEntity {
        let columns = plan.table.columns
        let idColumn = plan.idColumn.map { columns[$0].name } ?? columns[plan.table.primaryKey].name
        var fields = [idColumn: "id"]
        var relationships: [String: CoreDataImportReport.Relationship] = [:]
        for field in plan.fields {
            fields[columns[field.column].name] = field.name
            if case .toOne(let target, let entityColumn) = field.role {
                relationships[field.name] = CoreDataImportReport.Relationship(
                    kind: .toOne, target: target.flatMap { model.entities[$0]?.snapshotName }, source: columns[field.column].name,
                    entityColumn: entityColumn.map { columns[$0].name })
            }
        }
        for toMany in plan.toMany {
            fields["Z" + toMany.join.relationship] = toMany.name
            relationships[toMany.name] = CoreDataImportReport.Relationship(
                kind: .toMany, target: model.entities[toMany.join.target]?.snapshotName, source: toMany.join.name)
        }
        for ordered in plan.orderedToMany {
            fields[ordered.orderColumn] = ordered.name
            relationships[ordered.name] = CoreDataImportReport.Relationship(
                kind: .toMany, target: model.entities.values.first { $0.table == ordered.targetTable }?.snapshotName, source: ordered.targetTable)
        }
        return CoreDataImportReport.ImportedEntity(
            name: plan.entity.snapshotName, coreDataName: plan.entity.name, entityNumber: plan.entity.number,
            parent: plan.entity.parent.flatMap { model.entities[$0]?.snapshotName }, table: plan.table.name, objects: objects,
            idColumn: idColumn, fields: fields, relationships: relationships)
    }

    /// What the store holds that the app's model does not declare, so that no plan reads it:
    /// columns of the entity tables (Core Data's own, `Z_…`, aside) and join tables. Its values
    /// are not migrated; each is named, so that a model of the wrong version does not drop data
    /// unnoticed.
    ///
    /// - Complexity: O(columns + join tables).
    static func storeDataOutsideTheModel(plans: [CoreDataEntityPlan], tables: [String: CoreDataTable], joins: [CoreDataJoinTable]) -> [String] {
        var used: [String: Set<String>] = [:]
        for plan in plans {
            let columns = plan.table.columns
            for field in plan.fields { used[plan.table.name, default: []].insert(columns[field.column].name.uppercased()) }
            if let id = plan.idColumn { used[plan.table.name, default: []].insert(columns[id].name.uppercased()) }
            for ordered in plan.orderedToMany {
                used[ordered.targetTable, default: []].formUnion([ordered.inverseColumn.uppercased(), ordered.orderColumn.uppercased()])
            }
        }
        var warnings: [String] = []
        for (name, table) in tables.sorted(by: { $0.key < $1.key }) {
            let entityColumns = Set(table.entityColumns.values)
            for (index, column) in table.columns.enumerated() {
                let upper = column.name.uppercased()
                // Core Data's own columns (Z_PK, Z_ENT, Z_OPT, Z_FOK_…) are not the app's data; any
                // other column is, whatever its spelling (one an app added with SQL, say).
                guard !upper.hasPrefix("Z_"), !entityColumns.contains(index), !(used[name]?.contains(upper) ?? false) else { continue }
                warnings.append("the store's column \(name).\(column.name) is not in the model: its values were not migrated")
            }
        }
        let usedJoins = Set(plans.flatMap { $0.toMany.map(\.join.name) })
        for join in joins where !usedJoins.contains(join.name) {
            warnings.append("the store's join table \(join.name) is not in the model: its links were not migrated")
        }
        return warnings
    }
}

extension DatabaseValue.Storage {
    /// Whether the value is an INTEGER.
    var isInteger: Bool {
        if case .int64 = self { return true }
        return false
    }
}

extension UUID {
    /// The UUID whose 16 bytes are `bytes`, in order.
    init(sixteenBytes bytes: Data) {
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes.prefix(16)) }
        self.init(uuid: value)
    }

}
