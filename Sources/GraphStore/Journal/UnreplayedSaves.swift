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
        try find(forStoreAt: url, fileVersion: fileVersion, lineage: nil, checksLineage: false)
    }

    /// The saves in the journal beside the store at `url` that are newer than `fileVersion`, as
    /// ``find(forStoreAt:fileVersion:)`` finds them, after checking, as opening the store does,
    /// that the journal belongs to this file: a journal of another store (its lineage is not
    /// `lineage`), or, for a file written before journals (`lineage` is `nil`), one started on
    /// an older version than the file holds, would make the app refuse to open the store.
    ///
    /// - Parameter lineage: The lineage the file's header or metadata names (`nil`: none).
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` naming the journal, for
    ///   a journal that does not belong to the file (with the reason the app gives), and the
    ///   errors of ``find(forStoreAt:fileVersion:)``.
    /// - Complexity: O(journal size); one `stat` when there is no journal.
    public static func find(forStoreAt url: URL, fileVersion: UInt64, lineage: UUID?) throws -> UnreplayedSaves? {
        try find(forStoreAt: url, fileVersion: fileVersion, lineage: lineage, checksLineage: true)
    }

    private static func find(forStoreAt url: URL, fileVersion: UInt64, lineage: UUID?, checksLineage: Bool) throws -> UnreplayedSaves? {
        // The app writes the journal beside the path it opened, which may be a symbolic link
        // to the file read here, or the file a link read here points to: both are looked at.
        // It replays the one beside the file itself, so only that one must belong to it.
        let resolved = url.resolvingSymlinksInPath()
        let belongs = checksLineage ? (lineage: lineage, storePath: resolved.path) : nil
        if resolved.path != url.path,
           let saves = try find(journalAt: JournalReplay.path(forStoreAt: resolved.path), fileVersion: fileVersion, belongingTo: belongs) {
            return saves
        }
        return try find(
            journalAt: JournalReplay.path(forStoreAt: url.path), fileVersion: fileVersion, belongingTo: resolved.path == url.path ? belongs : nil)
    }

    /// The saves in the journal at `path` newer than `fileVersion`; when `store` is given, the
    /// journal must first belong to the file at `store.storePath`, of `store.lineage`.
    private static func find(
        journalAt path: String, fileVersion: UInt64, belongingTo store: (lineage: UUID?, storePath: String)?
    ) throws -> UnreplayedSaves? {
        let contents: JournalContents?
        do {
            contents = try JournalReplay.read(path)
        } catch let damage as JournalFormatV1.Damage {
            throw GraphStoreError.damagedFile(path: path, offset: damage.offset, reason: damage.reason)
        }
        guard let contents else { return nil }
        if let store, let header = contents.scan.header,
           let gap = JournalReplay.discontinuity(
               of: contents, header: header, storedNumber: fileVersion, storedLineage: store.lineage, storePath: store.storePath) {
            // A journal of this store that starts after the file's version is a store written
            // while the file was read: saves this reader lacks, reported as such below.
            let sameStore = store.lineage.map { $0 == header.lineage } ?? true
            if !(sameStore && header.baseVersion > fileVersion) {
                throw GraphStoreError.damagedFile(path: path, offset: gap.offset, reason: gap.reason)
            }
        }
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
