import Foundation
import GRDB
import GraphStore

/// Decides, for every entity, which column becomes which field, from the options and from what
/// the schema and the values say.
///
/// To-one relationships: a column is one when the options say so, when a column holds its
/// target's entity number (`Z3ITEM` beside `ZITEM`: only relationships have that), or when it is
/// an indexed INTEGER column named like an entity (`ZFOLDER`, with Core Data's
/// `ZNOTE_ZFOLDER_INDEX`, and an entity `Folder`). Everything else is an attribute.
struct CoreDataPlanner {
    let db: Database
    let path: String
    let model: CoreDataModel
    let options: CoreDataImportOptions
    private(set) var warnings: [String] = []
    /// `"<option>/<entity key>/<column key>"` of the option entries that matched.
    private var used: Set<String> = []

    init(db: Database, path: String, model: CoreDataModel, options: CoreDataImportOptions) {
        self.db = db
        self.path = path
        self.model = model
        self.options = options
    }

    /// The plan of `entity`, whose table is `table`, with the many-to-many relationships of
    /// `joins` it or an ancestor owns.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` when two columns
    ///   would be one field.
    mutating func plan(_ entity: CoreDataModel.Entity, table: CoreDataTable, joins: [CoreDataJoinTable]) throws -> CoreDataEntityPlan {
        if let description = options.model {
            var plan = try plan(entity, table: table, joins: joins, description: description)
            // The model names the fields; attributeNames renames them, as it names columns
            // without a model (so that, say, an `id` attribute whose values repeat can be kept
            // under a name of its own while the ids come from Z_PK).
            for index in plan.fields.indices {
                if case .entityNumber = plan.fields[index].role { continue }
                let column = table.columns[plan.fields[index].column].name
                guard let name = option(options.attributeNames, "attributeNames", entity, column) else { continue }
                let old = plan.fields[index].name
                plan.fields[index].name = name
                if case .toOne(_, let entityColumn?) = plan.fields[index].role,
                   let companion = plan.fields.firstIndex(where: { $0.column == entityColumn && $0.name == old + "Entity" }) {
                    plan.fields[companion].name = name + "Entity"
                }
            }
            for index in plan.toMany.indices {
                if let name = option(options.attributeNames, "attributeNames", entity, "Z" + plan.toMany[index].join.relationship) {
                    plan.toMany[index].name = name
                }
            }
            if let idField = idField(entity, fields: plan.fields, table: table), case .attribute(let conversion) = plan.fields[idField].role {
                plan.idColumn = plan.fields[idField].column
                plan.idConversion = conversion
                plan.idType = plan.fields[idField].attribute?.type
                if plan.fields[idField].name == "id" { plan.fields.remove(at: idField) }
            }
            try checkNames(plan)
            return plan
        }
        // In a table its sub-entities share, an entity's columns are those its rows fill.
        let isShared = model.entities.values.contains { $0.table == entity.table && $0.number != entity.number }
        let filled = isShared ? try filledColumns(of: entity, in: table) : nil
        var fields: [CoreDataEntityPlan.Field] = []
        for (index, column) in table.columns.enumerated() {
            let upper = column.name.uppercased()
            guard !upper.hasPrefix("Z_"), !table.entityColumns.values.contains(index), filled?.contains(index) ?? true else { continue }
            let name = option(options.attributeNames, "attributeNames", entity, column.name) ?? Self.defaultName(column.name)
            let role = try role(of: column, at: index, name: name, entity: entity, table: table)
            fields.append(CoreDataEntityPlan.Field(column: index, name: name, role: role))
            if case .toOne(_, let entityColumn?) = role {
                fields.append(CoreDataEntityPlan.Field(column: entityColumn, name: name + "Entity", role: .entityNumber))
            }
        }
        var plan = CoreDataEntityPlan(entity: entity, table: table)
        if let idField = idField(entity, fields: fields, table: table), case .attribute(let conversion) = fields[idField].role {
            plan.idColumn = fields[idField].column
            plan.idConversion = conversion
            if fields[idField].name == "id" { fields.remove(at: idField) }
        }
        plan.fields = fields
        for join in joins where entity.lineage.contains(join.owner) {
            let name = option(options.attributeNames, "attributeNames", entity, "Z" + join.relationship) ?? join.relationship.lowercased()
            plan.toMany.append(CoreDataEntityPlan.ToMany(join: join, name: name))
        }
        try checkNames(plan)
        return plan
    }

    /// Warnings for option entries that matched nothing; call after planning every entity.
    mutating func warnAboutUnusedOptions() {
        for key in options.entityNames.keys.sorted() where !model.entities.values.contains(where: { $0.name.lowercased() == key.lowercased() }) {
            warnings.append("entityNames renames \(key), which is not an entity of the store")
        }
        for key in options.idColumns.keys.sorted() where model.entity(named: key) == nil {
            warnings.append("idColumns names the entity \(key), which the store does not have")
        }
        unused(options.attributeNames.mapValues { $0.mapValues { _ in () } }, "attributeNames")
        unused(options.relationships.mapValues { $0.mapValues { _ in () } }, "relationships")
        unused(options.valueConversions.mapValues { $0.mapValues { _ in () } }, "valueConversions")
    }

    /// A field name by default: the column name lower-cased, without Core Data's leading `Z`.
    static func defaultName(_ column: String) -> String {
        (column.uppercased().hasPrefix("Z") ? String(column.dropFirst()) : column).lowercased()
    }

    // MARK: - Private

    private mutating func role(of column: ColumnInfo, at index: Int, name: String, entity: CoreDataModel.Entity, table: CoreDataTable) throws -> CoreDataEntityPlan.Role {
        let upper = column.name.uppercased()
        let entityColumn = table.entityColumns[upper]
        if let target = option(options.relationships, "relationships", entity, column.name) {
            if target.isEmpty { return .attribute(conversion(of: column, name: name, entity: entity, table: table)) }
            if let targetEntity = model.entity(named: target) { return .toOne(target: targetEntity.number, entityColumn: entityColumn) }
            warnings.append("relationships gives \(entity.name).\(column.name) the target \(target), which is not an entity of the store; the column is detected as without the option")
        }
        if let entityColumn {
            let target = try namedEntity(upper) ?? commonAncestor(ofNumbersIn: table.columns[entityColumn].name, table: table)
            return .toOne(target: target, entityColumn: entityColumn)
        }
        if column.type.uppercased().hasPrefix("INT"), table.indexed.contains(upper), let target = namedEntity(upper) {
            return .toOne(target: target, entityColumn: nil)
        }
        return .attribute(conversion(of: column, name: name, entity: entity, table: table))
    }

    private mutating func conversion(of column: ColumnInfo, name: String, entity: CoreDataModel.Entity, table: CoreDataTable) -> CoreDataImportOptions.ValueConversion {
        if let conversion = option(options.valueConversions, "valueConversions", entity, column.name) { return conversion }
        if column.type.uppercased().hasPrefix("TIMESTAMP") { return .date }
        if options.decodesUUIDBlobs, table.sixteenByteColumns.contains(column.name.uppercased()), Self.isIDLike(name) { return .uuid }
        return .asStored
    }

    /// The index in `fields` of the field whose column holds the ids, or `nil` for `Z_PK`.
    private mutating func idField(_ entity: CoreDataModel.Entity, fields: [CoreDataEntityPlan.Field], table: CoreDataTable) -> Int? {
        var explicit: String?
        search: for number in entity.lineage {
            for (key, column) in options.idColumns where Self.matches(key, model.entities[number]!) {
                explicit = column
                break search
            }
        }
        guard let explicit else {
            return fields.firstIndex { field in
                guard field.name == "id", case .attribute = field.role else { return false }
                return true
            }
        }
        if explicit.uppercased() == "Z_PK" { return nil }
        let index = fields.firstIndex { field in
            guard table.columns[field.column].name.uppercased() == explicit.uppercased(), case .attribute = field.role else { return false }
            return true
        }
        if index == nil {
            warnings.append("idColumns names \(explicit) for \(entity.name), which is not one of its attribute columns with values; its ids are Z_PK")
        }
        return index
    }

    /// Throws when two columns, or a column and the id, would be one field.
    private func checkNames(_ plan: CoreDataEntityPlan) throws {
        var sources = ["id": plan.idColumn.map { plan.table.columns[$0].name } ?? "Z_PK"]
        let named = plan.fields.map { ($0.name, plan.table.columns[$0.column].name) } + plan.toMany.map { ($0.name, $0.join.name) }
            + plan.orderedToMany.map { ($0.name, "the ordered relationship " + $0.name) }
        for (name, source) in named {
            guard let other = sources.updateValue(source, forKey: name) else { continue }
            let reason = name == "id"
                ? "\(source) would be the field id, which holds \(other); name it otherwise in attributeNames, or make it the id with idColumns"
                : "\(other) and \(source) would both be the field \(name); give one another name in attributeNames"
            throw GraphStoreError.codingFailed(path: path, entity: plan.entity.snapshotName, id: nil, reason: reason)
        }
    }

    /// The value `dictionary` gives `column` of `entity`: the entity's own entry, else its
    /// parent's, and so on up. Entity and column keys match in any case.
    private mutating func option<Value>(_ dictionary: [String: [String: Value]], _ label: String, _ entity: CoreDataModel.Entity, _ column: String) -> Value? {
        let upper = column.uppercased()
        for number in entity.lineage {
            let owner = model.entities[number]!
            for (entityKey, columns) in dictionary where Self.matches(entityKey, owner) {
                for (columnKey, value) in columns where columnKey.uppercased() == upper {
                    used.insert("\(label)/\(entityKey)/\(columnKey)")
                    return value
                }
            }
        }
        return nil
    }

    private mutating func unused(_ dictionary: [String: [String: Void]], _ label: String) {
        for entityKey in dictionary.keys.sorted() {
            guard model.entity(named: entityKey) != nil else {
                warnings.append("\(label) names the entity \(entityKey), which the store does not have")
                continue
            }
            for columnKey in dictionary[entityKey]!.keys.sorted() where !used.contains("\(label)/\(entityKey)/\(columnKey)") {
                warnings.append("\(label)[\"\(entityKey)\"] names \(columnKey), which matches no column with values and no many-to-many relationship of \(entityKey)")
            }
        }
    }

    private static func matches(_ key: String, _ entity: CoreDataModel.Entity) -> Bool {
        let lowered = key.lowercased()
        return entity.name.lowercased() == lowered || entity.snapshotName.lowercased() == lowered
    }

    /// Whether a field name reads like an identifier: `id`, `uuid`, `identifier`, or ending in `id`.
    private static func isIDLike(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered.hasSuffix("id") || lowered == "identifier"
    }

    /// The entity whose table-style name (`Z` + upper-cased name) is `column`.
    private func namedEntity(_ column: String) -> Int64? {
        model.entities.values.first { "Z" + $0.name.uppercased() == column }?.number
    }

    /// The nearest entity that every entity number in `column` descends from (or is).
    private func commonAncestor(ofNumbersIn column: String, table: CoreDataTable) throws -> Int64? {
        let numbers = try Int64.fetchAll(db, sql: "SELECT DISTINCT \(column.quotedDatabaseIdentifier) FROM \(table.name.quotedDatabaseIdentifier) WHERE \(column.quotedDatabaseIdentifier) IS NOT NULL")
        let lineages = numbers.compactMap { model.entities[$0]?.lineage }
        guard let first = lineages.first else { return nil }
        return first.first { ancestor in lineages.allSatisfy { $0.contains(ancestor) } }
    }

    /// The indexes of the columns that hold a value in at least one of `entity`'s rows.
    private func filledColumns(of entity: CoreDataModel.Entity, in table: CoreDataTable) throws -> Set<Int> {
        let counts = table.columns.map { "count(\($0.name.quotedDatabaseIdentifier))" }.joined(separator: ", ")
        let entityColumn = table.columns[table.entityNumber].name.quotedDatabaseIdentifier
        guard let row = try Row.fetchOne(db, sql: "SELECT \(counts) FROM \(table.name.quotedDatabaseIdentifier) WHERE \(entityColumn) = ?", arguments: [entity.number]) else { return [] }
        return Set(table.columns.indices.filter { (row[$0] as Int? ?? 0) > 0 })
    }
}
