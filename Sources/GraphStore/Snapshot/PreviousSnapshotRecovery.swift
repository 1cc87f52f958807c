import Foundation
import Logging

/// Opening the previous snapshot (`<file>.previous`) in place of a damaged one, when
/// ``SnapshotOptions/recoverFromPreviousSnapshot`` is set.
///
/// In two steps, so that a recovery that cannot work changes nothing: ``prepare(from:target:schema:limit:journalPath:)``
/// reads the previous snapshot and checks that the journal beside the store continues it,
/// writing nothing; the store then replays the journal onto it in memory; only when that
/// succeeded does ``complete()`` copy the damaged file aside and put the previous snapshot
/// back at the store's name.
struct PreviousSnapshotRecovery {
    /// Why the store's own file could not be opened.
    let damage: GraphStoreError
    /// The previous snapshot, read and built.
    let snapshot: (header: SnapshotHeaderV1, version: GraphVersion)
    /// The store's file.
    let target: SnapshotTarget

    /// The previous snapshot's path.
    var previousPath: String { target.previousURL.path }

    // MARK: - Steps

    /// Reads the previous snapshot and checks that the journal at `journalPath` continues it.
    /// Writes nothing.
    ///
    /// - Throws: `damage` when there is no previous snapshot, or it cannot be read, or it is
    ///   in another model version; ``GraphStoreError/damagedFile(path:offset:reason:)`` naming
    ///   the store's file, the previous snapshot and the journal when the journal does not
    ///   continue the previous snapshot (it starts after it, or belongs to another store), so
    ///   that its saves could not be replayed onto it; the reading errors of
    ///   ``JournalReplay/discontinuity(ofJournalAt:storedNumber:storedLineage:storePath:)``.
    /// - Complexity: O(previous file size + journal size).
    static func prepare(
        from damage: GraphStoreError, target: SnapshotTarget, schema: Schema, limit: Int, journalPath: String
    ) throws -> PreviousSnapshotRecovery {
        let read: (header: SnapshotHeaderV1, version: GraphVersion)?
        do {
            // Only a previous snapshot of the app's model version: an older one is not migrated
            // here, and a newer one is not the app's to open.
            read = try SnapshotFileBackend.read(target.previousURL, schema: schema, limit: limit, modelVersion: target.modelVersion)
        } catch {
            throw damage
        }
        guard let read else { throw damage }
        let recovery = PreviousSnapshotRecovery(damage: damage, snapshot: read, target: target)
        if let reason = try JournalReplay.discontinuity(
            ofJournalAt: journalPath, storedNumber: read.version.number,
            storedLineage: read.header.lineage.flatMap(UUID.init(uuidString:)), storePath: recovery.previousPath
        ) {
            throw recovery.refusal(journalPath: journalPath, because: reason)
        }
        return recovery
    }

    /// Keeps the damaged file aside and puts the previous snapshot back at the store's name.
    ///
    /// - Throws: `damage` when the damaged file cannot be copied and synced, or the previous
    ///   snapshot cannot be put back; the store's file is then as it was.
    /// - Complexity: O(damaged file size + previous file size), plus the fsyncs of both writes.
    func complete() throws {
        // Keep the damaged file for inspection, under a name no earlier recovery took; the next
        // write replaces it. Without that copy the damaged file stays where it is.
        let aside: String
        do {
            aside = try DamagedFileCopy.keep(target.url.path, fileSystem: target.fileSystem)
        } catch {
            throw damage
        }
        // The damaged file must not become the previous snapshot: put the good one back first,
        // atomically, so that a crash leaves one or the other at the store's name. When that
        // fails (no space for it, say), the store is not opened: its first write would keep the
        // damaged file as the previous snapshot in place of the good one.
        do {
            try AtomicFile.write(try Data(contentsOf: target.previousURL), to: target.url, fileSystem: target.fileSystem)
        } catch {
            throw damage
        }
        Logger(label: "GraphStore.SnapshotFileBackend").warning("Opened the previous snapshot because the current one is damaged", metadata: [
            "damaged": "\(damage)", "keptAs": "\(aside)",
        ])
    }

    // MARK: - Private

    /// The error for a recovery the journal rules out: the store's damage, then why the
    /// previous snapshot was not opened, and what to do.
    private func refusal(journalPath: String, because reason: String) -> GraphStoreError {
        let (offset, damaged): (Int?, String) = switch damage {
        case let .damagedFile(_, offset, reason): (offset, reason)
        default: (nil, "\(damage)")
        }
        let trimmed = damaged.hasSuffix(".") ? String(damaged.dropLast()) : damaged
        return .damagedFile(
            path: target.url.path, offset: offset,
            reason: "\(trimmed). It was not recovered from the previous snapshot \(previousPath): the journal \(journalPath) does not continue it (\(reason)), so the saves the journal holds cannot be replayed onto it. Nothing was changed: the store file, the previous snapshot and the journal are as they were. To open the previous snapshot without the journal's saves, move the journal away (keep it: it holds those saves) and recover again")
    }
}
