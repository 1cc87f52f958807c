import Foundation

/// Choices for a ``Migration``.
///
/// ```swift
/// var options = MigrationOptions()
/// options.overwrite = true            // replace an existing destination
/// try Migration.snapshotToSQLite(from: snapshotURL, to: sqliteURL, options: options)
/// ```
public struct MigrationOptions: Sendable {
    /// Replace an existing destination. Off by default: an existing destination is an error
    /// and stays as it is.
    public var overwrite: Bool
    /// The model version to record in the destination; `nil` (the default) keeps the source's.
    public var modelVersion: String?
    /// The most bytes a snapshot source may decompress to (see
    /// ``GraphStore/SnapshotOptions/maxDecompressedBytes``). Default 4 GiB.
    public var maxDecompressedBytes: Int
    /// Runs with the finished temporary file just before it is renamed to the destination; a
    /// test hook (it may throw to fail the migration at the last moment).
    package var beforeRename: (@Sendable (URL) throws -> Void)?

    /// Options with the documented defaults: no overwrite, the source's model version, 4 GiB.
    public init(overwrite: Bool = false, modelVersion: String? = nil, maxDecompressedBytes: Int = 4 << 30) {
        self.overwrite = overwrite
        self.modelVersion = modelVersion
        self.maxDecompressedBytes = maxDecompressedBytes
        beforeRename = nil
    }
}
