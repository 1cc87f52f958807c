import Foundation

/// The document format of a snapshot file.
public enum SnapshotFormat: String, Sendable, Hashable, CaseIterable, Codable {
    /// A JSON document (RFC 8259). Dates are numbers: seconds since 2001-01-01T00:00:00Z, the
    /// reference date of Foundation and of property lists, written with enough digits to read
    /// back to the bit. `Data` is Base64 text. Non-finite doubles are the strings `"Infinity"`,
    /// `"-Infinity"` and `"NaN"`.
    case json
    /// An Apple binary property list (`bplist00`). Dates, data and doubles are native plist values.
    case binaryPropertyList

    /// The usual file extension, such as `json` or `plist`.
    public var fileExtension: String {
        switch self {
        case .json: "json"
        case .binaryPropertyList: "plist"
        }
    }
}

/// The compression around a snapshot document.
public enum Compression: String, Sendable, Hashable, CaseIterable, Codable {
    /// A standard gzip (RFC 1952) member: `zcat`, Python's `gzip` and every gzip tool read it.
    case gzip
    /// The document as is.
    case none
}

/// The header at the start of every snapshot document, decoded before any object.
///
/// On disk it is the object under the key `header`; the objects are under `entities`, one
/// array per entity name:
///
/// ```json
/// {"header": {"format": "GraphStore", "formatVersion": 1, "modelVersion": "1",
///             "savedAt": 785000000.5, "storeVersion": 12, "counts": {"Tag": 2},
///             "dateEncoding": "secondsSince2001"},
///  "entities": {"Tag": [{"id": "…", "name": "swift"}, {"id": "…", "name": "linux"}]}}
/// ```
public struct SnapshotHeaderV1: Codable, Sendable, Equatable {
    /// The format's name; always `GraphStore`.
    public var format: String
    /// The document layout version; a reader refuses versions newer than it knows.
    public var formatVersion: Int
    /// The application's model version, from ``SnapshotOptions/modelVersion``.
    public var modelVersion: String
    /// When the snapshot was written.
    public var savedAt: Date
    /// The store version (commit number) the snapshot holds.
    public var storeVersion: UInt64
    /// The number of objects per entity name; checked against the arrays when reading.
    public var counts: [String: Int]
    /// How dates are written: `secondsSince2001`.
    public var dateEncoding: String
    /// Per entity, where its objects hold dates and data (`"createdAt": "date"`,
    /// `"attachments[].bytes": "data"`), and which top-level values are doubles
    /// (`"rating": "real"`, since JSON writes `3.0` as `3`), found on a sample of objects when
    /// the snapshot is written. Lets tools without the app's types convert between JSON and
    /// property lists, and migrate to SQLite with the typed store's column kinds.
    public var fieldTypes: [String: [String: String]]?

    /// The format name every snapshot carries.
    public static let formatName = "GraphStore"
    /// The newest layout this version of GraphStore reads and the one it writes.
    public static let currentFormatVersion = 1

    public init(modelVersion: String, savedAt: Date, storeVersion: UInt64, counts: [String: Int], fieldTypes: [String: [String: String]]? = nil) {
        self.fieldTypes = fieldTypes
        format = Self.formatName
        formatVersion = Self.currentFormatVersion
        self.modelVersion = modelVersion
        self.savedAt = savedAt
        self.storeVersion = storeVersion
        self.counts = counts
        dateEncoding = "secondsSince2001"
    }
}

/// Choices for a snapshot-file store beyond format and compression.
public struct SnapshotOptions: Sendable {
    /// The most bytes a snapshot may decompress to; a larger (or bomb) file is refused with
    /// ``GraphStoreError/decompressedSizeLimitExceeded(path:limit:)``. Default 4 GiB.
    public var maxDecompressedBytes: Int
    /// Open the previous good snapshot (kept beside the current one as `<file>.previous`)
    /// when the current one is damaged. The damaged file is first copied to
    /// `<file>.damaged-<unix time>` (with `-2`, `-3`… when that name is taken); when it cannot
    /// be copied, nothing is recovered. Off by default: a damaged file is an error. A file of a
    /// newer format version is not damaged and is always refused.
    public var recoverFromPreviousSnapshot: Bool
    /// The application's model version, written into every header.
    public var modelVersion: String
    /// The clock the writer schedules with; tests inject a manual one.
    package var clock: any WriterClock
    /// The file operations the writer uses; tests inject faults.
    var fileSystem: any FileSystem
    /// Called on the writer's thread before each write; a test hook.
    var beforeWrite: (@Sendable () -> Void)?

    public init(maxDecompressedBytes: Int = 4 << 30, recoverFromPreviousSnapshot: Bool = false, modelVersion: String = "1") {
        self.maxDecompressedBytes = maxDecompressedBytes
        self.recoverFromPreviousSnapshot = recoverFromPreviousSnapshot
        self.modelVersion = modelVersion
        clock = SystemWriterClock()
        fileSystem = PosixFileSystem()
        beforeWrite = nil
    }
}

extension StoreConfiguration {
    /// A store kept whole in memory and snapshotted to one file by a coalescing background writer.
    ///
    /// ```swift
    /// let container = try GraphContainer(
    ///     for: [Post.self, Note.self, Tag.self],
    ///     store: .file(url, format: .json, compression: .gzip))
    /// ```
    ///
    /// A missing file is an empty store. Saves never wait for the disk: after a commit the
    /// writer waits `coalescingInterval`, then writes the newest version (at most one write in
    /// flight, at most one per interval) to a temporary file, fsyncs it, renames it over the
    /// snapshot and fsyncs the directory; the snapshot it replaces is kept as `<file>.previous`.
    /// A lock file `<file>.lock` keeps a second container or process out.
    ///
    /// > Important: Visible after `save()`, durable after ``GraphContainer/flush()``.
    ///
    /// - Parameters:
    ///   - url: The snapshot file, such as `store.json.gz`.
    ///   - format: ``SnapshotFormat/json`` (default) or ``SnapshotFormat/binaryPropertyList``.
    ///     Opening reads either, whatever the configured format; the next write uses this one.
    ///   - compression: ``Compression/gzip`` (default) or ``Compression/none``.
    ///   - coalescingInterval: The least time between two writes. Default one second.
    ///   - options: Decompression bound, recovery and model version.
    public static func file(
        _ url: URL, format: SnapshotFormat = .json, compression: Compression = .gzip,
        coalescingInterval: Duration = .seconds(1), options: SnapshotOptions = SnapshotOptions()
    ) -> StoreConfiguration {
        StoreConfiguration(description: url.path) { schema in
            try SnapshotFileBackend(
                url: url, format: format, compression: compression, interval: coalescingInterval,
                options: options, schema: schema)
        }
    }
}
