import Foundation

/// The entry point: a store of registered entities with a main context, background contexts
/// and a stream of committed changes.
///
/// ```swift
/// let container = try GraphContainer(for: [Post.self, Note.self, Tag.self], store: .inMemory)
/// container.mainContext.insert(Tag(name: "swift"))
/// try container.mainContext.save()
/// ```
public final class GraphContainer: Sendable {
    /// The context meant for the UI. It is not actor-isolated: command-line and server apps have
    /// no main run loop, and like every context it is safe to use from any thread.
    public let mainContext: GraphContext
    /// Where the container keeps its graph.
    public let configuration: StoreConfiguration
    let core: GraphCore

    /// Opens (or creates) the store described by `store` for the entity types `types`, which
    /// describe model version `version`; a store written by an older model version is first
    /// migrated by `migrations`.
    ///
    /// ```swift
    /// let container = try GraphContainer(
    ///     for: [Note.self, Tag.self], store: .file(url), version: 2,
    ///     migrations: [SchemaMigration(from: 1, to: 2, [.addField("pinned", in: "Note", default: .bool(false))])])
    /// ```
    ///
    /// A store in model version `version` opens as it is. An older one is read as generic
    /// values (with the journal a crash left beside it), migrated through the chain of
    /// `migrations` from its version to `version`, decoded with `types` and checked
    /// (relationships, unique constraints); only then is the migrated store written, durably,
    /// with the old file kept beside it as `<file>.v<old version>` (a SQLite store's tables are
    /// rewritten in one transaction). See <doc:EvolvingYourModel>.
    ///
    /// - Parameters:
    ///   - types: Every entity type the store holds, including every relationship target.
    ///   - store: Where the graph lives; ``StoreConfiguration/inMemory`` by default.
    ///   - version: The model version `types` describe, at least 1. When left at 1 with no
    ///     migrations, a snapshot store's ``SnapshotOptions/modelVersion`` still names the
    ///     version; otherwise this one wins and is written into every header.
    ///   - migrations: The steps from each older version; at most one per starting version.
    /// - Throws: `GraphStoreError` when the store cannot be opened: a damaged or newer file
    ///   (``GraphStoreError/damagedFile(path:offset:reason:)``,
    ///   ``GraphStoreError/unsupportedFormatVersion(path:found:supported:)``), a store held by
    ///   another process (``GraphStoreError/storeLocked(path:)``), a store of a newer model
    ///   (``GraphStoreError/newerModelVersion(path:found:supported:)``), a migration that
    ///   fails (``GraphStoreError/migrationFailed(path:fromVersion:toVersion:entity:field:id:reason:)``),
    ///   values that do not decode as `types` (``GraphStoreError/codingFailed(path:entity:id:reason:)``,
    ///   with a hint naming the migration step that would fix them). A store that fails to
    ///   open is left byte for byte as it was.
    /// - Complexity: O(objects in the store) to load and index them; a migration adds
    ///   O(objects) generic work and one write of the migrated store.
    public init(
        for types: [any Entity.Type], store: StoreConfiguration = .inMemory, version: Int = 1,
        migrations: [SchemaMigration] = []
    ) throws {
        var schema = Schema(types)
        schema.model = ModelHistory(version: version, migrations: migrations, isDeclared: version != 1 || !migrations.isEmpty)
        let backend = try store.makeBackend(schema)
        var initial = try backend.load(schema: schema) ?? GraphVersion(schema: schema)
        initial.ensureSortedIndexes(schema: schema)
        core = GraphCore(schema: schema, backend: backend, initial: initial)
        configuration = store
        mainContext = GraphContext(core: core, parent: nil, name: "main")
    }

    /// A new top-level context for work off the main context, such as an import.
    public func newBackgroundContext() -> GraphContext {
        GraphContext(core: core, parent: nil, name: nil)
    }

    /// Runs `block` with a new background context on a background thread and returns its result.
    /// The context is not saved for you: call `save()` in the block.
    ///
    /// ```swift
    /// try await container.performBackgroundTask { context in
    ///     context.insert(Tag(name: "swift"))
    ///     try context.save()
    /// }
    /// ```
    ///
    /// - Throws: whatever `block` throws.
    public func performBackgroundTask<T: Sendable, Failure: Error>(
        _ block: @escaping @Sendable (GraphContext) throws(Failure) -> T
    ) async throws(Failure) -> T {
        let context = newBackgroundContext()
        return try await context.perform { () throws(Failure) -> T in try block(context) }
    }

    /// Returns when every commit made before the call is durable in the store.
    ///
    /// > Important: Visible after `save()`, durable after `flush()`.
    ///
    /// - Throws: the store's write error, such as ``GraphStoreError/fileOperationFailed(path:operation:reason:)``
    ///   for a full disk; the graph in memory is kept and writing is retried.
    public func flush() async throws {
        try await core.backend.flush()
    }

    /// Flushes, refuses further saves (they throw ``GraphStoreError/containerClosed``), ends
    /// every ``changes`` stream and releases the store's files and locks.
    ///
    /// - Throws: as ``flush()``.
    public func close() async throws {
        core.close()
        try await core.backend.close()
    }

    /// Every commit from now on, in commit order, each delivered after it is visible to every
    /// context. Each access returns a new stream; it ends when the container closes.
    public var changes: AsyncStream<GraphChange> {
        core.subscribe()
    }

    /// The store version of the latest commit (0 when nothing was committed since opening).
    public var version: UInt64 {
        core.currentVersion.number
    }

    /// The number of objects of `type` in the latest committed version.
    ///
    /// - Complexity: O(1).
    public func count<E: Entity>(of type: E.Type) -> Int {
        core.currentVersion.tables[core.schema.index(of: type)].count
    }
}
