import Foundation

/// One step of a model's history: the changes that turn a store written by model version
/// `from` into one that model version `to` reads.
///
/// Steps run in order on generic values (``SnapshotValue``), before the app's types decode
/// anything. A step names an entity by its stored name as it stands after the steps before it.
///
/// ```swift
/// let container = try GraphContainer(
///     for: [Note.self, Tag.self], store: .file(url), version: 2,
///     migrations: [
///         SchemaMigration(from: 1, to: 2, [
///             .renameEntity("Memo", to: "Note"),
///             .renameField("text", to: "body", in: "Note"),
///             .addField("pinned", in: "Note", default: .bool(false)),
///         ]),
///     ])
/// ```
///
/// Values reach the steps in the JSON snapshot conventions whatever the store's format:
/// dates are ``SnapshotValue/double(_:)`` (seconds since 2001-01-01), `Data` is
/// ``SnapshotValue/string(_:)`` (Base64). A step may also write ``SnapshotValue/date(_:)`` and
/// ``SnapshotValue/data(_:)``.
public struct SchemaMigration: Sendable {
    /// The model version the steps start from.
    public let from: Int
    /// The model version the steps lead to; greater than ``from``.
    public let to: Int
    /// The steps, in the order they run.
    public let steps: [Step]

    /// A migration from model version `from` to `to` by `steps`.
    ///
    /// `from` must be at least 1 and less than `to` (a precondition).
    public init(from: Int, to: Int, _ steps: [Step]) {
        precondition(from >= 1 && from < to, "GraphStore: a SchemaMigration goes from a version >= 1 to a greater one (got \(from) to \(to)).")
        self.from = from
        self.to = to
        self.steps = steps
    }
}

extension SchemaMigration {
    /// One change to the stored data. Build steps with the static functions, such as
    /// ``renameField(_:to:in:)``.
    public struct Step: Sendable, CustomStringConvertible {
        enum Kind: Sendable {
            case renameEntity(String, to: String)
            case renameField(String, to: String, in: String)
            case addField(String, in: String, default: SnapshotValue)
            case removeField(String, in: String)
            case removeEntity(String)
            case transform(String, @Sendable (inout [String: SnapshotValue]) throws -> Void)
            case transformStore(@Sendable (inout MigratingStore) throws -> Void)
        }

        let kind: Kind

        /// The stored entity `name` is called `newName` from now on (the Swift type, or its
        /// `entityName`, was renamed). Nothing happens when the store has no entity `name`.
        ///
        /// - Throws at open: ``GraphStoreError/migrationFailed(path:fromVersion:toVersion:entity:field:id:reason:)``
        ///   when the store already holds objects of `newName`.
        /// - Complexity: O(1).
        public static func renameEntity(_ name: String, to newName: String) -> Step {
            Step(kind: .renameEntity(name, to: newName))
        }

        /// Every object of `entity` holding `field` holds its value under `newName` instead.
        ///
        /// - Throws at open: ``GraphStoreError/migrationFailed(path:fromVersion:toVersion:entity:field:id:reason:)``
        ///   for an object that already holds a non-null `newName`, or when either name is `id`.
        /// - Complexity: O(objects of the entity).
        public static func renameField(_ field: String, to newName: String, in entity: String) -> Step {
            Step(kind: .renameField(field, to: newName, in: entity))
        }

        /// Every object of `entity` without `field` gets `value` (objects that hold it, even
        /// as `null`, keep theirs). Synthesized `Codable` ignores a property's default value,
        /// so a new non-optional property needs this step.
        ///
        /// - Complexity: O(objects of the entity).
        public static func addField(_ field: String, in entity: String, default value: SnapshotValue) -> Step {
            Step(kind: .addField(field, in: entity, default: value))
        }

        /// Every object of `entity` loses `field`.
        ///
        /// - Throws at open: ``GraphStoreError/migrationFailed(path:fromVersion:toVersion:entity:field:id:reason:)``
        ///   when `field` is `id`.
        /// - Complexity: O(objects of the entity).
        public static func removeField(_ field: String, in entity: String) -> Step {
            Step(kind: .removeField(field, in: entity))
        }

        /// The entity `name` and all its objects are dropped. References to them from other
        /// entities must be removed too (by another step), or the migrated graph is refused.
        ///
        /// - Complexity: O(1).
        public static func removeEntity(_ name: String) -> Step {
            Step(kind: .removeEntity(name))
        }

        /// Runs `body` on the fields of every object of `entity`, in stored order.
        ///
        /// ```swift
        /// .transform("Note") { object in
        ///     if case .string(let body)? = object["body"] { object["title"] = .string(String(body.prefix(40))) }
        /// }
        /// ```
        ///
        /// - Throws at open: ``GraphStoreError/migrationFailed(path:fromVersion:toVersion:entity:field:id:reason:)``
        ///   naming the object's id when `body` throws; the store is left as it was.
        /// - Complexity: O(objects of the entity) calls of `body`.
        public static func transform(_ entity: String, _ body: @escaping @Sendable (inout [String: SnapshotValue]) throws -> Void) -> Step {
            Step(kind: .transform(entity, body))
        }

        /// Runs `body` on the whole store at once: for changes that span entities, such as
        /// splitting an entity, moving a field from one entity to another or deriving
        /// relationships.
        ///
        /// ```swift
        /// .transformStore { store in
        ///     store["Pin"] = store["Note"].filter { $0["pinned"] == .bool(true) }
        ///         .map { ["id": $0["id"]!, "noteID": $0["id"]!] }
        /// }
        /// ```
        ///
        /// - Throws at open: ``GraphStoreError/migrationFailed(path:fromVersion:toVersion:entity:field:id:reason:)``
        ///   when `body` throws.
        /// - Complexity: whatever `body` does.
        public static func transformStore(_ body: @escaping @Sendable (inout MigratingStore) throws -> Void) -> Step {
            Step(kind: .transformStore(body))
        }

        public var description: String {
            switch kind {
            case let .renameEntity(name, newName): ".renameEntity(\"\(name)\", to: \"\(newName)\")"
            case let .renameField(field, newName, entity): ".renameField(\"\(field)\", to: \"\(newName)\", in: \"\(entity)\")"
            case let .addField(field, entity, value): ".addField(\"\(field)\", in: \"\(entity)\", default: \(value))"
            case let .removeField(field, entity): ".removeField(\"\(field)\", in: \"\(entity)\")"
            case let .removeEntity(name): ".removeEntity(\"\(name)\")"
            case let .transform(entity, _): ".transform(\"\(entity)\")"
            case .transformStore: ".transformStore"
            }
        }
    }
}

/// Every object of a store being migrated, per stored entity name, as fields: what a
/// ``SchemaMigration/Step/transformStore(_:)`` step changes.
///
/// Each object must keep an `id` that is unique within its entity.
public struct MigratingStore: Sendable, Equatable {
    /// Objects per entity name, in stored order.
    public var entities: [String: [[String: SnapshotValue]]]

    /// A store of `entities`.
    public init(_ entities: [String: [[String: SnapshotValue]]] = [:]) {
        self.entities = entities
    }

    /// The stored entity names, sorted.
    public var entityNames: [String] {
        entities.keys.sorted()
    }

    /// The objects of `entity` (empty when the store has none); setting adds the entity.
    ///
    /// - Complexity: O(1) to read; O(objects) to set.
    public subscript(entity: String) -> [[String: SnapshotValue]] {
        get { entities[entity] ?? [] }
        set { entities[entity] = newValue }
    }

    /// Drops the entity `name` and its objects.
    public mutating func removeEntity(_ name: String) {
        entities[name] = nil
    }
}
