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
    /// - Throws: `damage` when there is no previous snapshot, or it cannot be read (a damaged
    ///   file's, saying so);
    ///   ``GraphStoreError/damagedFile(path:offset:reason:)`` naming the store's file and the
    ///   previous snapshot when that is in an older or newer model version than the app's (or
    ///   one it does not know), and naming the journal too when the journal does not continue the previous snapshot (it
    ///   starts after it, or belongs to another store), so that its saves could not be replayed
    ///   onto it; the reading errors of
    ///   ``JournalReplay/discontinuity(ofJournalAt:storedNumber:storedLineage:storePath:)``.
    /// - Complexity: O(previous file size + journal size).
    static func prepare(
        from damage: GraphStoreError, target: SnapshotTarget, schema: Schema, limit: Int, journalPath: String
    ) throws -> PreviousSnapshotRecovery {
        let read: (header: SnapshotHeaderV1, version: GraphVersion)?
        do {
            // Only a previous snapshot of the app's model version: an older one is not migrated
            // here, and a newer one is not the app's to open.
            do {
                read = try SnapshotFileBackend.read(target.previousURL, schema: schema, limit: limit, modelVersion: target.modelVersion)
            } catch let found as StoredModelVersion where schema.model.compare(found: found.found, option: target.modelVersion) == .same {
                // A label an open takes for the app's version though it is not the app's label
                // (a number padded by an outside tool; any label, for a container that declares
                // no version): read as that open reads it.
                read = try SnapshotFileBackend.read(target.previousURL, schema: schema, limit: limit)
            }
        } catch let found as StoredModelVersion {
            // Said, rather than the damage alone as if there were no previous snapshot: an older
            // one is what a migration at open leaves until the app's first snapshot write, and
            // it holds less than the copy that migration kept, which the error names.
            switch schema.model.compare(found: found.found, option: target.modelVersion) {
            case .older(let stored, let app):
                throw refusal(of: damage, at: target, because: olderPrevious(stored, app: app, target: target, journalPath: journalPath))
            case .newer(let stored, let app):
                throw refusal(of: damage, at: target, because: "that snapshot is in model version \(stored), newer than the app's \(app), so this app cannot open it. Nothing was changed: open the store with a release of the app that reads model version \(stored)")
            case .unknown(let expected):
                throw refusal(of: damage, at: target, because: "that snapshot says model version \"\(found.found)\", not the app's \"\(expected)\", so this app cannot open it. Nothing was changed")
            case .same:
                throw damage  // Read above.
            }
        } catch {
            throw unrecovered(damage, at: target, because: "that snapshot cannot be read either (\(error)). Nothing was changed")
        }
        guard let read else { throw unrecovered(damage, at: target, because: "there is none. Nothing was changed") }
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
        Self.refusal(
            of: damage, at: target,
            because: "the journal \(journalPath) does not continue it (\(reason)), so the saves the journal holds cannot be replayed onto it. Nothing was changed: the store file, the previous snapshot and the journal are as they were. To open the previous snapshot without the journal's saves, move the journal away (keep it: it holds those saves) and recover again")
    }

    /// `damage`, saying that recovery was tried and why the previous snapshot was not opened:
    /// a damaged file's as ``refusal(of:at:because:)`` says it, a graph the app's types refuse
    /// (that does not read soundly without them either) as the same coding error, its reason
    /// extended.
    private static func unrecovered(_ damage: GraphStoreError, at target: SnapshotTarget, because reason: String) -> GraphStoreError {
        switch damage {
        case .damagedFile:
            return refusal(of: damage, at: target, because: reason)
        case let .codingFailed(path, entity, id, refused):
            let trimmed = refused.hasSuffix(".") ? String(refused.dropLast()) : refused
            return .codingFailed(
                path: path, entity: entity, id: id,
                reason: "\(trimmed). It was not recovered from the previous snapshot \(target.previousURL.path): \(reason)")
        default:
            return damage
        }
    }

    /// The store's `damage`, then why the previous snapshot was not opened (`reason`, which
    /// says what to do).
    private static func refusal(of damage: GraphStoreError, at target: SnapshotTarget, because reason: String) -> GraphStoreError {
        let (offset, damaged): (Int?, String) = switch damage {
        case let .damagedFile(_, offset, reason): (offset, reason)
        default: (nil, "\(damage)")
        }
        let trimmed = damaged.hasSuffix(".") ? String(damaged.dropLast()) : damaged
        return .damagedFile(
            path: target.url.path, offset: offset,
            reason: "\(trimmed). It was not recovered from the previous snapshot \(target.previousURL.path): \(reason)")
    }

    /// Why a previous snapshot in model version `stored`, older than the app's `app`, is not
    /// opened, and the way out: the copies a migration kept of the store (`<file>.v<n>`, see
    /// ``OlderStoreMigration/backupURL(for:version:companions:keeping:)``), and the journal beside the
    /// store, whose records are in the app's model version.
    ///
    /// - Complexity: one listing of the store's directory.
    private static func olderPrevious(_ stored: Int, app: Int, target: SnapshotTarget, journalPath: String) -> String {
        let name = target.url.lastPathComponent
        let directory = target.url.deletingLastPathComponent()
        // `<file>.v<n>` and `<file>.v<n>-<k>`, oldest model version and attempt first.
        let copies = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .compactMap { entry -> (version: Int, attempt: Int, path: String)? in
                guard entry.hasPrefix(name + ".v"), let copy = OlderStoreMigration.keptCopy(named: entry.dropFirst(name.count + 2)),
                      copy.version >= stored, copy.version < app
                else { return nil }
                return (copy.version, copy.attempt, directory.appendingPathComponent(entry).path)
            }
            .sorted { ($0.version, $0.attempt) < ($1.version, $1.attempt) }
        var reason = "that snapshot is in model version \(stored), older than the app's \(app): it was written before the store was migrated to model version \(app), and a recovery does not migrate it"
        if let newest = copies.last {
            let named = copies.count == 1 ? newest.path : copies.map(\.path).joined(separator: ", ") + " (the last is the newest)"
            reason += ": the copy the migration kept of the store as it was then, \(named), holds saves it does not"
        }
        reason += ". Nothing was changed"
        if FileManager.default.fileExists(atPath: journalPath) {
            reason += ". The journal \(journalPath) holds saves made since the migration, in model version \(app), which cannot be replayed onto an older snapshot: move it away (keep it: it holds those saves)"
        }
        if let newest = copies.last {
            reason += ". To recover, move the damaged file away and put \(newest.path) back at the store's name (and \(newest.path).journal as \(journalPath), if there is one); the next open migrates it again"
        }
        return reason
    }
}
