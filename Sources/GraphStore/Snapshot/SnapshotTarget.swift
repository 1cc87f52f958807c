import Foundation
import Logging
internal import GraphStoreCoding

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A snapshot file and how to write it: format, compression and the previous-snapshot copy.
struct SnapshotTarget: Sendable {
    let url: URL
    let format: SnapshotFormat
    let compression: Compression
    let modelVersion: String
    let schema: Schema
    let fileSystem: any FileSystem

    /// zlib's level for snapshot writes. Level 1 compresses our JSON about three times faster
    /// than the default 6 for files about 40% larger (still a tenth of the SQLite file for the
    /// same posts; see docs/benchmarks.md), and every gzip reader reads any level.
    static let compressionLevel: Int32 = 1

    /// The previous good snapshot, kept beside the current one.
    var previousURL: URL { URL(fileURLWithPath: PreviousSnapshot.path(forStoreAt: url.path)) }

    /// Encodes, compresses and atomically replaces the snapshot with `version` (its header naming
    /// the store's `lineage`); the replaced snapshot is kept as ``previousURL`` unless
    /// `keepsPrevious` is false. Returns the bytes written.
    ///
    /// At every instant a complete snapshot is at `url`: the previous copy is a hard link made
    /// (under a temporary name, then renamed) before the new file is renamed over the old. The
    /// new file keeps the old one's permissions and owner (see ``AtomicFile``), and the previous
    /// copy, being the old file, has them too.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)``,
    ///   ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` (for example `ENOSPC`).
    /// - Complexity: O(objects) to encode, O(bytes) to compress and write.
    func write(_ version: GraphVersion, lineage: UUID?, keepsPrevious: Bool = true) throws -> Int {
        let bytes: Data
        do {
            if compression == .gzip {
                // A JSON document's large tables are deflated by the threads that encode them.
                let segments = try SnapshotCodec.encodeSegments(
                    version, schema: schema, format: format, modelVersion: modelVersion, savedAt: Date(), path: url.path,
                    lineage: lineage, deflateLevel: Self.compressionLevel)
                bytes = try Gzip.compress(segments: segments, level: Self.compressionLevel, parts: Processors.active)
            } else {
                bytes = Data(concatenating: try SnapshotCodec.encodePieces(
                    version, schema: schema, format: format, modelVersion: modelVersion, savedAt: Date(), path: url.path, lineage: lineage))
            }
        } catch let error as FileLayerError {
            throw GraphStoreError(error, path: url.path)
        }
        // The store's first file: a previous snapshot there is a gone store's (its file was
        // removed), and recovery must never put it back in this one's place.
        if !FileManager.default.fileExists(atPath: url.path) { setAsideOrphanedPrevious() }
        if keepsPrevious { keepPrevious() }
        do {
            try AtomicFile.write(bytes, to: url, fileSystem: fileSystem)
        } catch {
            throw GraphStoreError(error, path: url.path)
        }
        return bytes.count
    }

    /// Removes what writes killed midway left beside the snapshot: `AtomicFile`'s temporary
    /// files (of the store, and of the previous snapshot a migrating open writes), the staging
    /// link of the previous copy, the temporaries of the copies an open that
    /// migrated the store was keeping of it (``OlderStoreMigration/isCopyTemporary(_:ofStoreNamed:)``),
    /// and `also` (the journal's leftovers, see ``StoreJournal/leftoverNames(beside:)``), in one
    /// listing of the directory. Call it only while holding the store's lock, when no other
    /// writer can be at work. Best effort.
    func removeLeftovers(also: (names: Set<String>, temporaryPrefixes: [String])) {
        let name = url.lastPathComponent
        AtomicFile.removeLeftovers(
            in: url.deletingLastPathComponent(), named: also.names,
            temporaryPrefixes: [AtomicFile.temporaryPrefix(for: url), AtomicFile.temporaryPrefix(for: previousURL)] + also.temporaryPrefixes,
            alsoMatching: { OlderStoreMigration.isCopyTemporary($0, ofStoreNamed: name) })
        unlink(stagingPath)
    }

    private var stagingPath: String { url.path + ".previous-staging" }

    /// Renames a previous snapshot left by a store whose file was removed to
    /// `<file>.previous.orphaned-<unix time>` (`-2`, `-3`… when taken): kept, for whoever wants
    /// the gone store back, but no longer this store's previous snapshot. Best effort; the
    /// directory is fsynced so that the name does not come back after a power loss.
    private func setAsideOrphanedPrevious() {
        let previous = previousURL.path
        guard FileManager.default.fileExists(atPath: previous) else { return }
        let aside = DamagedFileCopy.freeName(previous + ".orphaned")
        guard rename(previous, aside) == 0 else { return }
        try? fileSystem.syncDirectory(url.deletingLastPathComponent().path)
        Logger(label: "GraphStore.SnapshotTarget").warning(
            "A previous snapshot of a store whose file was removed was set aside", metadata: ["path": "\(aside)"])
    }

    /// Hard-links the current snapshot as the previous one; best effort (a missing current
    /// file, or a file system without hard links, leaves the previous copy as it was).
    private func keepPrevious() {
        let staging = stagingPath
        unlink(staging)
        guard link(url.path, staging) == 0 else { return }
        // When the previous copy already is this file (a write failed after the last link),
        // rename(2) succeeds without doing anything and the staging name would stay behind.
        _ = rename(staging, previousURL.path)
        unlink(staging)
    }
}

/// Where a snapshot store keeps the snapshot its current file replaced, which recovery
/// (``SnapshotOptions/recoverFromPreviousSnapshot``) opens when the current file is damaged.
package enum PreviousSnapshot {
    /// The previous snapshot beside the store file at `storePath`: `<file>.previous`.
    package static func path(forStoreAt storePath: String) -> String {
        storePath + ".previous"
    }
}

extension GraphStoreError {
    /// The store-level error for a file-layer failure at `path`.
    init(_ error: FileLayerError, path: String) {
        switch error {
        case .decompressedSizeLimitExceeded(let limit):
            self = .decompressedSizeLimitExceeded(path: path, limit: limit)
        case .locked(let lockPath):
            // The store the lock file guards (the file a symbolic link points to), not the
            // lock file itself: that is the file the person knows and would look for.
            let suffix = ".lock"
            self = .storeLocked(path: lockPath.hasSuffix(suffix) ? String(lockPath.dropLast(suffix.count)) : path)
        case .io(let operation, let ioPath, _, let message):
            self = .fileOperationFailed(path: ioPath, operation: operation, reason: message)
        case .outOfMemory:
            // The process, not the file: a store that could not be read for want of memory is
            // not damaged, and must not be set aside as damaged by a recovering open.
            self = .fileOperationFailed(path: path, operation: "allocate memory", reason: error.description)
        case .zlibFailure(let function, _, _):
            self = .fileOperationFailed(path: path, operation: function.hasPrefix("deflate") ? "compress" : "decompress", reason: error.description)
        default:
            self = .damagedFile(path: path, offset: error.byteOffset, reason: error.description)
        }
    }
}

extension FileLayerError {
    /// The byte in the file where reading failed, when the error knows it.
    var byteOffset: Int? {
        switch self {
        case .truncated(_, let actual): actual
        case .badMagic(let offset, _), .reservedFlags(let offset, _), .corruptDeflate(let offset, _), .trailingGarbage(let offset): offset
        default: nil
        }
    }
}
