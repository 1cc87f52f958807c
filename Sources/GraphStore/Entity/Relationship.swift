/// What happens to an object that references a deleted object, like SQL's `ON DELETE`.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable {
    /// The reference is removed: a to-one becomes `nil`, a to-many loses the id.
    case nullify
    /// The referencing object is deleted too, and so on down its own references.
    case cascade
    /// The save that deletes the target throws while references to it remain.
    case deny
}

/// A reference held by an entity to objects of another (or the same) entity.
///
/// Declared on the object that holds the reference; its ``DeleteRule`` says what happens to that
/// object when the target is deleted. The core keeps an inverse index per relationship, so
/// delete rules and "notes with tag X" cost O(related objects), not O(store).
///
/// ```swift
/// static var relationships: [Relationship<Note>] {
///     [.toMany(\.tagIDs, Tag.self, deleteRule: .nullify)]
/// }
/// ```
///
/// Every id a relationship holds must name an existing object when the save commits; a save
/// that would leave a reference to a missing object throws
/// ``GraphStoreError/danglingReference(entity:id:relationship:targetEntity:targetID:)``.
public struct Relationship<Source: Entity>: Sendable {
    /// The property name, such as `tagIDs`.
    public let name: String
    /// The delete rule applied to the source object when a target is deleted.
    public let deleteRule: DeleteRule
    /// Whether the property holds many ids.
    public let isToMany: Bool
    let targetType: any Entity.Type
    let targets: @Sendable (Source) -> [ObjectKey]
    /// The targets read at the address of a `Source`, when the property is stored in its own
    /// layout: passing the object to `targets` copies it, retaining each string and array in it.
    let targetsAt: (@Sendable (UnsafeRawPointer) -> [ObjectKey])?
    let removing: @Sendable (inout Source, ObjectKey) -> Void
    let replacing: @Sendable (inout Source, ObjectKey, ObjectKey) -> Void

    /// A reference to at most one object, held as an optional id.
    ///
    /// - Parameters:
    ///   - keyPath: The property holding the target's id, such as `\.authorID`.
    ///   - target: The target entity type.
    ///   - deleteRule: What happens to this object when the target is deleted.
    @inlinable
    public static func toOne<Target: Entity>(
        _ keyPath: WritableKeyPath<Source, Target.ID?> & Sendable,
        _ target: Target.Type,
        deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        // The targets are read by closures compiled where the types are known (see `toMany`).
        toOne(
            keyPath, target, deleteRule: deleteRule, targets: { source in source[keyPath: keyPath].map { [ObjectKey($0)] } ?? [] },
            targetsAt: storedTargets(keyPath) { (id: Target.ID?) in id.map { [ObjectKey($0)] } ?? [] })
    }

    /// The targets read at the offset of `keyPath` in `Source`, or `nil` when the property
    /// is not stored in its own layout.
    @inlinable
    static func storedTargets<Value>(
        _ keyPath: WritableKeyPath<Source, Value>, _ keys: @escaping @Sendable (Value) -> [ObjectKey]
    ) -> (@Sendable (UnsafeRawPointer) -> [ObjectKey])? {
        guard let offset = MemoryLayout<Source>.offset(of: keyPath) else { return nil }
        return { address in keys(address.load(fromByteOffset: offset, as: Value.self)) }
    }

    @usableFromInline
    static func toOne<Target: Entity>(
        _ keyPath: WritableKeyPath<Source, Target.ID?> & Sendable,
        _ target: Target.Type,
        deleteRule: DeleteRule,
        targets: @escaping @Sendable (Source) -> [ObjectKey],
        targetsAt: (@Sendable (UnsafeRawPointer) -> [ObjectKey])?
    ) -> Relationship {
        Relationship(
            name: propertyName(keyPath), deleteRule: deleteRule, isToMany: false, targetType: target,
            targets: targets, targetsAt: targetsAt,
            removing: { source, key in
                if let id = source[keyPath: keyPath], ObjectKey(id) == key { source[keyPath: keyPath] = nil }
            },
            replacing: { source, old, new in
                if let id = source[keyPath: keyPath], ObjectKey(id) == old, let newID = new.value(as: Target.ID.self) {
                    source[keyPath: keyPath] = newID
                }
            })
    }

    /// A reference to any number of objects, held as an ordered array of ids.
    ///
    /// - Parameters:
    ///   - keyPath: The property holding the targets' ids, such as `\.tagIDs`.
    ///   - target: The target entity type.
    ///   - deleteRule: What happens to this object when one of its targets is deleted.
    @inlinable
    public static func toMany<Target: Entity>(
        _ keyPath: WritableKeyPath<Source, [Target.ID]> & Sendable,
        _ target: Target.Type,
        deleteRule: DeleteRule = .nullify
    ) -> Relationship {
        // Inlinable, so that the targets are read by closures compiled where the types are
        // known; at the property's offset when it is stored, instead of a key-path walk
        // generic over the types, which copied the object and looked up type metadata for
        // every object read at open.
        toMany(
            keyPath, target, deleteRule: deleteRule, targets: { source in source[keyPath: keyPath].map { ObjectKey($0) } },
            targetsAt: storedTargets(keyPath) { (ids: [Target.ID]) in ids.map { ObjectKey($0) } })
    }

    @usableFromInline
    static func toMany<Target: Entity>(
        _ keyPath: WritableKeyPath<Source, [Target.ID]> & Sendable,
        _ target: Target.Type,
        deleteRule: DeleteRule,
        targets: @escaping @Sendable (Source) -> [ObjectKey],
        targetsAt: (@Sendable (UnsafeRawPointer) -> [ObjectKey])?
    ) -> Relationship {
        Relationship(
            name: propertyName(keyPath), deleteRule: deleteRule, isToMany: true, targetType: target,
            targets: targets, targetsAt: targetsAt,
            removing: { source, key in
                source[keyPath: keyPath].removeAll { ObjectKey($0) == key }
            },
            replacing: { source, old, new in
                guard let newID = new.value(as: Target.ID.self) else { return }
                // The old id becomes the new one; if the new one was already there, it stays once,
                // at its first position.
                var sawNew = false
                source[keyPath: keyPath] = source[keyPath: keyPath].compactMap { id in
                    let id = ObjectKey(id) == old ? newID : id
                    if id == newID {
                        if sawNew { return nil }
                        sawNew = true
                    }
                    return id
                }
            })
    }
}
