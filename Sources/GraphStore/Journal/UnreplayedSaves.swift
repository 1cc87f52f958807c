import Foundation

/// Saves that a store's journal holds and its file does not yet: the store is open in a
/// process now, or the last process that had it open ended without closing it.
///
/// Opening the store with a ``GraphContainer`` replays them (and closing it writes them into
/// the file). A tool that reads the file alone, as `graphstore` does, would miss them, so it
/// refuses with ``error(reading:)`` instead of reading a store older than what the app was told
/// is saved.
public struct UnreplayedSaves: Sendable, Equatable {
    /// The journal's path: `<store>.journal`.
    public var journalPath: String
    /// How many saves are newer than the file: journal records, or versions a newer file
    /// written while this one was read holds.
    public var count: Int
    /// The store version the file holds.
    public var fileVersion: UInt64
    /// The store version of the newest save in the journal.
    public var newestVersion: UInt64

    /// The saves in the journal beside the store at `url` that are newer than `fileVersion`, or
    /// `nil` when there are none (no journal, an empty one, or only older records).
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` naming the journal and
    ///   the byte for a damaged journal (a torn last record is not damage: it was never
    ///   acknowledged, and is not counted), ``GraphStoreError/unsupportedFormatVersion(path:found:supported:)``,
    ///   ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` when it cannot be read.
    /// - Complexity: O(journal size); one `stat` when there is no journal.
    public static func find(forStoreAt url: URL, fileVersion: UInt64) throws -> UnreplayedSaves? {
        // The app writes the journal beside the path it opened, which may be a symbolic link
        // to the file read here, or the file a link read here points to: both are looked at.
        let resolved = url.resolvingSymlinksInPath()
        if resolved.path != url.path, let saves = try find(journalAt: JournalReplay.path(forStoreAt: resolved.path), fileVersion: fileVersion) {
            return saves
        }
        return try find(journalAt: JournalReplay.path(forStoreAt: url.path), fileVersion: fileVersion)
    }

    private static func find(journalAt path: String, fileVersion: UInt64) throws -> UnreplayedSaves? {
        let contents: JournalContents?
        do {
            contents = try JournalReplay.read(path)
        } catch let damage as JournalFormatV1.Damage {
            throw GraphStoreError.damagedFile(path: path, offset: damage.offset, reason: damage.reason)
        }
        guard let contents else { return nil }
        let newer = contents.scan.records.filter { $0.version > fileVersion }
        // A journal that continues a newer file than the one read: the store was written (a
        // snapshot, then the records it covers dropped) while it was read, so saves the reader
        // has are missing from both what it read of the file and the journal.
        let base = contents.scan.header?.baseVersion ?? 0
        let newest = max(newer.last?.version ?? 0, base)
        guard newest > fileVersion else { return nil }
        return UnreplayedSaves(journalPath: path, count: Int(clamping: newest - fileVersion), fileVersion: fileVersion, newestVersion: newest)
    }

    /// The error a tool throws instead of reading `storePath` without these saves.
    public func error(reading storePath: String) -> GraphStoreError {
        .fileOperationFailed(
            path: journalPath, operation: "read \(storePath) without its journal",
            reason: "the store holds \(count) save\(count == 1 ? "" : "s") newer than the file (store version \(fileVersion + 1 == newestVersion ? "\(newestVersion)" : "\(fileVersion + 1) to \(newestVersion)")), in its journal or in a newer file written while this one was read: the store is open in a process, or its last process ended without closing it. Open it with the app's GraphContainer and close it, which writes them into the file, then read it again")
    }
}
