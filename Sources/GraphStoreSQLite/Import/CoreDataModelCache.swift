import Foundation
import GRDB
import GraphStore

/// The model a Core Data store keeps of itself: `Z_MODELCACHE`'s one row holds, in its BLOB
/// column `Z_CONTENT`, the `NSManagedObjectModel` the store was last written with, as an
/// `NSKeyedArchiver` binary property list compressed with raw deflate.
///
/// The archive's root (`$top.root`) is the model; its `NSEntities` is a dictionary of entity
/// descriptions by name. An entity has `NSEntityName`, `NSSuperentity`, `NSIsAbstract`,
/// `NSProperties` (a dictionary of property descriptions by name, the inherited ones
/// included, as `_NSPropertyDescriptionProxy` objects or copies) and `NSUniqueTuples`. A
/// property has `NSPropertyName` and flags (`NSIsOptional`, `NSIsTransient`, `NSIsOrdered`,
/// or the bit set `_P`); an attribute adds `NSAttributeType` (the `NSAttributeType` code),
/// `NSDefaultValue` and `NSFlagsKey` (bit 4: external storage); a relationship adds
/// `NSDestinationEntity` / `_NSDestinationEntityName`, `NSInverseRelationship` /
/// `_NSInverseRelationshipName`, `NSMaxCount` (1 for to-one) and `NSDeleteRule`.
enum CoreDataModelCache {
    /// The model in the cache of the store `db`, or `nil` when it has no `Z_MODELCACHE` table,
    /// or the table no row.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` naming the store for a
    ///   cache that does not inflate, is no keyed archive of a model, or describes a model that
    ///   contradicts itself (a relationship to an entity it does not have).
    static func read(_ db: Database, tables: [ForeignDatabase.Table], path: String) throws -> CoreDataModelDescription? {
        guard let table = tables.first(where: { $0.name.uppercased() == "Z_MODELCACHE" })?.name else { return nil }
        let columns = try db.columns(in: table).map(\.name)
        // Core Data names the column Z_CONTENT; take the table's only column otherwise.
        guard let column = columns.first(where: { $0.uppercased() == "Z_CONTENT" }) ?? (columns.count == 1 ? columns[0] : nil) else {
            throw damaged(path, "its table \(table) has no Z_CONTENT column")
        }
        guard let stored = try DatabaseValue.fetchOne(db, sql: "SELECT \(column.quotedDatabaseIdentifier) FROM \(table.quotedDatabaseIdentifier) LIMIT 1"),
            !stored.isNull
        else { return nil }
        guard case .blob(let compressed) = stored.storage else { throw damaged(path, "\(table).\(column) holds \(stored.importText), not compressed data") }
        return try decode(compressed, path: path)
    }

    /// The model in a cache blob; `path` names the store in errors and becomes the model's
    /// ``CoreDataModelDescription/path``.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)``, as ``read(_:tables:path:)``.
    static func decode(_ compressed: Data, path: String) throws -> CoreDataModelDescription {
        let archiveData: Data
        do {
            archiveData = try ModelCacheInflater.inflate(compressed)
        } catch {
            throw damaged(path, "its model cache (Z_MODELCACHE) does not inflate: \(error.reason)")
        }
        do {
            let archive = try KeyedArchive(archiveData)
            let decoder = Decoder(archive: archive)
            return CoreDataModelDescription(entities: try decoder.entities(), path: path, origin: .modelCache)
        } catch {
            throw damaged(path, "its model cache (Z_MODELCACHE) is not a readable Core Data model: \(error.reason)")
        }
    }

    // MARK: - Private

    private static func damaged(_ path: String, _ reason: String) -> GraphStoreError {
        GraphStoreError.damagedFile(
            path: path, offset: nil, reason: reason + "; pass the app's model with --model (CoreDataImportOptions.model) to read the store without its cache")
    }

    /// Turns the archive's objects into entities.
    private struct Decoder {
        typealias Value = KeyedArchive.Value
        typealias Failure = KeyedArchive.Failure
        let archive: KeyedArchive

        func entities() throws(Failure) -> [CoreDataModelDescription.Entity] {
            guard let model = try archive.object(archive.top["root"]) else { throw Failure(reason: "its archive has no root object") }
            guard try archive.classes(of: model).contains("NSManagedObjectModel") else {
                throw Failure(reason: "its root object is a \(try archive.classes(of: model).first ?? "value"), not an NSManagedObjectModel")
            }
            let entityValues = try archive.elements(model["NSEntities"])
            guard !entityValues.isEmpty else { throw Failure(reason: "its model has no entities") }
            var read: [(entity: CoreDataModelDescription.Entity, properties: [String])] = []
            for value in entityValues {
                guard let object = try archive.object(value), try archive.classes(of: object).contains("NSEntityDescription") else {
                    throw Failure(reason: "an entry of the model's NSEntities is no entity description")
                }
                read.append(try entity(object))
            }
            var entities = read.map(\.entity)
            let names = Set(entities.map(\.name))
            guard names.count == entities.count else { throw Failure(reason: "its model lists an entity twice") }
            // An entity's own properties are those its ancestors do not have.
            let listed = Dictionary(uniqueKeysWithValues: read.map { ($0.entity.name, Set($0.properties)) })
            for index in entities.indices {
                var inherited: Set<String> = []
                var ancestor = entities[index].parent
                var seen: Set<String> = [entities[index].name]
                while let name = ancestor {
                    guard let parent = entities.first(where: { $0.name == name }) else {
                        throw Failure(reason: "the entity \(entities[index].name) has the parent \(name), which the model does not have")
                    }
                    guard seen.insert(name).inserted else { throw Failure(reason: "the entity \(entities[index].name) is its own ancestor") }
                    inherited.formUnion(listed[name] ?? [])
                    ancestor = parent.parent
                }
                entities[index].attributes.removeAll { inherited.contains($0.name) }
                entities[index].relationships.removeAll { inherited.contains($0.name) }
            }
            for entity in entities {
                for relationship in entity.relationships where !names.contains(relationship.destination) {
                    throw Failure(reason: "the relationship \(entity.name).\(relationship.name) leads to the entity \(relationship.destination), which the model does not have")
                }
            }
            return entities.sorted { $0.name < $1.name }
        }

        /// An entity with every property it lists, and the names of those properties.
        private func entity(_ object: [String: Value]) throws(Failure) -> (entity: CoreDataModelDescription.Entity, properties: [String]) {
            guard let name = try archive.string(object["NSEntityName"]), !name.isEmpty else { throw Failure(reason: "an entity has no NSEntityName") }
            var parent: String?
            if let superentity = try archive.object(object["NSSuperentity"]) {
                guard let parentName = try archive.string(superentity["NSEntityName"]) else { throw Failure(reason: "the parent of the entity \(name) has no name") }
                parent = parentName
            }
            var entity = CoreDataModelDescription.Entity(
                name: name, parent: parent, isAbstract: try bool(object["NSIsAbstract"]), attributes: [], relationships: [], uniqueConstraints: [])
            var listed: [String] = []
            for value in try archive.elements(object["NSProperties"]) {
                guard var property = try archive.object(value) else { throw Failure(reason: "the entity \(name) lists a property that is not in the archive") }
                var classes = try archive.classes(of: property)
                if classes.contains("_NSPropertyDescriptionProxy") {
                    // An inherited property, standing for the parent's.
                    guard let underlying = try archive.object(property["NSUnderlyingProperty"]) else {
                        throw Failure(reason: "the entity \(name) lists an inherited property without NSUnderlyingProperty")
                    }
                    property = underlying
                    classes = try archive.classes(of: property)
                }
                guard let propertyName = try archive.string(property["NSPropertyName"]), !propertyName.isEmpty else {
                    throw Failure(reason: "the entity \(name) has a property without NSPropertyName")
                }
                listed.append(propertyName)
                let flags = try integer(property["_P"]) ?? 0
                let isTransient = try bool(property["NSIsTransient"]) || flags & 0x8 != 0
                guard !isTransient else { continue }
                let isOptional = try bool(property["NSIsOptional"]) || flags & 0x2 != 0
                if classes.contains("NSAttributeDescription") {
                    entity.attributes.append(try attribute(property, name: propertyName, entity: name, isOptional: isOptional))
                } else if classes.contains("NSRelationshipDescription") {
                    entity.relationships.append(try relationship(property, name: propertyName, entity: name, isOrdered: try bool(property["NSIsOrdered"]) || flags & 0x400 != 0))
                }
                // Fetched properties are queries, not stored.
            }
            for tuple in try archive.elements(object["NSUniqueTuples"]) {
                var names: [String] = []
                for element in try archive.elements(tuple) {
                    if let text = try archive.string(element) {
                        names.append(text)
                    } else if let property = try archive.object(element), let text = try archive.string(property["NSPropertyName"]) {
                        names.append(text)
                    }
                }
                if !names.isEmpty { entity.uniqueConstraints.append(names) }
            }
            return (entity, listed)
        }

        private func attribute(_ object: [String: Value], name: String, entity: String, isOptional: Bool) throws(Failure) -> CoreDataModelDescription.Attribute {
            let code = try integer(object["NSAttributeType"]) ?? 0
            guard let type = Self.attributeTypes[code] else {
                throw Failure(reason: "the attribute \(entity).\(name) has the type code \(code), which is no stored Core Data attribute type (\(Self.attributeTypes.keys.sorted().map(String.init).joined(separator: ", ")))")
            }
            let flags = try integer(object["NSFlagsKey"]) ?? 0
            return CoreDataModelDescription.Attribute(
                name: name, type: type, isOptional: isOptional, defaultValue: try defaultValue(object["NSDefaultValue"]), allowsExternalStorage: flags & 0x4 != 0)
        }

        private func relationship(_ object: [String: Value], name: String, entity: String, isOrdered: Bool) throws(Failure) -> CoreDataModelDescription.Relationship {
            var destination = try archive.string(object["_NSDestinationEntityName"])
            if destination == nil, let target = try archive.object(object["NSDestinationEntity"]) { destination = try archive.string(target["NSEntityName"]) }
            guard let destination else { throw Failure(reason: "the relationship \(entity).\(name) has no destination entity") }
            var inverse = try archive.string(object["_NSInverseRelationshipName"])
            if inverse == nil, let other = try archive.object(object["NSInverseRelationship"]) { inverse = try archive.string(other["NSPropertyName"]) }
            let isToMany = try integer(object["NSMaxCount"]) != 1
            let rule = try integer(object["NSDeleteRule"]) ?? 1
            return CoreDataModelDescription.Relationship(
                name: name, destination: destination, isToMany: isToMany, isOrdered: isToMany && isOrdered, inverse: inverse,
                deleteRule: Self.deleteRules[rule] ?? .nullify)
        }

        /// A default value as the model file spells it (`defaultValueString`).
        private func defaultValue(_ value: Value?) throws(Failure) -> String? {
            switch try archive.resolve(value) {
            case .bool(let flag)?: return flag ? "YES" : "NO"
            case .integer(let number)?: return String(number)
            case .real(let number)?: return String(number)
            case .string(let text)?: return text
            case .dictionary(let members)?:
                if case .real(let seconds)? = members["NS.time"] { return String(seconds) }  // NSDate
                if case .data(let bytes)? = members["NS.uuidbytes"], bytes.count == 16 {
                    return UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }).uuidString
                }
                if let text = try archive.string(members["NS.relative"]) { return text }  // NSURL
                return try archive.string(value)
            default: return nil
            }
        }

        private func bool(_ value: Value?) throws(Failure) -> Bool {
            switch try archive.resolve(value) {
            case .bool(let flag)?: flag
            case .integer(let number)?: number != 0
            default: false
            }
        }

        private func integer(_ value: Value?) throws(Failure) -> Int64? {
            if case .integer(let number)? = try archive.resolve(value) { return number }
            return nil
        }

        /// `NSAttributeType` codes of stored attribute types.
        static let attributeTypes: [Int64: CoreDataModelDescription.AttributeType] = [
            100: .integer16, 200: .integer32, 300: .integer64, 400: .decimal, 500: .double, 600: .float, 700: .string,
            800: .boolean, 900: .date, 1000: .binary, 1100: .uuid, 1200: .uri, 1800: .transformable,
        ]
        /// `NSDeleteRule` codes.
        static let deleteRules: [Int64: CoreDataModelDescription.DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]
    }
}
