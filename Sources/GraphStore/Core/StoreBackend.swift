/// Where a container's committed versions go: memory only, a snapshot file, or SQLite.
///
/// The core calls ``didCommit(_:change:)`` under its commit lock, in commit order, so an
/// implementation must only record or schedule work there, never block or do I/O.
package protocol StoreBackend: Sendable {
    /// The graph the store opens with, or `nil` for an empty store.
    ///
    /// - Throws: `GraphStoreError` naming the file and what is wrong with it.
    func load(schema: Schema) throws -> GraphVersion?

    /// A new version was committed. Called in commit order; must not block.
    func didCommit(_ version: GraphVersion, change: GraphChange)

    /// Returns when every version passed to `didCommit` before the call is durable.
    func flush() async throws

    /// Flushes, then releases files and locks.
    func close() async throws
}

/// The store for unit tests and caches: nothing is written anywhere.
struct InMemoryBackend: StoreBackend {
    func load(schema: Schema) throws -> GraphVersion? { nil }
    func didCommit(_ version: GraphVersion, change: GraphChange) {}
    func flush() async throws {}
    func close() async throws {}
}
