import CZlib
import Foundation
import GRDB
import GraphStoreSQLite

/// Builds a Core Data model cache (`Z_MODELCACHE.Z_CONTENT`) the way Core Data writes it: the
/// `NSManagedObjectModel` as an `NSKeyedArchiver` binary property list, raw-deflated.
///
/// The archive holds what `encodeWithCoder:` of the model, entity, attribute and
/// relationship descriptions writes: `NSEntities` by name; per entity `NSEntityName`,
/// `NSSuperentity`, `NSSubentities`, `NSProperties` (inherited ones too), `NSIsAbstract`,
/// `NSUniqueTuples`; per property `NSPropertyName`, `NSEntity`, `NSIsOptional`,
/// `NSIsTransient`, `NSIsOrdered` and the bit set `_P`; per attribute `NSAttributeType`,
/// `NSDefaultValue`, `NSFlagsKey`; per relationship the destination and inverse as objects and
/// names, `NSMinCount`, `NSMaxCount` and `NSDeleteRule`.
public enum CoreDataModelCacheWriter {
    /// How a sub-entity lists the properties it inherits.
    public enum Inherited: Sendable {
        /// As `_NSPropertyDescriptionProxy` objects over the parent's descriptions.
        case proxies
        /// As copies of the parent's descriptions.
        case copies
    }

    /// The archive (not compressed) of `model`, plus a transient attribute per entry of
    /// `transients` (entity → attribute names), leaving out the entities in `omitting`.
    public static func archive(
        of model: CoreDataModelDescription, inherited: Inherited = .proxies, transients: [String: [String]] = [:], omitting: Set<String> = []
    ) -> Data {
        let writer = KeyedArchiveWriter()
        let root = writer.reserve()
        let entities = model.entities.filter { !omitting.contains($0.name) }
        var entitySlots: [String: KeyedArchiveWriter.Value] = [:]
        for entity in entities { entitySlots[entity.name] = writer.reserve() }
        // Every relationship's slot first, so inverses can refer to each other.
        var relationshipSlots: [String: KeyedArchiveWriter.Value] = [:]
        for entity in entities {
            for relationship in entity.relationships { relationshipSlots[entity.name + "." + relationship.name] = writer.reserve() }
        }
        var ownProperties: [String: [(String, KeyedArchiveWriter.Value)]] = [:]
        for entity in entities {
            let slot = entitySlots[entity.name]!
            var properties: [(String, KeyedArchiveWriter.Value)] = []
            for attribute in entity.attributes {
                properties.append((attribute.name, self.attribute(attribute, entity: slot, writer: writer)))
            }
            for name in transients[entity.name] ?? [] {
                properties.append((name, transient(name, entity: slot, writer: writer)))
            }
            for relationship in entity.relationships {
                let uid = relationshipSlots[entity.name + "." + relationship.name]!
                writer.fill(uid, with: self.relationship(relationship, entity: slot, slots: (entitySlots, relationshipSlots), writer: writer))
                properties.append((relationship.name, uid))
            }
            ownProperties[entity.name] = properties
        }
        func inheritedProperties(of entity: CoreDataModelDescription.Entity, into slot: KeyedArchiveWriter.Value) -> [(String, KeyedArchiveWriter.Value)] {
            guard let parentName = entity.parent, let parent = model.entity(parentName) else { return [] }
            let listed = inheritedProperties(of: parent, into: slot) + (ownProperties[parentName] ?? [])
            return listed.map { name, uid in
                switch inherited {
                case .proxies:
                    (name, writer.object("_NSPropertyDescriptionProxy", ["NSUnderlyingProperty": uid, "NSEntityDescription": slot]))
                case .copies:
                    (name, copy(of: name, in: parent, model: model, entity: slot, writer: writer))
                }
            }
        }
        for entity in entities {
            let slot = entitySlots[entity.name]!
            var members: [String: KeyedArchiveWriter.Value] = [
                "NSEntityName": writer.string(entity.name),
                "NSClassNameForEntity": writer.string(entity.name),
                "NSManagedObjectModel": root,
                "NSProperties": writer.dictionary(inheritedProperties(of: entity, into: slot) + ownProperties[entity.name]!),
                "NSSubentities": writer.dictionary(entities.filter { $0.parent == entity.name }.map { ($0.name, entitySlots[$0.name]!) }),
            ]
            if let parent = entity.parent { members["NSSuperentity"] = entitySlots[parent] ?? KeyedArchiveWriter.null }
            if entity.isAbstract { members["NSIsAbstract"] = .bool(true) }
            if !entity.uniqueConstraints.isEmpty {
                members["NSUniqueTuples"] = writer.array(entity.uniqueConstraints.map { tuple in writer.array(tuple.map { writer.string($0) }) })
            }
            writer.fill(slot, with: writer.objectValue("NSEntityDescription", members))
        }
        writer.fill(root, with: writer.objectValue("NSManagedObjectModel", [
            "NSEntities": writer.dictionary(entities.map { ($0.name, entitySlots[$0.name]!) }),
        ]))
        return writer.archive(top: ["root": root])
    }

    /// `bytes` compressed with raw deflate (no zlib or gzip wrapper), as Core Data stores its
    /// model cache; with `zlibWrapper`, in a zlib stream instead.
    public static func deflate(_ bytes: Data, zlibWrapper: Bool = false) -> Data {
        withZlibStream(ending: { deflateEnd($0) }) { stream in deflate(bytes, zlibWrapper: zlibWrapper, with: stream) }
    }

    private static func deflate(_ bytes: Data, zlibWrapper: Bool, with stream: UnsafeMutablePointer<z_stream>) -> Data {
        precondition(deflateInit2_(stream, 9, Z_DEFLATED, zlibWrapper ? 15 : -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        var input = [UInt8](bytes)
        var output = [UInt8](repeating: 0, count: Int(deflateBound(stream, uLong(input.count))) + 64)
        let written = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.pointee.next_in = source.baseAddress
                stream.pointee.avail_in = uInt(source.count)
                stream.pointee.next_out = target.baseAddress
                stream.pointee.avail_out = uInt(target.count)
                precondition(CZlib.deflate(stream, Z_FINISH) == Z_STREAM_END)
                return target.count - Int(stream.pointee.avail_out)
            }
        }
        return Data(output.prefix(written))
    }

    /// Stores `blob` as the model cache of the Core Data store at `store`, replacing any.
    public static func install(_ blob: Data, in store: URL) throws {
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS Z_MODELCACHE (Z_CONTENT BLOB)")
            try db.execute(sql: "DELETE FROM Z_MODELCACHE")
            try db.execute(sql: "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", arguments: [blob])
        }
        try queue.close()
    }

    // MARK: - Private

    private static let propertyClasses = ["NSPropertyDescription", "NSObject"]

    private static func flags(optional: Bool) -> KeyedArchiveWriter.Value { .integer(optional ? 3 : 1) }

    private static func attribute(_ attribute: CoreDataModelDescription.Attribute, entity: KeyedArchiveWriter.Value, writer: KeyedArchiveWriter) -> KeyedArchiveWriter.Value {
        var members: [String: KeyedArchiveWriter.Value] = [
            "NSPropertyName": writer.string(attribute.name),
            "NSEntity": entity,
            "NSAttributeType": .integer(typeCodes[attribute.type]!),
            "NSFlagsKey": .integer(attribute.allowsExternalStorage ? 4 : 0),
            "_P": flags(optional: attribute.isOptional),
        ]
        if attribute.isOptional { members["NSIsOptional"] = .bool(true) }
        if let text = attribute.defaultValue { members["NSDefaultValue"] = defaultValue(text, type: attribute.type, writer: writer) }
        return writer.object("NSAttributeDescription", superclasses: propertyClasses, members)
    }

    private static func relationship(
        _ relationship: CoreDataModelDescription.Relationship, entity: KeyedArchiveWriter.Value,
        slots: (entities: [String: KeyedArchiveWriter.Value], relationships: [String: KeyedArchiveWriter.Value]), writer: KeyedArchiveWriter
    ) -> KeyedArchiveWriter.Value {
        var members: [String: KeyedArchiveWriter.Value] = [
            "NSPropertyName": writer.string(relationship.name),
            "NSEntity": entity,
            "NSMinCount": .integer(0),
            "NSMaxCount": .integer(relationship.isToMany ? 0 : 1),
            "NSDeleteRule": .integer(deleteCodes[relationship.deleteRule]!),
            "NSDestinationEntity": slots.entities[relationship.destination] ?? KeyedArchiveWriter.null,
            "_NSDestinationEntityName": writer.string(relationship.destination),
            "_P": .integer(3 | (relationship.isOrdered ? 0x400 : 0)),
            "NSIsOptional": .bool(true),
        ]
        if relationship.isOrdered { members["NSIsOrdered"] = .bool(true) }
        if let inverse = relationship.inverse {
            members["_NSInverseRelationshipName"] = writer.string(inverse)
            members["NSInverseRelationship"] = slots.relationships[relationship.destination + "." + inverse] ?? KeyedArchiveWriter.null
        }
        return writer.objectValue("NSRelationshipDescription", superclasses: propertyClasses, members)
    }

    /// A copy of the description of `parent`'s property `name`, owned by `entity`.
    private static func copy(
        of name: String, in parent: CoreDataModelDescription.Entity, model: CoreDataModelDescription, entity: KeyedArchiveWriter.Value, writer: KeyedArchiveWriter
    ) -> KeyedArchiveWriter.Value {
        if let attribute = model.allAttributes(of: parent.name).first(where: { $0.name == name }) {
            return self.attribute(attribute, entity: entity, writer: writer)
        }
        if let relationship = model.allRelationships(of: parent.name).first(where: { $0.name == name }) {
            return writer.add(self.relationship(relationship, entity: entity, slots: ([:], [:]), writer: writer))
        }
        return transient(name, entity: entity, writer: writer)
    }

    /// A transient string attribute, which the model file leaves out.
    private static func transient(_ name: String, entity: KeyedArchiveWriter.Value, writer: KeyedArchiveWriter) -> KeyedArchiveWriter.Value {
        writer.object("NSAttributeDescription", superclasses: propertyClasses, [
            "NSPropertyName": writer.string(name), "NSEntity": entity, "NSAttributeType": .integer(700),
            "NSIsTransient": .bool(true), "NSIsOptional": .bool(true), "_P": .integer(1 | 2 | 8),
        ])
    }

    /// The archived default value: an `NSNumber`, `NSString`, `NSDate` or `NSUUID`.
    private static func defaultValue(_ text: String, type: CoreDataModelDescription.AttributeType, writer: KeyedArchiveWriter) -> KeyedArchiveWriter.Value {
        switch type {
        case .boolean: return .bool(["YES", "TRUE", "1"].contains(text.uppercased()))
        case .integer16, .integer32, .integer64: return .integer(Int64(text) ?? 0)
        case .double, .float, .decimal: return .real(Double(text) ?? 0)
        case .date: return writer.object("NSDate", ["NS.time": .real(Double(text) ?? 0)])
        case .uuid:
            let uuid = UUID(uuidString: text) ?? UUID()
            return writer.object("NSUUID", ["NS.uuidbytes": .data(withUnsafeBytes(of: uuid.uuid) { Data($0) })])
        case .string, .uri, .binary, .transformable: return writer.string(text)
        }
    }

    private static let typeCodes: [CoreDataModelDescription.AttributeType: Int64] = [
        .integer16: 100, .integer32: 200, .integer64: 300, .decimal: 400, .double: 500, .float: 600, .string: 700,
        .boolean: 800, .date: 900, .binary: 1000, .uuid: 1100, .uri: 1200, .transformable: 1800,
    ]
    private static let deleteCodes: [CoreDataModelDescription.DeleteRule: Int64] = [.noAction: 0, .nullify: 1, .cascade: 2, .deny: 3]
}
