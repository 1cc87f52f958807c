import Foundation
internal import GraphStoreCoding
import Logging

/// Opening a snapshot store written by an older model version: the file and the journal beside
/// it are read as generic values, migrated, decoded with the app's types and checked, and only
/// then written, durably, with the old files kept beside the new one.
///
/// Every failure before the write leaves every file as it was. The write itself:
/// 1. the old snapshot is copied to `<file>.v<old version>` (and a journal to
///    `<file>.v<old version>.journal`), each durably (temporary file, fsync, rename, fsync of
///    the directory), under a name no earlier migration took;
/// 2. the migrated snapshot is written over `<file>` the same way, with the same lineage and
///    at the store version the journal reached;
/// 3. the old journal is removed: the new snapshot holds its records. Should that fail, the
///    journal stays harmlessly: its records are no newer than the snapshot and are never read;
/// 4. the migrated snapshot is written as `<file>.previous` too (best effort), so that
///    recovery from the previous snapshot opens it, in the app's model version.
enum SnapshotStoreMigration {
    /// Migrates the store at `url`, whose raw file is `raw` and whose header says model
    /// version `stored`, to the app's version, and returns it as the store now holds it.
    ///
    /// - Throws: ``GraphStoreError/migrationFailed(path:fromVersion:toVersion:entity:field:id:reason:)``,
    ///   the reading errors of ``GenericSnapshot``, ``GraphStoreError/damagedFile(path:offset:reason:)``
    ///   for a damaged journal, ``GraphStoreError/fileOperationFailed(path:operation:reason:)``
    ///   when the migrated store cannot be written (nothing is then replaced).
    /// - Complexity: O(objects) generic and typed work, then four or five durable file writes.
    static func migrate(
        _ url: URL, raw: Data, from stored: Int, schema: Schema, format: SnapshotFormat, compression: Compression,
        modelVersion label: String, limit: Int
    ) throws -> (header: SnapshotHeaderV1, version: GraphVersion) {
        let path = url.path
        // The version the comparison found older than: the option's number, for a container
        // that declares none.
        let target = schema.model.appVersion(option: label) ?? schema.model.version
        let document = try SnapshotFileBackend.document(fromRaw: raw, path: path, limit: limit)
        // A property list's URLs and decimals in the JSON shapes migration steps see.
        let generic = try GenericSnapshot.decode(document, compression: Gzip.isGzip(raw) ? .gzip : .none, path: path, limit: limit)
            .withURLsAndDecimalsInJSONShape()
        let migrated = try OlderStoreMigration.migrate(
            MigratingStore(conventional: generic.entities), from: stored, to: target, storeVersion: generic.header.storeVersion,
            lineage: generic.header.lineage.flatMap(UUID.init(uuidString:)), schema: schema, path: path, numbers: generic.exactNumbers,
            // Journal records are JSON whatever the snapshot's format: their hints are the snapshot's.
            fieldTypes: generic.header.fieldTypes)
        let version = migrated.version
        let lineage = migrated.lineage

        let encoded = try SnapshotCodec.encode(
            version, schema: schema, format: format, modelVersion: label, savedAt: Date(), path: path, lineage: lineage)
        try write(encoded, compression: compression, over: url, keeping: raw, journal: migrated.journal, oldVersion: stored)
        let header = SnapshotHeaderV1(
            modelVersion: label, savedAt: Date(), storeVersion: version.number, counts: [:], lineage: lineage.uuidString)
        Logger(label: "GraphStore.SnapshotStoreMigration").notice("Migrated the store to the app's model version", metadata: [
            "path": "\(path)", "from": "\(stored)", "to": "\(target)",
        ])
        return (header, version)
    }

    // MARK: - Writing

    private static func write(
        _ document: Data, compression: Compression, over url: URL, keeping raw: Data, journal: JournalContents?, oldVersion: Int
    ) throws {
        let bytes: Data
        do {
            bytes = compression == .gzip ? try Gzip.compress(document, level: SnapshotTarget.compressionLevel, parts: Processors.active) : document
        } catch {
            throw GraphStoreError(error, path: url.path)
        }
        var old: [(suffix: String, data: Data)] = [("", raw)]
        if let journal { old.append((JournalReplay.path(forStoreAt: ""), journal.bytes)) }
        let written = try OlderStoreMigration.keepCopies(old, of: url, version: oldVersion)
        do {
            try AtomicFile.write(bytes, to: url)
        } catch {
            // A failed directory fsync comes after the rename: the migrated file already stands
            // at `url`, and the kept copies are the only copies of the old store, so they stay.
            if case .io(operation: "fsync directory", _, _, _)? = (error as any Error) as? FileLayerError {} else {
                for file in written { try? FileManager.default.removeItem(at: file) }
            }
            throw GraphStoreError(error, path: url.path)
        }
        // The old journal first: its records are in the migrated file, and any journal a
        // recovery then finds beside the store is the new model's.
        if journal != nil {
            try? FileManager.default.removeItem(atPath: JournalReplay.path(forStoreAt: url.path))
        }
        // The migrated snapshot is also the previous one: the file there is one the older app
        // wrote before its last write, older than the kept copy, and recovery cannot open it in
        // this model version; this one it opens, with every save journaled since. A file of its
        // own (not a link), so that damage to the store's file in place cannot reach it, made
        // anew with the store's owner and mode (the old one may have kept looser ones). Best
        // effort: without it, recovery is refused naming the kept copies.
        let previous = PreviousSnapshot.path(forStoreAt: url.path)
        unlink(previous)
        try? AtomicFile.write(bytes, to: URL(fileURLWithPath: previous), companion: url.path)
    }
}
