import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import Testing

/// The stores a shared suite runs against: every test of the core suites must pass on each.
///
/// ```swift
/// @Test(arguments: StoreKind.allCases)
/// func insertSaveFetch(store: StoreKind) async throws {
///     try await withContainer(store) { container in
///         container.mainContext.insert(Tag(name: "swift"))
///         try container.mainContext.save()
///     }
/// }
/// ```
public enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// ``StoreConfiguration/inMemory``.
    case inMemory
    /// A gzip-compressed JSON snapshot file, `store.json.gz`, with the default coalescing interval.
    case file
    /// A SQLite database, `store.sqlite`.
    case sqlite

    public var testDescription: String { rawValue }

    /// Whether the store keeps the graph between containers.
    public var isPersistent: Bool { self != .inMemory }
}

/// A store of one ``StoreKind`` in a fresh temporary directory, with a container open on it.
///
/// ``close()`` closes the container, then (for a file or SQLite store) reopens the store and
/// checks that it holds exactly the graph the container had committed, and removes the
/// directory. Prefer ``withContainer(_:for:function:sourceLocation:isolation:_:)``, which
/// closes on every path.
public final class TestStore: Sendable {
    public let kind: StoreKind
    public let types: [any Entity.Type]
    /// Where the file or SQLite store lives; `nil` for ``StoreKind/inMemory``.
    public let directory: TemporaryDirectory?
    public let configuration: StoreConfiguration
    public let container: GraphContainer

    /// Creates the directory and opens a container of `kind` for `types` in it.
    public init(_ kind: StoreKind, for types: [any Entity.Type] = exampleModel, function: String = #function) throws {
        self.kind = kind
        self.types = types
        switch kind {
        case .inMemory:
            directory = nil
            configuration = .inMemory
        case .file:
            let directory = try TemporaryDirectory(function: function)
            self.directory = directory
            configuration = .file(directory.file("store.json.gz"))
        case .sqlite:
            let directory = try TemporaryDirectory(function: function)
            self.directory = directory
            configuration = .sqlite(directory.file("store.sqlite"))
        }
        do {
            container = try GraphContainer(for: types, store: configuration)
        } catch {
            directory?.remove()
            throw error
        }
    }

    /// Opens another container on the same store (the first must be closed first).
    public func reopen() throws -> GraphContainer {
        try GraphContainer(for: types, store: configuration)
    }

    /// Closes the container (which flushes); for a persistent store, reopens it and records an
    /// issue unless it holds the committed graph and version; removes the directory.
    ///
    /// - Throws: the error closing the container (a failed write), or opening it again.
    public func close(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        defer { directory?.remove() }
        let committed = try kind.isPersistent ? Self.committedGraph(container, types) : [:]
        let version = container.version
        try await container.close()
        guard kind.isPersistent else { return }
        let reopened = try reopen()
        let stored = try Self.committedGraph(reopened, types)
        let reopenedVersion = reopened.version
        let invariants = Result { try reopened.checkInvariants() }
        try await reopened.close()
        try invariants.get()
        #expect(reopenedVersion == version, "the \(kind) store reopened at another version", sourceLocation: sourceLocation)
        for type in types {
            let name = type.entityName
            let expected = committed[name] ?? [], found = stored[name] ?? []
            guard expected != found else { continue }
            let missing = Set(expected).subtracting(found), extra = Set(found).subtracting(expected)
            Issue.record(
                """
                the reopened \(kind) store holds other \(name) objects than were committed: \
                \(expected.count) committed, \(found.count) stored; \(missing.count) missing, \
                such as \(missing.sorted().first ?? "-"); \(extra.count) unexpected, such as \(extra.sorted().first ?? "-")
                """, sourceLocation: sourceLocation)
        }
    }

    /// Every committed object by entity name, each encoded as sorted-key JSON, sorted: two
    /// containers hold the same graph when these are equal.
    public static func committedGraph(_ container: GraphContainer, _ types: [any Entity.Type]) throws -> [String: [String]] {
        var graph: [String: [String]] = [:]
        for type in types { graph[type.entityName] = try encodedObjects(type, container) }
        return graph
    }

    private static func encodedObjects<E: Entity>(_ type: E.Type, _ container: GraphContainer) throws -> [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try container.newBackgroundContext().fetch(FetchDescriptor<E>())
            .map { String(decoding: try encoder.encode($0), as: UTF8.self) }
            .sorted()
    }
}

/// Runs `body` with a new container of `kind` for `types` in a fresh temporary directory,
/// then closes it (whether `body` threw or not) and removes the directory.
///
/// For a file or SQLite store, closing also reopens the store and checks that it holds the
/// committed graph and version (see ``TestStore/close(sourceLocation:)``). `body` may close
/// the container itself.
///
/// - Throws: what `body` throws; otherwise the error closing or reopening the store.
public func withContainer<T>(
    _ kind: StoreKind, for types: [any Entity.Type] = exampleModel, function: String = #function,
    sourceLocation: SourceLocation = #_sourceLocation, isolation: isolated (any Actor)? = #isolation,
    _ body: (GraphContainer) async throws -> T
) async throws -> T {
    let store = try TestStore(kind, for: types, function: function)
    let result: T
    do {
        result = try await body(store.container)
    } catch {
        try? await store.container.close()
        store.directory?.remove()
        throw error
    }
    try await store.close(sourceLocation: sourceLocation)
    return result
}
