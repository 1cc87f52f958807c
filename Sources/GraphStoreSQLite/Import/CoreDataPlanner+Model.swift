import Foundation
import GRDB
import GraphStore

extension CoreDataPlanner {
    /// The plan of `entity` from the app's model: a field per attribute and to-one relationship
    /// (inherited ones included), an array per many-to-many relationship the entity owns, and
    /// one per ordered one-to-many relationship; unordered one-to-many relationships are read
    /// from their inverse to-one fields.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` naming the model file,
    ///   the entity and the field when the model has no such entity or the table no such column.
    func plan(
        _ entity: CoreDataModel.Entity, table: CoreDataTable, joins: [CoreDataJoinTable], description: CoreDataModelDescription
    ) throws -> CoreDataEntityPlan {
        guard description.entity(entity.name) != nil else {
            throw GraphStoreError.codingFailed(
                path: description.path, entity: entity.name, id: nil,
                reason: "the store has the entity \(entity.name), which the model does not declare; \(description.mismatchAdvice)")
        }
        let columns = Dictionary(table.columns.enumerated().map { ($0.element.name.uppercased(), $0.offset) }, uniquingKeysWith: { first, _ in first })
        func column(_ property: String) throws -> Int {
            guard let index = columns["Z" + property.uppercased()] else {
                throw GraphStoreError.codingFailed(
                    path: description.path, entity: entity.name, id: nil,
                    reason: "the model's \(entity.name).\(property) has no column Z\(property.uppercased()) in the store's table \(table.name); \(description.mismatchAdvice)")
            }
            return index
        }
        var plan = CoreDataEntityPlan(entity: entity, table: table)
        for attribute in description.allAttributes(of: entity.name) {
            let index = try column(attribute.name)
            plan.fields.append(CoreDataEntityPlan.Field(
                column: index, name: attribute.name, role: .attribute(Self.conversion(of: attribute.type)), attribute: attribute))
        }
        for relationship in description.allRelationships(of: entity.name) {
            if !relationship.isToMany {
                let index = try column(relationship.name)
                let target = model.entities.values.first { $0.name == relationship.destination }?.number
                let entityColumn = table.entityColumns["Z" + relationship.name.uppercased()]
                plan.fields.append(CoreDataEntityPlan.Field(column: index, name: relationship.name, role: .toOne(target: target, entityColumn: entityColumn)))
                if let entityColumn {
                    plan.fields.append(CoreDataEntityPlan.Field(column: entityColumn, name: relationship.name + "Entity", role: .entityNumber))
                }
                continue
            }
            let inverse = description.inverse(of: relationship)
            if let inverse, !inverse.isToMany {
                // One-to-many: the targets' to-one column holds it; kept here only for its order.
                guard relationship.isOrdered, let target = model.entities.values.first(where: { $0.name == relationship.destination }) else { continue }
                let targetTable = try CoreDataTable(target.table, db: db, path: path)
                let upper = inverse.name.uppercased()
                guard let inverseColumn = targetTable.columns.first(where: { $0.name.uppercased() == "Z" + upper }),
                    let orderColumn = targetTable.columns.first(where: { $0.name.uppercased() == "Z_FOK_" + upper })
                else {
                    throw GraphStoreError.codingFailed(
                        path: description.path, entity: entity.name, id: nil,
                        reason: "the model's ordered \(entity.name).\(relationship.name) needs the columns Z\(upper) and Z_FOK_\(upper) in the store's table \(target.table)")
                }
                plan.orderedToMany.append(CoreDataEntityPlan.OrderedToMany(
                    name: relationship.name, targetTable: target.table, inverseColumn: inverseColumn.name, orderColumn: orderColumn.name))
                continue
            }
            // Many-to-many (or to-many without an inverse): a join table, owned by one side.
            if let join = joins.first(where: { entity.lineage.contains($0.owner) && $0.relationship == relationship.name.uppercased() }) {
                plan.toMany.append(CoreDataEntityPlan.ToMany(join: join, name: relationship.name))
            }
        }
        // Properties whose names differ only in case (`userID`, `userId`) would both read one
        // column, one of them another property's values.
        var owners: [Int: String] = [:]
        for field in plan.fields {
            if case .entityNumber = field.role { continue }
            if let other = owners.updateValue(field.name, forKey: field.column) {
                throw GraphStoreError.codingFailed(
                    path: description.path, entity: entity.name, id: nil,
                    reason: "the model's \(entity.name).\(other) and \(entity.name).\(field.name) both name the store's column \(table.columns[field.column].name) (names that differ only in case); which column holds which is not known, so neither is guessed")
            }
        }
        return plan
    }

    /// How values of a model type are read.
    static func conversion(of type: CoreDataModelDescription.AttributeType) -> CoreDataImportOptions.ValueConversion {
        switch type {
        case .boolean: .bool
        case .date: .date
        case .uuid: .uuid
        default: .asStored
        }
    }

    /// The snapshot value of an attribute's `defaultValueString`, or its type's zero when it has
    /// none; `nil` for a type without a zero (UUID).
    static func defaultValue(of attribute: CoreDataModelDescription.Attribute) -> SnapshotValue? {
        let text = attribute.defaultValue?.trimmingCharacters(in: .whitespaces)
        switch attribute.type {
        case .boolean: return .bool(text.map { ["YES", "TRUE", "1"].contains($0.uppercased()) } ?? false)
        case .integer16, .integer32, .integer64: return .integer(text.flatMap { Int64($0) } ?? 0)
        case .double, .float, .decimal, .date: return .double(text.flatMap { Double($0) } ?? 0)
        case .string, .uri: return .string(text ?? "")
        case .binary, .transformable: return .data(Data())
        case .uuid: return text.flatMap { UUID(uuidString: $0) }.map { .string($0.uuidString) }
        }
    }
}
