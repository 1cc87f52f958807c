import Foundation
import GraphStore

/// What a store file's name says it is: a GraphStore SQLite store, or a snapshot in a format
/// and compression. Used to choose what to write where no file exists yet to be detected
/// (``StoreKind/detect(at:)`` reads an existing file's bytes instead).
///
/// ```swift
/// StoreFileName(fileName: "App.sqlite")      // .sqlite
/// StoreFileName(fileName: "store.plist.gz")  // .snapshot(.binaryPropertyList, .gzip)
/// StoreFileName(fileName: "notes.txt")       // nil
/// ```
///
/// The rules, case-insensitive: `.sqlite`, `.sqlite3` and `.db` are SQLite; `.json` and
/// `.plist` are snapshots in that format, compressed with gzip when `.gz` follows.
package enum StoreFileName: Hashable, Sendable {
    /// A GraphStore SQLite store.
    case sqlite
    /// A snapshot file in this format and compression.
    case snapshot(SnapshotFormat, Compression)

    /// The kind `fileName` (a name or a path) names, or `nil` when its extension names none.
    ///
    /// - Complexity: O(*n*) in the length of the name.
    package init?(fileName: String) {
        let lowercased = fileName.lowercased()
        if [".sqlite", ".sqlite3", ".db"].contains(where: lowercased.hasSuffix) {
            self = .sqlite
            return
        }
        let compression: Compression = lowercased.hasSuffix(".gz") ? .gzip : .none
        let base = compression == .gzip ? String(lowercased.dropLast(3)) : lowercased
        if base.hasSuffix(".json") {
            self = .snapshot(.json, compression)
        } else if base.hasSuffix(".plist") {
            self = .snapshot(.binaryPropertyList, compression)
        } else {
            return nil
        }
    }

    /// The snapshot format the name gives, `nil` for SQLite.
    package var format: SnapshotFormat? {
        if case .snapshot(let format, _) = self { format } else { nil }
    }

    /// The snapshot compression the name gives, `nil` for SQLite.
    package var compression: Compression? {
        if case .snapshot(_, let compression) = self { compression } else { nil }
    }
}
