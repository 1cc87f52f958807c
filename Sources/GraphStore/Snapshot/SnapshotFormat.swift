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
    /// `"attachments[].bytes": "data"`), URLs and decimals (`"link": "url"`,
    /// `"price": "decimal"`, which JSON writes as a string and a number and a property list as
    /// dictionaries; a URL with a base is a dictionary in both, `{"relative": …, "base": …}`,
    /// its base a string in JSON), and which top-level values are doubles (`"rating": "real"`, since JSON
    /// writes `3.0` as `3`), which fields are declared `String` (`"label": "string"`,
    /// since JSON writes a non-finite double as the string `"NaN"`), found on a sample of
    /// objects when the snapshot is written (an
    /// optional field that is `nil` counts by its declared type). Lets tools without the app's
    /// types convert between JSON and property lists, and migrate to SQLite with the typed
    /// store's column kinds.
    public var fieldTypes: [String: [String: String]]?
    /// Which ``fieldTypes`` the writer names: `2` when it names URLs and decimals too (so a
    /// field without one is neither), `3` when it also names each top-level field declared
    /// `String` (`"string"`), and optional doubles that are `nil` in the objects sampled, `4`
    /// when `"string"` also names nested fields and array elements (`"address.city"`,
    /// `"labels[]"`), `5` when a dictionary's values are named at one path for all its keys
    /// (`"prices{}": "decimal"`, where `4` named the keys found in the sampled objects); `nil`
    /// for a snapshot written before, whose tools recognise a property list's URLs and decimals
    /// by their dictionaries' shapes instead.
    public var fieldTypesVersion: Int?
    /// The `fieldTypesVersion` this version of GraphStore writes.
    public static let currentFieldTypesVersion = 5
    /// Set (`true`) in a property list written from values read without the app's types (a
    /// JSON snapshot, a SQLite store, an import: `convert`, `migrate`): where ``fieldTypes``
    /// do not name a value (their sample missed it), it may stand in its JSON shape, a number
    /// for a date, Base64 text for data, a string for a URL, a number for a decimal, a real for
    /// a `"NaN"` string. The app reads those where its types ask for such a value. `nil` in
    /// what the app writes itself, whose values are all in their property-list shapes.
    public var jsonShapedValues: Bool?
    /// The store's lineage: a UUID made when the store was created and kept by every snapshot
    /// of it. A journal beside the snapshot names the same one, so a journal of another store
    /// is never replayed onto this one. `nil` in snapshots written before journals existed.
    public var lineage: String?

    /// The format name every snapshot carries.
    public static let formatName = "GraphStore"
    /// The newest layout this version of GraphStore reads and the one it writes.
    public static let currentFormatVersion = 1

    /// A header for a snapshot of `storeVersion`, written at `savedAt`, of the current format version
    /// with dates as seconds since 2001. Costs O(1) beyond copying its arguments.
    public init(
        modelVersion: String, savedAt: Date, storeVersion: UInt64, counts: [String: Int], fieldTypes: [String: [String: String]]? = nil,
        lineage: String? = nil
    ) {
        self.fieldTypes = fieldTypes
        self.lineage = lineage
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
    ///
    /// A binary property list shares objects by reference, so a small file can hold the same
    /// long string a million times (a reference bomb). Its values are counted as they are read,
    /// roughly as the memory they take (16 bytes per element of an array or dictionary, and the
    /// bytes of each string longer than 15 bytes and of each data object), against this limit
    /// or 32 times the uncompressed document, whichever is more. Past it, the same error; sharing
    /// within it reads as usual.
    public var maxDecompressedBytes: Int
    /// Open the previous good snapshot (kept beside the current one as `<file>.previous`)
    /// when the current one is damaged, and replay only the intact records of a damaged
    /// journal (the journal is first copied to `<file>.journal.damaged-<unix time>`). The damaged file is first copied to
    /// `<file>.damaged-<unix time>` (with `-2`, `-3`… when that name is taken); when it cannot
    /// be copied and synced, nothing is recovered. Nothing is written until the journal is known
    /// to replay onto the previous snapshot: a journal that starts after it (a store reopened
    /// and killed before its first snapshot) makes recovery throw
    /// ``GraphStoreError/damagedFile(path:offset:reason:)`` naming the store file, the previous
    /// snapshot and the journal, with every file left as it was; move the journal away to
    /// recover without its saves. Off by default: a damaged file is an error.
    /// A file of a newer format version is not damaged and is always refused. Neither is a file
    /// that reads soundly without the app's types but not with them (an enum case, a field or
    /// an entity of another release of the app): that is a model mismatch, refused with
    /// ``GraphStoreError/codingFailed(path:entity:id:reason:)`` and never rolled back, since the
    /// previous snapshot lacks what that release saved. So are objects that break a unique
    /// constraint or hold a reference only the app's model declares, or that a type's own
    /// `init(from:)` refuses (refused with ``GraphStoreError/damagedFile(path:offset:reason:)``
    /// saying they do not fit the app's model). A value damaged inside an uncompressed file
    /// that still parses is refused the same way.
    public var recoverFromPreviousSnapshot: Bool
    /// The application's model version, written into every header.
    public var modelVersion: String

    // The injection points below have package access: tests set them, apps never see them.

    /// The clock the writer schedules with; tests inject a manual one.
    package var clock: any WriterClock
    /// The file operations the writer uses; tests inject faults.
    package var fileSystem: any FileSystem
    /// Called on the writer's thread before each write; a test hook.
    package var beforeWrite: (@Sendable () -> Void)?

    /// Options with the given limit, recovery choice and model version; every default is the
    /// documented one (4 GiB, no recovery, model version `"1"`).
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
    /// A store kept whole in memory, journaled on every save, and snapshotted to one file by a
    /// coalescing background writer.
    ///
    /// ```swift
    /// let container = try GraphContainer(
    ///     for: [Post.self, Note.self, Tag.self],
    ///     store: .file(url, format: .json, compression: .gzip))
    /// ```
    ///
    /// A missing file is an empty store. With the default ``Durability/journaled``, each
    /// `save()` appends its committed changes to `<file>.journal` with one `write(2)` before it
    /// returns, so a save that returned survives the process being killed. After a commit the
    /// writer waits `coalescingInterval`, then writes the newest version (at most one write in
    /// flight, at most one per interval) to a temporary file, fsyncs it, renames it over the
    /// snapshot and fsyncs the directory; the snapshot it replaces is kept as
    /// `<file>.previous`, and the journal records both snapshots hold are dropped. Opening
    /// reads the snapshot and replays the newer journal records. ``GraphContainer/close()``
    /// (or releasing the container) writes a final snapshot and removes the journal, so the
    /// snapshot alone then holds everything. A lock file `<file>.lock` keeps a second
    /// container or process out.
    ///
    /// Through a symbolic link, the store is the file the link points to (also one not
    /// written yet: the first save creates it), and writes never replace the link. A write keeps
    /// the file's permissions and owner; the journal and `<file>.previous` get the file's
    /// permissions.
    ///
    /// > Important: Visible after `save()`; survives the process dying after `save()` (unless
    /// > `durability` is ``Durability/coalesced``); survives power loss after
    /// > ``GraphContainer/flush()`` (or after `save()` with ``Durability/synchronous``).
    ///
    /// - Parameters:
    ///   - url: The snapshot file, such as `store.json.gz`.
    ///   - format: ``SnapshotFormat/json`` (default) or ``SnapshotFormat/binaryPropertyList``.
    ///     Opening reads either, whatever the configured format; the next write uses this one.
    ///   - compression: ``Compression/gzip`` (default) or ``Compression/none``.
    ///   - coalescingInterval: The least time between two snapshot writes, and the longest a
    ///     journaled save waits for its background fsync. Default one second.
    ///   - durability: What `save()` writes before it returns; ``Durability/journaled`` by default.
    ///   - options: Decompression bound, recovery and model version.
    /// - Complexity: a journaled save costs one `write(2)` of its encoded changes on the saving
    ///   thread; a synchronous one also waits for an fsync (shared with concurrent saves).
    public static func file(
        _ url: URL, format: SnapshotFormat = .json, compression: Compression = .gzip,
        coalescingInterval: Duration = .seconds(1), durability: Durability = .journaled,
        options: SnapshotOptions = SnapshotOptions()
    ) -> StoreConfiguration {
        StoreConfiguration(description: url.path) { schema in
            try SnapshotFileBackend(
                url: url, format: format, compression: compression, interval: coalescingInterval,
                durability: durability, options: options, schema: schema)
        }
    }
}
