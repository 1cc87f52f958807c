import Foundation

/// A sorted index over one or more properties of an entity, kept with every committed version.
///
/// Declare indexes on the entity; fetches whose predicate compares an indexed property with a
/// constant (`==`, `<`, `<=`, `>`, `>=`, joined by `&&`), or whose sort order matches an
/// index's order or its reverse, walk the index instead of scanning every object:
///
/// ```swift
/// struct Post: Entity {
///     var id: Int64
///     var blogName: String
///     var date: Date
///     static var indexes: [EntityIndex<Post>] { [EntityIndex(\.date), EntityIndex(\.blogName, \.date)] }
/// }
/// ```
///
/// Entries are ordered by the properties in the order given, `nil` first (as SQLite's `NULL`),
/// then by id (see ``ObjectKey`` ordering: ids of the same type in their natural order).
/// Duplicate values are allowed.
///
/// - Complexity: O(log n) per index for each object a commit changes; O(1) per version kept.
public struct EntityIndex<E: Entity>: Sendable {
    /// A readable name, such as `date` or `(blogName, date)`.
    public let name: String
    let keyPaths: [AnyKeyPath & Sendable]
    let components: [@Sendable (E) -> IndexValue]

    /// An index over one or more non-optional `Comparable` properties, compared in order.
    public init<each V: Comparable & Sendable>(_ keyPath: repeat KeyPath<E, each V> & Sendable) {
        var paths: [AnyKeyPath & Sendable] = []
        var components: [@Sendable (E) -> IndexValue] = []
        for path in repeat each keyPath {
            paths.append(path)
            components.append { IndexValue($0[keyPath: path]) }
        }
        precondition(!paths.isEmpty, "GraphStore: an EntityIndex needs at least one key path.")
        self.init(paths: paths, components: components)
    }

    /// An index over one optional `Comparable` property; `nil` sorts first.
    public init<V: Comparable & Sendable>(_ keyPath: KeyPath<E, V?> & Sendable) {
        self.init(paths: [keyPath], components: [{ IndexValue($0[keyPath: keyPath]) }])
    }

    /// A compound index whose second property is optional; `nil` sorts first.
    public init<V1: Comparable & Sendable, V2: Comparable & Sendable>(
        _ first: KeyPath<E, V1> & Sendable, _ second: KeyPath<E, V2?> & Sendable
    ) {
        self.init(paths: [first, second], components: [{ IndexValue($0[keyPath: first]) }, { IndexValue($0[keyPath: second]) }])
    }

    private init(paths: [AnyKeyPath & Sendable], components: [@Sendable (E) -> IndexValue]) {
        keyPaths = paths
        self.components = components
        let names = paths.map(propertyName)
        name = names.count == 1 ? names[0] : "(" + names.joined(separator: ", ") + ")"
    }
}
