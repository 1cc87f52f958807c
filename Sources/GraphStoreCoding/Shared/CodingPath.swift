/// One step of a coding path: a key, or an index in an array.
package enum CodingPathComponent {
    case key(any CodingKey)
    case index(Int)

    var codingKey: any CodingKey {
        switch self {
        case .key(let key): key
        case .index(let index): IndexCodingKey(index)
        }
    }
}

/// The key of an array element in a coding path, as `JSONDecoder` names it: `Index 3`.
/// Holds only the index; the text is made when asked for (in error messages).
struct IndexCodingKey: CodingKey {
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { index = intValue }
    var stringValue: String { "Index \(index)" }
    var intValue: Int? { index }
}

/// A key that is only a string, as `JSONDecoder` makes for `superDecoder()`.
struct StringCodingKey: CodingKey {
    let stringValue: String
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    var intValue: Int? { nil }
    static let `super` = StringCodingKey("super")
}

/// A shared, immutable run of one or two path components after a parent run.
package final class CodingPathNode {
    let parent: CodingPathNode?
    let first: CodingPathComponent
    let second: CodingPathComponent?
    /// The components from the root to this run's last one.
    let count: Int

    init(parent: CodingPathNode?, first: CodingPathComponent, second: CodingPathComponent?) {
        self.parent = parent
        self.first = first
        self.second = second
        count = (parent?.count ?? 0) + (second == nil ? 1 : 2)
    }

    var codingPath: [any CodingKey] {
        var runs: [CodingPathNode] = []
        var node: CodingPathNode? = self
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
package struct CodingPath {
    package var node: CodingPathNode?
    /// How many of `first` and `second` are part of the path.
    var inline: Int
    var first: CodingPathComponent
    var second: CodingPathComponent

    package static var root: CodingPath { CodingPath(node: nil) }

    @inline(__always) package init(node: CodingPathNode?) {
        self.node = node
        inline = 0
        first = .index(0)
        second = .index(0)
    }

    @inline(__always) init(node: CodingPathNode?, first: CodingPathComponent) {
        self.node = node
        inline = 1
        self.first = first
        second = .index(0)
    }

    @inline(__always) init(node: CodingPathNode?, first: CodingPathComponent, second: CodingPathComponent) {
        self.node = node
        inline = 2
        self.first = first
        self.second = second
    }

    @inline(__always) package func appending(_ component: CodingPathComponent) -> CodingPath {
        switch inline {
        case 0: CodingPath(node: node, first: component)
        case 1: CodingPath(node: node, first: first, second: component)
        default: CodingPath(node: CodingPathNode(parent: node, first: first, second: second), first: component)
        }
    }

    /// The same path as one node (or `nil` for the empty path), so that appending to it never
    /// allocates again.
    package var materialized: CodingPathNode? {
        switch inline {
        case 0: node
        case 1: CodingPathNode(parent: node, first: first, second: nil)
        default: CodingPathNode(parent: node, first: first, second: second)
        }
    }

    /// The same path with at most one inline component.
    var compacted: CodingPath {
        inline < 2 ? self : CodingPath(node: materialized)
    }

    /// The number of components: how many arrays and dictionaries a document nests the value
    /// at this path in, when the path starts at the document's root.
    ///
    /// - Complexity: O(1).
    package var count: Int { (node?.count ?? 0) + inline }

    /// For an encoder about to open an array or a `containers` (objects, dictionaries) at this
    /// path, from the document's root: `nil` when it nests at most `maximumDepth` deep (a
    /// container at a path of n components is the (n + 1)th one down), else the error that
    /// refuses it.
    ///
    /// - Complexity: O(1) when it fits.
    @inline(__always)
    func nestingError(maximumDepth: Int, containers: String) -> EncodingError? {
        if _fastPath(count < maximumDepth) { return nil }
        return EncodingError.invalidValue([String: Any](), EncodingError.Context(
            codingPath: codingPath,
            debugDescription: "The value nests arrays and \(containers) deeper than \(maximumDepth) levels (counted from the document's root), which no reader of the store accepts: it would be written but could never be read back."))
    }

    package var codingPath: [any CodingKey] {
        var path = node?.codingPath ?? []
        if inline > 0 { path.append(first.codingKey) }
        if inline > 1 { path.append(second.codingKey) }
        return path
    }

    /// The path with `key` appended (nothing for ``NoCodingKey``).
    func codingPath<Key: CodingKey>(appending key: Key) -> [any CodingKey] {
        var path = codingPath
        if Key.self != NoCodingKey.self { path.append(key) }
        return path
    }

    /// This path extended by `key` as a component (nothing for ``NoCodingKey``).
    func appending<Key: CodingKey>(codingKey key: Key) -> CodingPath {
        if Key.self == NoCodingKey.self { return self }
        if Key.self == IndexCodingKey.self { return appending(.index(unsafeBitCast(key, to: IndexCodingKey.self).index)) }
        return appending(.key(key))
    }
}

/// Stands for "no key": a value decoded through a single-value container, at its decoder's
/// own path.
struct NoCodingKey: CodingKey {
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
    var stringValue: String { "" }
    var intValue: Int? { nil }
}
