import Foundation
import GraphStore
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads the XML `contents` file of an `.xcdatamodel` with Foundation's `XMLParser`.
enum CoreDataModelXML {
    static func parse(_ data: Data, path: String) throws -> CoreDataModelDescription {
        let parser = XMLParser(data: data)
        let delegate = Delegate()
        parser.delegate = delegate
        // On Linux `parse()` can return true and still set `parserError` (an unclosed element).
        let parsed = parser.parse()
        if !parsed || parser.parserError != nil {
            throw GraphStoreError.damagedFile(
                path: path, offset: nil,
                reason: "its XML does not parse at line \(parser.lineNumber), column \(parser.columnNumber) (\(parser.parserError.map { "\($0)" } ?? "unknown error"))")
        }
        if let problem = delegate.problem { throw GraphStoreError.damagedFile(path: path, offset: nil, reason: problem) }
        guard delegate.sawModel else {
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "it is XML but not a Core Data model: it has no <model> element")
        }
        return CoreDataModelDescription(entities: delegate.entities, path: path)
    }

    private final class Delegate: NSObject, XMLParserDelegate {
        var entities: [CoreDataModelDescription.Entity] = []
        var sawModel = false
        var problem: String?
        private var entity: CoreDataModelDescription.Entity?
        private var constraint: [String]?

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            guard problem == nil else { return }
            let line = parser.lineNumber
            switch name {
            case "model":
                sawModel = true
            case "entity":
                guard let entityName = attributes["name"], !entityName.isEmpty else {
                    problem = "the <entity> at line \(line) has no name"
                    return
                }
                entity = CoreDataModelDescription.Entity(
                    name: entityName, parent: attributes["parentEntity"], isAbstract: attributes["isAbstract"] == "YES",
                    attributes: [], relationships: [], uniqueConstraints: [])
            case "attribute":
                guard entity != nil, attributes["transient"] != "YES" else { return }
                guard let attributeName = attributes["name"], !attributeName.isEmpty else {
                    problem = "the <attribute> at line \(line) of entity \(entity!.name) has no name"
                    return
                }
                let typeName = attributes["attributeType"] ?? ""
                guard let type = CoreDataModelDescription.AttributeType(rawValue: typeName) else {
                    problem = "the attribute \(entity!.name).\(attributeName) at line \(line) has the type \"\(typeName)\", which is no Core Data attribute type (\(CoreDataModelDescription.AttributeType.allCases.map(\.rawValue).joined(separator: ", ")))"
                    return
                }
                // Xcode writes a date's default as seconds since 2001 in its own attribute.
                let defaultValue = type == .date ? attributes["defaultDateTimeInterval"] ?? attributes["defaultValueString"] : attributes["defaultValueString"]
                entity!.attributes.append(CoreDataModelDescription.Attribute(
                    name: attributeName, type: type, isOptional: attributes["optional"] == "YES", defaultValue: defaultValue,
                    allowsExternalStorage: attributes["allowsExternalBinaryDataStorage"] == "YES"))
            case "relationship":
                guard entity != nil, attributes["transient"] != "YES" else { return }
                guard let relationshipName = attributes["name"], !relationshipName.isEmpty, let destination = attributes["destinationEntity"] else {
                    problem = "the <relationship> at line \(line) of entity \(entity!.name) has no name or destinationEntity"
                    return
                }
                let isToMany = attributes["toMany"] == "YES"
                entity!.relationships.append(CoreDataModelDescription.Relationship(
                    name: relationshipName, destination: destination, isToMany: isToMany, isOrdered: isToMany && attributes["ordered"] == "YES",
                    inverse: attributes["inverseName"],
                    deleteRule: attributes["deletionRule"].flatMap(CoreDataModelDescription.DeleteRule.init(rawValue:)) ?? .nullify))
            case "uniquenessConstraint":
                constraint = []
            case "constraint":
                if let value = attributes["value"] { constraint?.append(value) }
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            switch name {
            case "entity":
                if let entity { entities.append(entity) }
                entity = nil
            case "uniquenessConstraint":
                if let constraint, !constraint.isEmpty { entity?.uniqueConstraints.append(constraint) }
                constraint = nil
            default:
                break
            }
        }
    }
}
