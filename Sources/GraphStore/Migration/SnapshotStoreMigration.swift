import Foundation
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
///    journal stays harmlessly: its records are no newer than the snapshot and are never read.
enum SnapshotStoreMigration {
    /// Migrates the store at `url`, whose raw file is `raw` and whose header says model
    /// version `stored`, to the app's version, and returns it as the store now holds it.
    ///
    /// - Throws: ``GraphStoreError/migrationFailed(path:fromVersion:toVersion:entity:field:id:reason:)``,
    ///   the reading errors of ``GenericSnapshot``, ``GraphStoreError/damagedFile(path:offset:reason:)``
    ///   for a damaged journal, ``GraphStoreError/fileOperationFailed(path:operation:reason:)``
    ///   when the migrated store cannot be written (nothing is then replaced).
    /// - Complexity: O(objects) generic and typed work, then three or four durable file writes.
    static func migrate(
        _ url: URL, raw: Data, from stored: Int, schema: Schema, format: SnapshotFormat, compression: Compression,
        modelVersion label: String, limit: Int
    ) throws -> (header: SnapshotHeaderV1, version: GraphVersion) {
        let path = url.path
        let target = schema.model.version
        let document = try SnapshotFileBackend.document(fromRaw: raw, path: path, limit: limit)
        let generic = try GenericSnapshot.decode(document, compression: Gzip.isGzip(raw) ? .gzip : .none, path: path)
        let chain: [SchemaMigration]
        do { chain = try schema.model.chain(from: stored) } catch { throw error.error(path: path) }

        var store = MigratingStore()
        for (name, objects) in generic.entities {
            store[name] = objects.map { object in
                guard case .object(let fields) = object.jsonConventional else { return [:] }
                return fields
            }
        }
        let journalPath = JournalReplay.path(forStoreAt: path)
        let replayed = try GenericJournalReplay.replay(
            journalAt: journalPath, onto: &store, storeVersion: generic.header.storeVersion,
            lineage: generic.header.lineage.flatMap(UUID.init(uuidString:)), storePath: path)
        do { try ModelMigrator.run(chain, on: &store) } catch { throw error.error(path: path) }

        let lineage = replayed.lineage ?? UUID()
        let version = try decode(store, storeVersion: replayed.storeVersion, schema: schema, path: path, from: stored, to: target)
        try checkNothingDropped(store, schema: schema, path: path, from: stored, to: target)

        let migrated = try SnapshotCodec.encode(
            version, schema: schema, format: format, modelVersion: label, savedAt: Date(), path: path, lineage: lineage)
        try write(migrated, compression: compression, over: url, keeping: raw, journal: replayed.journal, oldVersion: stored)
        let header = SnapshotHeaderV1(
            modelVersion: label, savedAt: Date(), storeVersion: version.number, counts: [:], lineage: lineage.uuidString)
        Logger(label: "GraphStore.SnapshotStoreMigration").notice("Migrated the store to the app's model version", metadata: [
            "path": "\(path)", "from": "\(stored)", "to": "\(target)",
        ])
        return (header, version)
    }

    // MARK: - Checking

    /// The migrated objects decoded with the app's types and checked as a graph.
    private static func decode(
        _ store: MigratingStore, storeVersion: UInt64, schema: Schema, path: String, from: Int, to: Int
    ) throws -> GraphVersion {
        let names = store.entityNames
        let header = SnapshotHeaderV1(modelVersion: String(to), savedAt: Date(), storeVersion: storeVersion, counts: [:])
        let snapshot = GenericSnapshot(
            header: header, entities: names.map { name in (name, store[name].map { SnapshotValue.object($0) }) },
            format: .json, compression: .none)
        let json: Data
        do {
            json = try snapshot.encoded(as: .json)
        } catch let error as GraphStoreError {
            throw MigrationFailure(from: from, to: to, reason: "the migrated store does not encode: \(error)").error(path: path)
        }
        do {
            return try SnapshotCodec.decode(json, schema: schema, path: path, reportingPositions: true).1
        } catch let failure as TypedDecodingFailure {
            let id = failure.index.flatMap { index in store[failure.entity].indices.contains(index) ? store[failure.entity][index]["id"] : nil }
            throw MigrationFailure(
                from: from, to: to, entity: failure.entity, field: failure.field, id: id.map(ModelMigrator.idText),
                reason: "the migrated object does not decode as the app's \(failure.entity): \(failure.reason) (\(failure.hint))").error(path: path)
        } catch let error as GraphStoreError {
            switch error {
            case .codingFailed(_, let entity, _, let reason):
                throw MigrationFailure(from: from, to: to, entity: entity, reason: "after the migrations, \(reason)").error(path: path)
            case .damagedFile(_, _, let reason):
                throw MigrationFailure(from: from, to: to, reason: "the migrated graph is not valid: \(reason)").error(path: path)
            default:
                throw error
            }
        }
    }

    /// Refuses a migrated store holding a field the app's type does not keep: its values
    /// would be dropped at the next write (a renamed optional field reads as nil).
    private static func checkNothingDropped(_ store: MigratingStore, schema: Schema, path: String, from: Int, to: Int) throws {
        let encoder = SnapshotCodec.makeJSONEncoder()
        let decoder = SnapshotCodec.makeJSONDecoder()
        for entity in schema.entities {
            var checked: Set<String> = ["id"]
            for object in store[entity.name] {
                let unchecked = object.filter { !checked.contains($0.key) && $0.value != .null }
                guard !unchecked.isEmpty else { continue }
                let kept: Set<String>
                do {
                    let data = try encoder.encode(SnapshotValue.object(object))
                    kept = try keys(afterRoundTrip: data, as: entity.type, decoder: decoder, encoder: encoder)
                } catch {
                    continue
                }
                for field in unchecked.keys.sorted() where !kept.contains(field) {
                    throw MigrationFailure(
                        from: from, to: to, entity: entity.name, field: field, id: object["id"].map(ModelMigrator.idText),
                        reason: "the migrated store holds \(entity.name).\(field), which the app's \(entity.name) does not keep: its values would be lost at the next save; add .removeField(\"\(field)\", in: \"\(entity.name)\") or .renameField(\"\(field)\", to: …, in: \"\(entity.name)\")").error(path: path)
                }
                checked.formUnion(unchecked.keys)
            }
        }
    }

    private static func keys<E: Entity>(afterRoundTrip data: Data, as type: E.Type, decoder: JSONDecoder, encoder: JSONEncoder) throws -> Set<String> {
        let value = try decoder.decode(E.self, from: data)
        let object = try JSONSerialization.jsonObject(with: encoder.encode(value)) as? [String: Any] ?? [:]
        return Set(object.keys)
    }

    // MARK: - Writing

    private static func write(
        _ document: Data, compression: Compression, over url: URL, keeping raw: Data, journal: JournalContents?, oldVersion: Int
    ) throws {
        let bytes: Data
        do {
            bytes = compression == .gzip ? try Gzip.compress(document, level: SnapshotTarget.compressionLevel) : document
        } catch {
            throw GraphStoreError(error, path: url.path)
        }
        let backup = backupURL(for: url, version: oldVersion)
        let journalBackup = URL(fileURLWithPath: JournalReplay.path(forStoreAt: backup.path))
        var written: [URL] = []
        do {
            try AtomicFile.write(raw, to: backup)
            written.append(backup)
            if let journal {
                try AtomicFile.write(journal.data, to: journalBackup)
                written.append(journalBackup)
            }
            try AtomicFile.write(bytes, to: url)
        } catch {
            for file in written { try? FileManager.default.removeItem(at: file) }
            throw GraphStoreError(error, path: url.path)
        }
        if journal != nil {
            try? FileManager.default.removeItem(atPath: JournalReplay.path(forStoreAt: url.path))
        }
    }

    /// `<file>.v<version>`, or `<file>.v<version>-2`, `-3`… when taken (with its journal's name).
    static func backupURL(for url: URL, version: Int) -> URL {
        let stem = url.path + ".v\(version)"
        var candidate = stem
        var attempt = 1
        while FileManager.default.fileExists(atPath: candidate) || FileManager.default.fileExists(atPath: JournalReplay.path(forStoreAt: candidate)) {
            attempt += 1
            candidate = stem + "-\(attempt)"
        }
        return URL(fileURLWithPath: candidate)
    }
}
