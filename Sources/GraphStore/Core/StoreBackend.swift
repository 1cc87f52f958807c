
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

    /// What the writer has done.
    var status: StoreStatus { get }

    /// A new stream of writer events; it ends when the store closes.
    func events() -> AsyncStream<StoreEvent>

    /// The journal every commit is appended to before `save()` returns, or `nil` when saves
    /// do not touch the disk (in memory, ``Durability/coalesced``).
    var journal: StoreJournal? { get }

    /// The store's file (a standardized path), for stores that lock one: a container released
    /// without `close()` closes in the background, and opening the same file waits for that.
    var storePath: String? { get }
}

extension StoreBackend {
    package func events() -> AsyncStream<StoreEvent> {
        AsyncStream { $0.finish() }
    }

    package var journal: StoreJournal? { nil }

    package var storePath: String? { nil }
}

/// The store for unit tests and caches: nothing is written anywhere.
final class InMemoryBackend: StoreBackend {
    private let latest = Guarded<UInt64>(0)

    func load(schema: Schema) throws -> GraphVersion? { nil }
    func didCommit(_ version: GraphVersion, change: GraphChange) { latest.withLock { $0 = version.number } }
    func flush() async throws {}
    func close() async throws {}

    var status: StoreStatus {
        var status = StoreStatus()
        status.durableVersion = latest.withLock { $0 }
        return status
    }
}
