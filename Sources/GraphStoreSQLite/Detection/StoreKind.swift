import Foundation
import GRDB
import GraphStore

/// What a store file is, told from its bytes and, for SQLite, its tables.
///
/// ```swift
/// switch try StoreKind.detect(at: URL(fileURLWithPath: "App.sqlite")) {
/// case .coreData, .swiftData: print("import it with CoreDataImporter")
/// case .graphStoreSQLite: print("open it with .sqlite(url)")
/// case .snapshot: print("open it with .file(url)")
/// case .plainSQLite: print("import it with PlainSQLiteImporter")
/// }
/// ```
///
/// The rules, in order: a file that starts with SQLite's magic is opened read-only and its
/// tables decide: `graphstore_metadata` is a GraphStore SQLite store; `Z_PRIMARYKEY` with
/// `Z_METADATA` is Core Data's layout, which SwiftData shares (it is called SwiftData when the
/// file is named `.store`, as SwiftData names its stores, `default.store`); any other is plain
/// SQLite. A file that starts with gzip's magic, `bplist00` or a JSON object is a snapshot.
/// The raw value is the CLI's `--from` spelling.
public enum StoreKind: String, Sendable, Hashable, CaseIterable {
    /// A GraphStore snapshot file (JSON or binary property list, gzip or not).
    case snapshot
    /// A GraphStore SQLite store.
    case graphStoreSQLite = "sqlite"
    /// A Core Data SQLite store.
    case coreData = "coredata"
    /// A SwiftData store: Core Data's layout, imported the same way.
    case swiftData = "swiftdata"
    /// Any other SQLite database.
    case plainSQLite = "plain-sqlite"

    /// A short name for people: "GraphStore snapshot", "Core Data store", ….
    public var displayName: String {
        switch self {
        case .snapshot: "GraphStore snapshot"
        case .graphStoreSQLite: "GraphStore SQLite store"
        case .coreData: "Core Data store"
        case .swiftData: "SwiftData store"
        case .plainSQLite: "plain SQLite database"
        }
    }

    /// Whether the store is imported with ``CoreDataImporter``.
    public var isCoreDataLayout: Bool { self == .coreData || self == .swiftData }

    /// The kind of the file at `url`, read from its first bytes and, for SQLite, its tables.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)`` for
    ///   a missing or unreadable file; ``GraphStore/GraphStoreError/damagedFile(path:offset:reason:)``
    ///   for an empty file or a SQLite database SQLite cannot read (truncated, malformed);
    ///   ``GraphStore/GraphStoreError/unrecognizedFile(path:reason:)`` for a sound file of no
    ///   kind GraphStore reads. The file is never changed.
    /// - Complexity: reads at most 512 bytes, plus the schema of a SQLite database.
    public static func detect(at url: URL) throws -> StoreKind {
        // A store a container of this process has open is one, and its file must not be
        // opened here: closing any descriptor of it would drop the container's lock.
        if OpenSQLiteStores.isOpen(StorePath.canonical(url).path) { return .graphStoreSQLite }
        let path = url.standardizedFileURL.path
        let start = try firstBytes(path)
        if start.starts(with: SQLiteFileHeader.magic) {
            let database = try ForeignDatabase.open(url)
            defer { database.close() }
            let tables = try database.read { db in Set(try ForeignDatabase.tables(in: db).map { $0.name.uppercased() }) }
            if tables.contains(SQLiteFormatV1.metadataTable.uppercased()) { return .graphStoreSQLite }
            if tables.contains("Z_PRIMARYKEY"), tables.contains("Z_METADATA") {
                return url.pathExtension.lowercased() == "store" ? .swiftData : .coreData
            }
            return .plainSQLite
        }
        if start.starts(with: [0x1F, 0x8B]) || start.starts(with: Array("bplist00".utf8)) { return .snapshot }
        if let first = start.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }), first == UInt8(ascii: "{") { return .snapshot }
        let looks = start.prefix(16).allSatisfy { (0x20..<0x7F).contains($0) || [0x09, 0x0A, 0x0D].contains($0) } ? "text" : "binary data"
        throw GraphStoreError.unrecognizedFile(
            path: path,
            reason: "it is not a SQLite database nor a GraphStore snapshot (gzip, bplist00 or JSON): it starts with \(looks) (\(start.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")))")
    }

    // MARK: - Private

    private static func firstBytes(_ path: String) throws -> Data {
        let status = try FileStatus.found(atPath: path, operation: "Reading the store")
        // A pipe would block the read until a writer came, a device might never end.
        if let irregularity = status.irregularity {
            throw GraphStoreError.fileOperationFailed(path: path, operation: "Reading the store", reason: irregularity)
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw GraphStoreError.fileOperationFailed(path: path, operation: "Reading the store", reason: "the file cannot be opened for reading")
        }
        defer { try? handle.close() }
        let start = (try? handle.read(upToCount: 512)) ?? Data()
        guard !start.isEmpty else { throw GraphStoreError.damagedFile(path: path, offset: 0, reason: "it is empty") }
        return start
    }
}
