import Foundation

/// Where a container keeps its graph between runs.
///
/// - ``inMemory``: nothing is written; for unit tests, previews and caches.
/// - ``file(_:format:compression:coalescingInterval:durability:options:)``: the whole graph in
///   memory, each save appended to a journal, and the graph snapshotted in the background to
///   one JSON or binary property-list file, gzip-compressed unless `compression` is `.none`.
/// - `sqlite(_:options:)` (from `GraphStoreSQLite`): a table per entity; a save writes only
///   the changed rows.
public struct StoreConfiguration: Sendable {
    /// A short description, such as `in-memory` or the file path.
    public let description: String
    let makeBackend: @Sendable (Schema) throws -> any StoreBackend

    /// A configuration built from a backend factory; how other GraphStore modules add stores.
    package init(description: String, makeBackend: @escaping @Sendable (Schema) throws -> any StoreBackend) {
        self.description = description
        self.makeBackend = makeBackend
    }

    /// A store that lives only in memory: every container starts empty and nothing is written.
    public static var inMemory: StoreConfiguration {
        StoreConfiguration(description: "in-memory") { _ in InMemoryBackend() }
    }
}
