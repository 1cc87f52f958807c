/// One step of a coding path: a key, or an index in an array.
package enum FastJSONPathComponent {
    case key(any CodingKey)
    case index(Int)

    var codingKey: any CodingKey {
        switch self {
        case .key(let key): key
        case .index(let index): FastJSONIndexKey(index)
        }
    }
}

/// The key of an array element in a coding path, as `JSONDecoder` names it: `Index 3`.
/// Holds only the index; the text is made when asked for (in error messages).
struct FastJSONIndexKey: CodingKey {
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { index = intValue }
    var stringValue: String { "Index \(index)" }
    var intValue: Int? { index }
}

/// A key that is only a string, as `JSONDecoder` makes for `superDecoder()`.
struct FastJSONStringKey: CodingKey {
    let stringValue: String
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    var intValue: Int? { nil }
    static let `super` = FastJSONStringKey("super")
}

/// A shared, immutable run of one or two path components after a parent run.
package final class FastJSONPathNode {
    let parent: FastJSONPathNode?
    let first: FastJSONPathComponent
    let second: FastJSONPathComponent?

    init(parent: FastJSONPathNode?, first: FastJSONPathComponent, second: FastJSONPathComponent?) {
        self.parent = parent
        self.first = first
        self.second = second
    }

    var codingPath: [any CodingKey] {
        var runs: [FastJSONPathNode] = []
        var node: FastJSONPathNode? = self
        while let current = node {
            runs.append(current)
            node = current.parent
        }
        var path: [any CodingKey] = []
        for run in runs.reversed() {
            path.append(run.first.codingKey)
            if let second = run.second { path.append(second.codingKey) }
        }
        return path
    }
}

/// A coding path kept cheap to extend: a shared node and up to two more components held
/// inline. Appending a third component moves the two inline ones into a new node, so most
/// nested values get their path without allocating.
package struct FastJSONPath {
    package var node: FastJSONPathNode?
    /// How many of `first` and `second` are part of the path.
    var inline: Int
    var first: FastJSONPathComponent
    var second: FastJSONPathComponent

    package static var root: FastJSONPath { FastJSONPath(node: nil) }

    @inline(__always) package init(node: FastJSONPathNode?) {
        self.node = node
        inline = 0
        first = .index(0)
        second = .index(0)
    }

    @inline(__always) init(node: FastJSONPathNode?, first: FastJSONPathComponent) {
        self.node = node
        inline = 1
        self.first = first
        second = .index(0)
    }

    @inline(__always) init(node: FastJSONPathNode?, first: FastJSONPathComponent, second: FastJSONPathComponent) {
        self.node = node
        inline = 2
        self.first = first
        self.second = second
    }

    @inline(__always) package func appending(_ component: FastJSONPathComponent) -> FastJSONPath {
        switch inline {
        case 0: FastJSONPath(node: node, first: component)
        case 1: FastJSONPath(node: node, first: first, second: component)
        default: FastJSONPath(node: FastJSONPathNode(parent: node, first: first, second: second), first: component)
        }
    }

    /// The same path as one node (or `nil` for the empty path), so that appending to it never
    /// allocates again.
    package var materialized: FastJSONPathNode? {
        switch inline {
        case 0: node
        case 1: FastJSONPathNode(parent: node, first: first, second: nil)
        default: FastJSONPathNode(parent: node, first: first, second: second)
        }
    }

    /// The same path with at most one inline component.
    var compacted: FastJSONPath {
        inline < 2 ? self : FastJSONPath(node: materialized)
    }

    package var codingPath: [any CodingKey] {
        var path = node?.codingPath ?? []
        if inline > 0 { path.append(first.codingKey) }
        if inline > 1 { path.append(second.codingKey) }
        return path
    }

    /// The path with `key` appended (nothing for ``FastJSONNoKey``).
    func codingPath<Key: CodingKey>(appending key: Key) -> [any CodingKey] {
        var path = codingPath
        if Key.self != FastJSONNoKey.self { path.append(key) }
        return path
    }

    /// This path extended by `key` as a component (nothing for ``FastJSONNoKey``).
    func appending<Key: CodingKey>(codingKey key: Key) -> FastJSONPath {
        if Key.self == FastJSONNoKey.self { return self }
        if Key.self == FastJSONIndexKey.self { return appending(.index(unsafeBitCast(key, to: FastJSONIndexKey.self).index)) }
        return appending(.key(key))
    }
}

/// Stands for "no key": a value decoded through a single-value container, at its decoder's
/// own path.
struct FastJSONNoKey: CodingKey {
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
    var stringValue: String { "" }
    var intValue: Int? { nil }
}
