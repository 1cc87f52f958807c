/// A value, or combination of values, that no two objects of an entity may share.
///
/// Checked at commit against the whole store. Under ``MergePolicy/error`` a violating save
/// throws ``GraphStoreError/uniqueConstraintViolation(entity:constraint:value:existingID:incomingID:)``;
/// under the other policies the incoming object is merged into the existing one (see
/// ``MergePolicy``). A `nil` optional value never collides, as `NULL` in SQL.
///
/// ```swift
/// static var uniqueConstraints: [UniqueConstraint<Tag>] { [UniqueConstraint(\.name)] }
/// ```
public struct UniqueConstraint<E: Entity>: Sendable {
    /// A readable name for errors, such as `name` or `(blog, serverID)`.
    public let name: String
    /// The constrained properties, in order.
    let keyPaths: [AnyKeyPath & Sendable]
    let key: @Sendable (E) -> ObjectKey?

    /// One property whose value is unique.
    ///
    /// - Complexity: O(1) per object at commit (a hash lookup).
    public init<V: Hashable & Sendable>(_ keyPath: KeyPath<E, V> & Sendable) {
        name = propertyName(keyPath)
        keyPaths = [keyPath]
        key = { object in
            let value = object[keyPath: keyPath]
            if let optional = value as? any OptionalValue, optional.isNil { return nil }
            return ObjectKey(value)
        }
    }

    /// Two properties whose combination is unique.
    public init<V1: Hashable & Sendable, V2: Hashable & Sendable>(
        _ first: KeyPath<E, V1> & Sendable, _ second: KeyPath<E, V2> & Sendable
    ) {
        name = "(\(propertyName(first)), \(propertyName(second)))"
        keyPaths = [first, second]
        key = { object in
            let a = object[keyPath: first], b = object[keyPath: second]
            if let optional = a as? any OptionalValue, optional.isNil { return nil }
            if let optional = b as? any OptionalValue, optional.isNil { return nil }
            return ObjectKey(CompoundKey(parts: [ObjectKey(a), ObjectKey(b)]))
        }
    }
}

/// `\Note.tagIDs` → `tagIDs`.
func propertyName(_ keyPath: AnyKeyPath) -> String {
    let text = keyPath.debugDescription
    guard let dot = text.firstIndex(of: ".") else { return text }
    return String(text[text.index(after: dot)...])
}
