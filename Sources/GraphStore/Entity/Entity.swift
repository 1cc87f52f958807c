import Foundation

/// A type whose values GraphStore keeps: a plain `Codable`, `Sendable` struct with a stable id.
///
/// Values are copied in and out of contexts; nothing is bound to a thread or a context, so a
/// value fetched on one task can be handed to any other.
///
/// ```swift
/// struct Tag: Entity {
///     var id: UUID = UUID()
///     var name: String
///     static var uniqueConstraints: [UniqueConstraint<Tag>] { [UniqueConstraint(\.name)] }
/// }
/// ```
///
/// Every static requirement has a default: `entityName` is the type's name, and there are no
/// unique constraints and no relationships.
public protocol Entity: Codable, Sendable, Identifiable where ID: Codable & Sendable & Hashable {
    /// The name the entity is stored under in snapshot files and SQLite tables.
    ///
    /// Defaults to the type's name. Changing it renames the entity on disk.
    static var entityName: String { get }

    /// Values that must be unique across every object of this entity, checked at commit.
    static var uniqueConstraints: [UniqueConstraint<Self>] { get }

    /// The references this entity holds to other objects, with what happens when a target is deleted.
    static var relationships: [Relationship<Self>] { get }

    /// Sorted indexes kept with every committed version, used by fetches whose predicate or
    /// sort order they match (see ``EntityIndex``). Defaults to none.
    static var indexes: [EntityIndex<Self>] { get }
}

extension Entity {
    /// The type's name, as `String(describing:)` gives it: the entity's name in snapshot files
    /// and the table name in SQLite stores.
    public static var entityName: String { String(describing: Self.self) }
    /// No unique constraints.
    public static var uniqueConstraints: [UniqueConstraint<Self>] { [] }
    /// No relationships.
    public static var relationships: [Relationship<Self>] { [] }
    /// No sorted indexes: fetches scan the entity's table.
    public static var indexes: [EntityIndex<Self>] { [] }
}
