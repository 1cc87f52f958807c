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
    /// The file the snapshot written was read from, when the caller read it itself (as
    /// `graphstore` does): a destination's previous snapshot (`<file>.previous`) that is this
    /// file is neither refused nor removed, since it is the migration's source.
    package var source: URL?

    /// Options with the documented defaults: no overwrite, the source's model version, 4 GiB.
    public init(overwrite: Bool = false, modelVersion: String? = nil, maxDecompressedBytes: Int = 4 << 30) {
        self.overwrite = overwrite
        self.modelVersion = modelVersion
        self.maxDecompressedBytes = maxDecompressedBytes
        beforeRename = nil
        source = nil
    }

    /// Options that overwrite as asked, for a migration of the snapshot read from `source`.
    package init(overwrite: Bool, source: URL?) {
        self.init(overwrite: overwrite)
        self.source = source
    }
}
