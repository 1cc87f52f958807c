import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The part of opening a store written by an older model version that does not depend on how
/// the store keeps its data: shared by the snapshot store (``SnapshotStoreMigration``) and the
/// SQLite store.
///
/// The store's objects, read as generic values in the JSON snapshot conventions, take in the
/// journal a crash left beside the store (in the same older model), go through the chain of
/// migrations, and are decoded with the app's types and checked as a graph. Nothing is written:
/// the caller keeps the old files with ``keepCopies(_:of:version:companions:)`` and then
/// replaces its store.
package enum OlderStoreMigration {
    /// The migrated graph and what the caller needs to write it.
    package struct Migrated: Sendable {
        /// The migrated graph, at the store version the journal reached.
        package var version: GraphVersion
        /// The store's lineage: kept from the store or its journal, or new for a store that had none.
        package var lineage: UUID
        /// The journal as read (`nil`: no journal file). Its records are in the old model: the
        /// caller keeps a copy beside the old store and replaces it.
        package var journal: JournalContents?
    }

    /// Migrates `store`, the objects of the store at `path` (whose file says model version
    /// `stored`, store version `storeVersion` and lineage `lineage`), to `target`, the app's
    /// version (``ModelHistory/appVersion(option:)``).
    ///
    /// - Throws: ``GraphStoreError/migrationFailed(path:fromVersion:toVersion:entity:field:id:reason:)``
    ///   for a missing link in the chain, a step that throws or is refused, a result that does
    ///   not decode with the app's types or breaks a relationship or unique constraint, or a
    ///   field the app's types would drop; ``GraphStoreError/damagedFile(path:offset:reason:)``
    ///   for a damaged journal or one of another store.
    /// - Parameter fieldTypes: The type hints of the snapshot (``SnapshotHeaderV1/fieldTypes``),
    ///   which tell a string `"NaN"` in a journal record from a double's (see
    ///   ``SnapshotValue/withNonFiniteStringsRestored(in:)``); `nil` when there are none.
    /// - Complexity: O(objects + journal size) generic and typed work, plus what transforms do.
    package static func migrate(
        _ store: MigratingStore, from stored: Int, to target: Int, storeVersion: UInt64, lineage: UUID?, schema: Schema, path: String,
        numbers: ExactNumbers = ExactNumbers(), fieldTypes: [String: [String: String]]? = nil
    ) throws -> Migrated {
        let chain: [SchemaMigration]
        do { chain = try schema.model.chain(from: stored, to: target) } catch { throw error.error(path: path) }
        var store = store
        var numbers = numbers
        // The entities the app keys by `UUID`: a journal record's id of one meets a stored id
        // written in the other letter case (see ``GenericJournalReplay/key(of:in:matchingCase:)``).
        let uuidKeyed = Set(schema.entities.filter { $0.type.isKeyedByUUID }.map(\.name))
        let replayed = try GenericJournalReplay.replay(
            journalAt: JournalReplay.path(forStoreAt: path), onto: &store, numbers: &numbers, storeVersion: storeVersion, lineage: lineage,
            storePath: path, fieldTypes: fieldTypes, uuidKeyed: uuidKeyed)
        do { try ModelMigrator.run(chain, on: &store) } catch { throw error.error(path: path) }
        let version = try decode(
            store, numbers: numbers, storeVersion: replayed.storeVersion, schema: schema, path: path, from: stored, to: target)
        return Migrated(version: version, lineage: replayed.lineage ?? UUID(), journal: replayed.journal)
    }

    /// Where the old store at `url` is kept: `<file>.v<version>`, or `<file>.v<version>-2`,
    /// `-3`… when that name, or that name with one of `companions` appended (its journal's
    /// `.journal`, a SQLite file's `-wal`), is taken by other files.
    ///
    /// A name whose files are exactly the ones to keep (`keeping`: each suffix, `""` for the
    /// store's own file, with its bytes; no other companion present) is not taken: it is the
    /// copy a migration killed before it wrote the migrated store kept, and keeping it again
    /// under the next name would pile up identical copies of the store, one per killed attempt.
    /// `keptAlready` then says so.
    ///
    /// - Complexity: one `stat` per candidate name and companion, and a read of the files of a
    ///   taken name whose sizes match the ones to keep.
    package static func backupURL(
        for url: URL, version: Int, companions: [String] = [".journal"], keeping files: [(suffix: String, data: Data)] = []
    ) -> (url: URL, keptAlready: Bool) {
        let stem = url.path + ".v\(version)"
        var candidate = stem
        var attempt = 1
        func isTaken(_ path: String) -> Bool {
            FileManager.default.fileExists(atPath: path) || companions.contains { FileManager.default.fileExists(atPath: path + $0) }
        }
        func holdsTheFiles(_ path: String) -> Bool {
            !files.isEmpty && ([""] + companions).allSatisfy { suffix in
                guard let file = files.first(where: { $0.suffix == suffix }) else {
                    return !FileManager.default.fileExists(atPath: path + suffix)
                }
                return isCopy(atPath: path + suffix, of: file.data)
            }
        }
        while isTaken(candidate) {
            if holdsTheFiles(candidate) { return (URL(fileURLWithPath: candidate), true) }
            attempt += 1
            candidate = stem + "-\(attempt)"
        }
        return (URL(fileURLWithPath: candidate), false)
    }

    /// Whether the regular file at `path` holds exactly `data`.
    ///
    /// - Complexity: one `stat`; a read of the file when its size is `data`'s.
    private static func isCopy(atPath path: String, of data: Data) -> Bool {
        guard case .success(let status) = FileStatus.of(path: path), status.isRegular, status.size == data.count,
              let contents = try? FileReader.readFile(at: URL(fileURLWithPath: path)) else { return false }
        return contents == data
    }

    /// Whether `entry` is the temporary file that keeping a copy of the store named
    /// `storeName` leaves when the process is killed while writing it:
    /// `.<store>.v<version>[-<n>][.journal | -wal].tmp-<pid>-<hex>` (see
    /// ``backupURL(for:version:companions:keeping:)`` and ``keepCopies(_:of:version:companions:)``), written by a process
    /// that no longer runs. The copies themselves, once renamed into place, never match; nor
    /// does a temporary file of a live process, which could be another store's own write (a
    /// store named `<store>.v2` beside this one writes `.<store>.v2.tmp-<pid>-<hex>`).
    ///
    /// - Complexity: O(length of `entry`).
    package static func isCopyTemporary(_ entry: String, ofStoreNamed storeName: String) -> Bool {
        let prefix = "." + storeName + ".v"
        guard entry.hasPrefix(prefix), let marker = entry.range(of: ".tmp-", options: .backwards),
              AtomicFile.isTemporarySuffix(entry[marker.upperBound...]) else { return false }
        var copy = entry[entry.index(entry.startIndex, offsetBy: prefix.count)..<marker.lowerBound]
        for companion in [".journal", "-wal"] where copy.hasSuffix(companion) {
            copy = copy.dropLast(companion.count)
            break
        }
        guard keptCopy(named: copy) != nil,
              let writer = entry[marker.upperBound...].split(separator: "-").first.flatMap({ pid_t($0) }) else { return false }
        return kill(writer, 0) != 0 && errno == ESRCH
    }

    /// The model version and the attempt that the part of a kept copy's name after `<file>.v`
    /// gives (``backupURL(for:version:companions:keeping:)``): `<version>`, the first attempt, or
    /// `<version>-<attempt>`, in decimal digits; `nil` for anything else.
    ///
    /// - Complexity: O(length of `name`).
    package static func keptCopy(named name: Substring) -> (version: Int, attempt: Int)? {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }),
              let version = Int(parts[0]), let attempt = parts.count == 2 ? Int(parts[1]) : 1 else { return nil }
        return (version, attempt)
    }

    /// Keeps the old store's `files` (each suffix, `""` for the store's own file, with its
    /// bytes) under the name ``backupURL(for:version:companions:keeping:)`` picks for the store
    /// at `store`: each written durably (temporary file, fsync, rename, fsync of the directory),
    /// in order, with the owner and permission bits of the store file (the copies hold its
    /// data). When one fails, the ones already written are removed. A name that holds these
    /// files already (kept by a migration killed before it wrote the migrated store) is left as
    /// it is, and nothing is written.
    ///
    /// - Returns: the files written (none when they were kept already), for the caller to
    ///   remove if its own write fails.
    /// - Throws: ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` naming the file.
    /// - Complexity: O(bytes), plus two device flushes per file.
    @discardableResult
    package static func keepCopies(
        _ files: [(suffix: String, data: Data)], of store: URL, version: Int, companions: [String] = [".journal"]
    ) throws -> [URL] {
        let backup = backupURL(for: store, version: version, companions: companions, keeping: files)
        if backup.keptAlready { return [] }
        var written: [URL] = []
        for file in files {
            let url = URL(fileURLWithPath: backup.url.path + file.suffix)
            do {
                try AtomicFile.write(file.data, to: url, companion: store.path)
                written.append(url)
            } catch {
                for url in written { try? FileManager.default.removeItem(at: url) }
                throw GraphStoreError(error, path: url.path)
            }
        }
        return written
    }

    // MARK: - Checking

    /// The migrated objects decoded with the app's types and checked as a graph, each double
    /// `numbers` recorded decoded from its exact number.
    private static func decode(
        _ store: MigratingStore, numbers: ExactNumbers, storeVersion: UInt64, schema: Schema, path: String, from: Int, to: Int
    ) throws -> GraphVersion {
        let names = store.entityNames
        let header = SnapshotHeaderV1(modelVersion: String(to), savedAt: Date(), storeVersion: storeVersion, counts: [:])
        var snapshot = GenericSnapshot(
            header: header, entities: names.map { name in (name, store[name].map { SnapshotValue.object($0) }) },
            format: .json, compression: .none)
        snapshot.exactNumbers = numbers
        let json: Data
        do {
            json = try snapshot.encoded(as: .json)
        } catch let error as GraphStoreError {
            throw MigrationFailure(from: from, to: to, reason: "the migrated store does not encode: \(error)").error(path: path)
        }
        let decoded: (header: SnapshotHeaderV1, version: GraphVersion, unkept: [UnkeptFields.Candidate])
        do {
            decoded = try SnapshotCodec.decodeSurveying(json, schema: schema, path: path, reportingPositions: true, survey: true)
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
        if let lost = UnkeptFields.lost(decoded.unkept, stored: store, schema: schema) {
            throw MigrationFailure(
                from: from, to: to, entity: lost.entity, field: lost.field, id: store[lost.entity][lost.index]["id"].map(ModelMigrator.idText),
                reason: "after the migrations, " + UnkeptFields.reason(lost)).error(path: path)
        }
        return decoded.version
    }
}

extension MigratingStore {
    /// A store of `entities`, each object converted to the JSON snapshot conventions that
    /// migration steps see (dates as seconds since 2001, data as Base64); a value that is not
    /// an object becomes an empty one, which the typed decoding then refuses.
    ///
    /// - Complexity: O(size of the values).
    package init(conventional entities: [(name: String, objects: [SnapshotValue])]) {
        self.init()
        for (name, objects) in entities {
            self[name] = objects.map { object in
                guard case .object(let fields) = object.jsonConventional else { return [:] }
                return fields
            }
        }
    }
}

extension JournalContents {
    /// The journal's bytes as read.
    package var bytes: Data { data }
}

extension Entity {
    /// Whether the entity's id is a `UUID`.
    static var isKeyedByUUID: Bool { ID.self == UUID.self }
}
