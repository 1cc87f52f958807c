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
    /// Per property, a reader of its value at the address of an `E` (see
    /// ``IndexValue/reader(_:)``).
    let readers: [IndexValueReader]

    /// An index over one or more non-optional `Comparable` properties, compared in order.
    public init<each V: Comparable & Sendable>(_ keyPath: repeat KeyPath<E, each V> & Sendable) {
        var paths: [AnyKeyPath & Sendable] = []
        var readers: [IndexValueReader] = []
        for path in repeat each keyPath {
            paths.append(path)
            readers.append(IndexValue.reader(path))
        }
        precondition(!paths.isEmpty, "GraphStore: an EntityIndex needs at least one key path.")
        self.init(paths: paths, readers: readers)
    }

    /// An index over one optional `Comparable` property; `nil` sorts first.
    public init<V: Comparable & Sendable>(_ keyPath: KeyPath<E, V?> & Sendable) {
        self.init(paths: [keyPath], readers: [IndexValue.reader(keyPath)])
    }

    /// A compound index whose second property is optional; `nil` sorts first.
    public init<V1: Comparable & Sendable, V2: Comparable & Sendable>(
        _ first: KeyPath<E, V1> & Sendable, _ second: KeyPath<E, V2?> & Sendable
    ) {
        self.init(paths: [first, second], readers: [IndexValue.reader(first), IndexValue.reader(second)])
    }

    private init(paths: [AnyKeyPath & Sendable], readers: [IndexValueReader]) {
        keyPaths = paths
        self.readers = readers
        let names = paths.map(propertyName)
        name = names.count == 1 ? names[0] : "(" + names.joined(separator: ", ") + ")"
    }
}

/// One value of a sorted index, read from the address of an object of the index's entity.
typealias IndexValueReader = @Sendable (UnsafeRawPointer) -> IndexValue

extension IndexValue {
    /// A reader of the value `keyPath` names at the address of an `E`.
    ///
    /// A property stored in `E`'s own layout is read at its offset: a key path applied to the
    /// object, or a closure taking the object, copy the whole object (retaining each string and
    /// array in it) and, in code generic over the types, look up type metadata for every
    /// value. Opening a store reads every indexed value of every object. Any other property (a
    /// computed one, or one of a class) is read through the key path.
    ///
    /// - Complexity: O(1) per read.
    static func reader<E, V>(_ keyPath: KeyPath<E, V> & Sendable) -> IndexValueReader {
        guard let offset = MemoryLayout<E>.offset(of: keyPath) else {
            return { IndexValue($0.assumingMemoryBound(to: E.self).pointee[keyPath: keyPath]) }
        }
        if V.self == Date.self { return { .date($0.load(fromByteOffset: offset, as: Date.self)) } }
        if V.self == Int.self { return { .int(Int64($0.load(fromByteOffset: offset, as: Int.self))) } }
        if V.self == Int64.self { return { .int($0.load(fromByteOffset: offset, as: Int64.self)) } }
        if V.self == Int32.self { return { .int(Int64($0.load(fromByteOffset: offset, as: Int32.self))) } }
        if V.self == String.self { return { .string($0.load(fromByteOffset: offset, as: String.self)) } }
        if V.self == Double.self { return { .double($0.load(fromByteOffset: offset, as: Double.self)) } }
        return { IndexValue(($0 + offset).assumingMemoryBound(to: V.self).pointee) }
    }
}
