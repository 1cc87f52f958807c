import Foundation

/// The checks a snapshot document must pass besides decoding: its first bytes, its header's
/// format name and version, and the header's counts against the arrays. One list for both
/// readers, the typed one that opens a store (``SnapshotCodec``) and the generic one the tools
/// use (``GenericSnapshot``), so that `graphstore verify` refuses exactly what an app refuses.
///
/// The typed reader runs them inside `Decodable` initializers, where no path is known: a
/// failed check is thrown as this error and turned into a ``GraphStoreError`` by
/// ``error(path:)``.
enum SnapshotHeaderCheck: Error, Equatable {
    /// The header names another format than GraphStore's.
    case notGraphStore(format: String)
    /// The header's layout version is newer than this build reads.
    case newerVersion(Int)
    /// The header counts `expected` objects of `entity`; the document holds `found`.
    case countMismatch(entity: String, expected: Int, found: Int)

    // MARK: - Checks

    /// The format of the uncompressed document `data`, told by its first bytes.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` for an empty file or one
    ///   that is neither JSON nor a binary property list (naming its first bytes).
    /// - Complexity: O(leading whitespace).
    static func format(of data: Data, path: String) throws(GraphStoreError) -> SnapshotFormat {
        if let format = SnapshotCodec.detectFormat(data) { return format }
        let start = data.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
        throw GraphStoreError.damagedFile(
            path: path, offset: 0,
            reason: data.isEmpty ? "the file is empty" : "not a GraphStore snapshot: it is neither JSON nor a binary property list (starts with \(start))")
    }

    /// Refuses a header that does not name GraphStore's format, or names a newer layout.
    ///
    /// - Complexity: O(1).
    static func header(format: String, formatVersion: Int) throws(SnapshotHeaderCheck) {
        guard format == SnapshotHeaderV1.formatName else { throw .notGraphStore(format: format) }
        guard formatVersion <= SnapshotHeaderV1.currentFormatVersion else { throw .newerVersion(formatVersion) }
    }

    /// Refuses an entity array whose length differs from the header's count (none counted: 0).
    ///
    /// - Complexity: O(1).
    static func count(of entity: String, found: Int, in header: SnapshotHeaderV1) throws(SnapshotHeaderCheck) {
        let expected = header.counts[entity] ?? 0
        guard found == expected else { throw .countMismatch(entity: entity, expected: expected, found: found) }
    }

    /// Refuses a header that counts objects of an entity the document has no array for.
    ///
    /// - Complexity: O(entities in the header).
    static func countedEntities(of header: SnapshotHeaderV1, present: (String) -> Bool) throws(SnapshotHeaderCheck) {
        for (name, count) in header.counts.sorted(by: { $0.key < $1.key }) where count > 0 && !present(name) {
            throw .countMismatch(entity: name, expected: count, found: 0)
        }
    }

    // MARK: - Errors

    /// The error a reader of the file at `path` reports.
    func error(path: String) -> GraphStoreError {
        switch self {
        case .notGraphStore(let format):
            .damagedFile(path: path, offset: nil, reason: "the header names format \"\(format)\", not \(SnapshotHeaderV1.formatName)")
        case .newerVersion(let found):
            .unsupportedFormatVersion(path: path, found: found, supported: SnapshotHeaderV1.currentFormatVersion)
        case .countMismatch(let entity, let expected, let found):
            .damagedFile(
                path: path, offset: nil,
                reason: "the header counts \(expected) \(entity) object(s), the file holds \(found == 0 ? "none" : String(found))")
        }
    }
}
