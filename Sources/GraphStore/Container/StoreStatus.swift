/// What a store's background writer has done: enough to see coalescing and durability at work.
///
/// ```swift
/// let status = container.storeStatus
/// print(status.writesCompleted, status.durableVersion, status.lastError as Any)
/// ```
public struct StoreStatus: Sendable, Equatable {
    /// Completed writes since the container opened.
    public var writesCompleted: Int = 0
    /// Failed write attempts since the container opened.
    public var failedWrites: Int = 0
    /// How long the last completed write took: encoding, compressing, writing and syncing.
    public var lastWriteDuration: Duration?
    /// The size in bytes of the last completed write.
    public var lastWriteBytes: Int?
    /// The newest store version known to be on disk (for the in-memory store, the latest commit).
    public var durableVersion: UInt64 = 0
    /// The error of the last write attempt, cleared by the next successful write. The graph in
    /// memory is kept and the write is retried.
    public var lastError: GraphStoreError?

    /// A status with nothing written yet.
    public init() {}
}

/// One thing the background writer did, from ``GraphContainer/storeEvents``.
public enum StoreEvent: Sendable, Equatable {
    /// A write completed: the store version it holds, its size and how long it took.
    case wrote(version: UInt64, bytes: Int, duration: Duration)
    /// A write failed; it will be retried after `retryIn` (or sooner, at the next `flush()`).
    ///
    /// A write that cannot succeed until the model changes is not retried: a SQLite store whose
    /// column no longer fits a value (``GraphStoreError/codingFailed(path:entity:id:reason:)``)
    /// announces it with `retryIn: .zero`, and from then on `save()` throws that error. Under
    /// ``Durability/coalesced``, whose saves never touch the disk, `save()` keeps returning:
    /// `flush()` and `close()` throw the error, and the saves since the last write are not in
    /// the file.
    case writeFailed(GraphStoreError, retryIn: Duration)
}

extension GraphContainer {
    /// What the store's writer has done so far.
    ///
    /// - Complexity: O(1).
    public var storeStatus: StoreStatus {
        core.backend.status
    }

    /// Every write and failed write from now on. Each access returns a new stream; it ends
    /// when the container closes.
    public var storeEvents: AsyncStream<StoreEvent> {
        core.backend.events()
    }
}
