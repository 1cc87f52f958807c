import Foundation
import GraphStore

/// A Core Data model as the app declared it: entities, attributes with their types,
/// optionality and defaults, relationships with their inverses and delete rules, and unique
/// constraints. Read from the app's `.xcdatamodeld` / `.xcdatamodel` with ``read(from:)``, or
/// by ``CoreDataImporter`` from the store's own model cache (see ``origin``).
///
/// ```swift
/// let model = try CoreDataModelDescription.read(from: URL(fileURLWithPath: "Notes.xcdatamodeld"))
/// let (snapshot, report) = try CoreDataImporter.snapshot(from: storeURL, options: CoreDataImportOptions(model: model))
/// ```
public struct CoreDataModelDescription: Sendable, Hashable {
    /// An attribute's declared type (`attributeType` in the model file).
    public enum AttributeType: String, Sendable, Hashable, CaseIterable {
        case integer16 = "Integer 16", integer32 = "Integer 32", integer64 = "Integer 64"
        case decimal = "Decimal", double = "Double", float = "Float"
        case string = "String", boolean = "Boolean", date = "Date"
        case binary = "Binary", transformable = "Transformable", uuid = "UUID", uri = "URI"
    }

    /// What deleting an object does to the objects a relationship reaches (Core Data's rule).
    public enum DeleteRule: String, Sendable, Hashable {
        case nullify = "Nullify", cascade = "Cascade", deny = "Deny", noAction = "No Action"
    }

    /// One attribute.
    public struct Attribute: Sendable, Hashable {
        /// The attribute's name in the model.
        public var name: String
        /// Its Core Data type.
        public var type: AttributeType
        /// Whether the model marks it optional (a NULL is then kept as nil).
        public var isOptional: Bool
        /// `defaultValueString` as the model file has it.
        public var defaultValue: String?
        /// "Allows External Storage": the value may be a file in the store's support folder.
        public var allowsExternalStorage: Bool
    }

    /// One relationship.
    public struct Relationship: Sendable, Hashable {
        /// The relationship's name in the model.
        public var name: String
        /// The name of the entity it reaches.
        public var destination: String
        /// Whether it reaches several objects.
        public var isToMany: Bool
        /// Whether a to-many relationship keeps its order (an ordered set in Core Data).
        public var isOrdered: Bool
        /// The name of the inverse relationship on the destination, if the model names one.
        public var inverse: String?
        /// What deleting the source does to the objects it reaches.
        public var deleteRule: DeleteRule
    }

    /// One entity; ``attributes`` and ``relationships`` are its own, not its parent's.
    public struct Entity: Sendable, Hashable {
        /// The entity's name in the model.
        public var name: String
        /// The parent entity's name, for a sub-entity.
        public var parent: String?
        /// Whether the model marks it abstract (it has no objects of its own).
        public var isAbstract: Bool
        /// Its own attributes, in the model's order.
        public var attributes: [Attribute]
        /// Its own relationships, in the model's order.
        public var relationships: [Relationship]
        /// Each constraint's property names.
        public var uniqueConstraints: [[String]]
    }

    /// Where a model was read from.
    public enum Origin: Sendable, Hashable {
        /// The app's model file: `.xcdatamodeld`, `.xcdatamodel` or `contents`.
        case modelFile
        /// The store's own copy of its model, `Z_MODELCACHE`.
        case modelCache
    }

    /// The entities: in the file's order from a model file, by name from a model cache.
    public var entities: [Entity]
    /// The `contents` file the model was read from, or the store whose model cache it is.
    public var path: String
    /// Where the model was read from.
    public var origin: Origin = .modelFile

    /// The entity named `name`.
    public func entity(_ name: String) -> Entity? { entities.first { $0.name == name } }

    /// The entity's attributes, its ancestors' first.
    public func allAttributes(of name: String) -> [Attribute] {
        guard let entity = entity(name) else { return [] }
        return (entity.parent.map { allAttributes(of: $0) } ?? []) + entity.attributes
    }

    /// The entity's relationships, its ancestors' first.
    public func allRelationships(of name: String) -> [Relationship] {
        guard let entity = entity(name) else { return [] }
        return (entity.parent.map { allRelationships(of: $0) } ?? []) + entity.relationships
    }

    /// The relationship `relationship.inverse` names, on its destination.
    public func inverse(of relationship: Relationship) -> Relationship? {
        guard let inverse = relationship.inverse else { return nil }
        return allRelationships(of: relationship.destination).first { $0.name == inverse }
    }

    /// Whether `name` has sub-entities.
    public func hasSubEntities(_ name: String) -> Bool { entities.contains { $0.parent == name } }

    /// Reads a model: an `.xcdatamodeld` folder (its current version, named in
    /// `.xccurrentversion`, or its only version), an `.xcdatamodel` folder, or a `contents` file.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)`` for a
    ///   missing file or version, or one that is no regular file (a pipe, a device);
    ///   ``GraphStore/GraphStoreError/damagedFile(path:offset:reason:)`` for XML that does not
    ///   parse or is no Core Data model, naming the line.
    /// - Complexity: O(size of the file).
    public static func read(from url: URL) throws -> CoreDataModelDescription {
        let contents = try contentsFile(of: url.standardizedFileURL)
        // A pipe would block the read until a writer came, a device might never end.
        if let irregularity = try FileStatus.found(atPath: contents.path, operation: "Reading the model").irregularity {
            throw GraphStoreError.fileOperationFailed(path: contents.path, operation: "Reading the model", reason: irregularity)
        }
        let data: Data
        do {
            data = try Data(contentsOf: contents)
        } catch {
            throw GraphStoreError.fileOperationFailed(path: contents.path, operation: "Reading the model", reason: "\(error.localizedDescription)")
        }
        return try parse(data, path: contents.path)
    }

    /// Parses the XML of a `contents` file; `path` names it in errors.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/damagedFile(path:offset:reason:)`` for XML that does
    ///   not parse, or an entity, attribute or relationship without a name, type or destination.
    public static func parse(_ data: Data, path: String) throws -> CoreDataModelDescription {
        try CoreDataModelXML.parse(data, path: path)
    }

    // MARK: - Internal

    /// What to do about a store that does not match the model, for errors.
    var mismatchAdvice: String {
        switch origin {
        case .modelFile: "pass the model the store was written with"
        case .modelCache:
            "the store's own model cache (Z_MODELCACHE) does not match its tables, so the store is damaged or was changed by hand; pass the app's model with --model (CoreDataImportOptions.model)"
        }
    }

    // MARK: - Private

    private static func contentsFile(of url: URL) throws -> URL {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw GraphStoreError.fileOperationFailed(path: url.path, operation: "Reading the model", reason: "no such file or folder")
        }
        guard isDirectory.boolValue else { return url }
        if url.pathExtension.lowercased() == "xcdatamodeld" {
            let versions = ((try? manager.contentsOfDirectory(atPath: url.path)) ?? []).filter { $0.hasSuffix(".xcdatamodel") }.sorted()
            var current: String?
            let marker = url.appendingPathComponent(".xccurrentversion")
            if let data = try? Data(contentsOf: marker),
                let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] {
                current = plist["_XCCurrentVersionName"] as? String
            }
            guard let version = current ?? (versions.count == 1 ? versions[0] : nil) else {
                throw GraphStoreError.fileOperationFailed(
                    path: url.path, operation: "Reading the model",
                    reason: versions.isEmpty ? "it holds no .xcdatamodel version" : "it has no readable .xccurrentversion to choose among \(versions.joined(separator: ", "))")
            }
            return try contentsFile(of: url.appendingPathComponent(version))
        }
        let contents = url.appendingPathComponent("contents")
        guard manager.fileExists(atPath: contents.path) else {
            throw GraphStoreError.fileOperationFailed(path: contents.path, operation: "Reading the model", reason: "the model has no contents file")
        }
        return contents
    }
}
