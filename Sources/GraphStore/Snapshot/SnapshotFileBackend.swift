import Foundation
import Logging

/// The snapshot-file store: opens (and locks) the file, loads the graph, replays the journal,
/// and hands every commit to the coalescing ``SnapshotWriter``.
final class SnapshotFileBackend: StoreBackend {
    private let target: SnapshotTarget
    private let options: SnapshotOptions
    private let interval: Duration
    private let durability: Durability
    /// The store's lock; `nil` for a store opened read-only because its lock file is missing
    /// and cannot be created (see ``StoreFileLock/lockUnlessUncreatable(forStoreAt:)``).
    private let lock: StoreFileLock?
    /// Why every save of a store opened without its lock throws; `nil` when the lock is held.
    private let unlockedRefusal: GraphStoreError?
    /// The journal of this run, and whether the store was closed.
    private let opened = Guarded<(journal: StoreJournal?, isClosed: Bool)>((nil, false))
    /// The coalescing writer; tests reach it to wait for idleness.
    let writer: SnapshotWriter

    init(
        url: URL, format: SnapshotFormat, compression: Compression, interval: Duration, durability: Durability,
        options: SnapshotOptions, schema: Schema
    ) throws {
        // Through a symbolic link, the file it points to: one lock and one journal per file,
        // and writes replace the file, not the link.
        let url = try StorePath.resolve(url)
        // A container on this file that was released without `close()` may still be closing.
        StoreClosings.waitUntilClosed(url.path)
        target = SnapshotTarget(
            url: url, format: format, compression: compression, modelVersion: schema.model.label(option: options.modelVersion),
            schema: schema, fileSystem: options.fileSystem)
        self.options = options
        self.interval = interval
        self.durability = durability
        do {
            switch try StoreFileLock.lockUnlessUncreatable(forStoreAt: url) {
            case .success(let held):
                lock = held
                unlockedRefusal = nil
            case .failure(let creation):
                // A store on read-only media without its lock file (copied there as one file):
                // it opens and reads, and writes nothing, not even a save (which would need
                // the lock no process can take here).
                lock = nil
                unlockedRefusal = .fileOperationFailed(
                    path: StoreFileLock.lockFileURL(forStoreAt: url).path, operation: "create the lock file",
                    reason: "\(systemErrorMessage(creation.code)) (the store was opened read-only without it, so it takes no saves)")
            }
        } catch {
            throw GraphStoreError(error, path: url.path)
        }
        // A process killed while writing leaves its temporary file; the lock says it is gone.
        // Without the lock nothing says so, and nothing is removed.
        if lock != nil {
            target.removeLeftovers(also: StoreJournal.leftoverNames(beside: JournalReplay.path(forStoreAt: url.path)))
        }
        writer = SnapshotWriter(
            target: target, opened: GraphVersion(schema: schema), interval: interval,
            clock: options.clock, beforeWrite: options.beforeWrite)
    }

    // MARK: - StoreBackend

    /// Reads the snapshot, then replays the newer records of the journal beside it: a missing
    /// file is an empty store; a damaged one throws, or, when
    /// ``SnapshotOptions/recoverFromPreviousSnapshot`` is set, falls back to the previous snapshot.
    /// Then starts the journal for this run's saves (unless the durability is
    /// ``Durability/coalesced`` and no journal was left).
    ///
    /// A snapshot of an older model version is migrated first, with the journal beside it (a
    /// journal is in the model version of its snapshot): see ``SnapshotStoreMigration``.
    func load(schema: Schema) throws -> GraphVersion? {
        do {
            let journalPath = JournalReplay.path(forStoreAt: target.url.path)
            // The journal is read and decoded on another thread while the snapshot is read,
            // decompressed and decoded here (a migration rewrites the journal: then it is
            // read again).
            let prefetch = JournalPrefetch.start(path: journalPath, schema: schema)
            let (replayed, snapshotNumber, snapshotIsEmpty) = try openFolding(journalPath: journalPath, prefetch: prefetch, schema: schema)
                ?? openReplaying(journalPath: journalPath, prefetch: prefetch, schema: schema)
            var journal: StoreJournal?
            // A store opened without its lock gets a journal under every durability: the
            // journal refuses its saves.
            if durability != .coalesced || replayed.journal != nil || unlockedRefusal != nil {
                // Journal records must continue a snapshot: only its header says which model
                // version they are in, so that a newer app migrates them and an older one
                // refuses them. A store without one gets it before its first record (once per
                // store; opening and closing a store nothing is saved to still writes nothing).
                var writeFirstSnapshot: (@Sendable () throws(GraphStoreError) -> Void)?
                if !FileManager.default.fileExists(atPath: target.url.path) {
                    // Weakly: the writer holds the journal, which holds this closure.
                    writeFirstSnapshot = { [weak writer] () throws(GraphStoreError) in try writer?.writeFirstSnapshot() }
                }
                journal = try StoreJournal.start(
                    path: journalPath, durability: durability, interval: interval, clock: options.clock,
                    lineage: replayed.lineage, openedAt: replayed.version?.number ?? 0, existing: replayed.journal,
                    refusal: unlockedRefusal, fileSystem: options.fileSystem, beforeFirstRecord: writeFirstSnapshot)
            }
            opened.withLock { $0.journal = journal }
            // A journal opened read-only keeps the records it replayed, on disk as they were: no
            // snapshot is written to fold them in (it could not be, or, without the lock, must
            // not), and closing leaves them for the next open.
            let readOnly = journal?.isReadOnly == true
            writer.reset(
                to: replayed.version ?? GraphVersion(schema: schema),
                snapshotVersion: readOnly ? replayed.version?.number ?? snapshotNumber : snapshotNumber,
                // An empty snapshot of version 0 is the first snapshot written for a journal
                // (by this run or one that ended before its first write): not a previous one.
                snapshotIsFirst: snapshotNumber == 0 && snapshotIsEmpty,
                lineage: replayed.lineage, journal: journal)
            return replayed.version
        } catch {
            lock?.unlock()
            throw error
        }
    }

    var storePath: String? { target.url.path }

    var journal: StoreJournal? {
        guard durability != .coalesced || unlockedRefusal != nil else { return nil }
        return opened.withLock { $0.journal }
    }

    func didCommit(_ version: GraphVersion, change: GraphChange) {
        writer.didCommit(version)
    }

    /// With a journal: returns once the journal is fsynced (the snapshot follows within the
    /// coalescing interval), or, after an fsync of the journal failed, once a snapshot holds
    /// every earlier commit. Without: once a snapshot holds every earlier commit.
    func flush() async throws {
        if let journal {
            // After close the journal is gone or detached, and the lock released.
            guard !opened.withLock({ $0.isClosed }) else { throw GraphStoreError.containerClosed }
            try await journal.flush(orWritingTheStore: writer.flush)
        } else {
            try await writer.flush()
        }
    }

    /// Writes a final snapshot, removes the journal (which it covers), releases the lock. When
    /// the last snapshot cannot be written, the journal stays: the next open replays it.
    func close() async throws {
        defer { lock?.unlock() }
        let journal = opened.withLock { opened in
            opened.isClosed = true
            return opened.journal
        }
        do {
            try await writer.close()
        } catch {
            // The journal stays for the next open, fsynced; the write's error is the one to
            // report, and a failed fsync of the journal is logged.
            do {
                try journal?.detach()
            } catch let syncError {
                Logger(label: "GraphStore.SnapshotFileBackend").error(
                    "The journal kept by a failed close could not be fsynced", metadata: ["error": "\(syncError)"])
            }
            throw error
        }
        try journal?.remove()
    }

    var status: StoreStatus {
        var status = writer.status
        if let journal { status.durableVersion = max(status.durableVersion, journal.durableVersion) }
        return status
    }

    func events() -> AsyncStream<StoreEvent> {
        writer.events()
    }

    // MARK: - Opening

    /// The common way to open: the snapshot's objects are decoded, the journal's newer records
    /// folded into them (``JournalFold``), and the graph built once.
    ///
    /// Returns `nil` where ``openReplaying(journalPath:prefetch:schema:)`` must decide: a
    /// snapshot of another model version (migrated or refused), a damaged snapshot when
    /// recovery is on, or objects that do not form a graph, so that the error or the recovery
    /// is the one met without a journal. Nothing is changed then, except that a damaged journal
    /// set aside under recovery is set aside again by the replay (a second copy).
    ///
    /// - Returns: what opening gives, the store version of the snapshot, and whether it holds
    ///   no object.
    /// - Throws: the errors of ``readObjects(_:schema:limit:modelVersion:)`` and of
    ///   ``JournalReplay/pending(journalAt:storedNumber:storedLineage:storePath:schema:recover:prefetched:)``;
    ///   ``GraphStoreError/damagedFile(path:offset:reason:)`` naming the journal when its
    ///   records leave objects that do not form a graph (a unique value held twice, a
    ///   reference to a missing object) although the snapshot's do.
    /// - Complexity: O(file size + journal size), the graph built once.
    private func openFolding(
        journalPath: String, prefetch: JournalPrefetch?, schema: Schema
    ) throws -> (opened: JournalReplay.Opened, snapshotNumber: UInt64, snapshotIsEmpty: Bool)? {
        let url = target.url
        let limit = options.maxDecompressedBytes
        var read: (header: SnapshotHeaderV1, objects: [[any Entity]])?
        do {
            do {
                read = try Self.readObjects(url, schema: schema, limit: limit, modelVersion: target.modelVersion)
            } catch let found as StoredModelVersion {
                guard schema.model.compare(found: found.found, option: options.modelVersion) == .same else { return nil }
                read = try Self.readObjects(url, schema: schema, limit: limit)
            }
        } catch let error as GraphStoreError where options.recoverFromPreviousSnapshot && error.isDamage(of: url.path) {
            return nil
        }
        let header = read?.header
        let storedNumber = header?.storeVersion
        var pending: JournalReplay.Pending
        do {
            pending = try JournalReplay.pending(
                journalAt: journalPath, storedNumber: storedNumber, storedLineage: header?.lineage.flatMap(UUID.init(uuidString:)),
                storePath: url.path, schema: schema, recover: options.recoverFromPreviousSnapshot, prefetched: prefetch)
        } catch {
            // A snapshot whose objects do not form a graph is reported (or recovered from)
            // before its journal is looked at.
            if let read, (try? SnapshotCodec.build(read.objects, number: read.header.storeVersion, schema: schema, path: url.path)) == nil {
                return nil
            }
            throw error
        }
        // The only reference to the snapshot's objects, so that the fold changes them in place.
        var objects = read?.objects ?? schema.entities.map { _ in [] }
        let snapshotIsEmpty = objects.allSatisfy(\.isEmpty)
        read = nil
        // Nil for a file holding an id the records change twice: replayed record by record.
        guard let (lastRecord, ids, leftovers) = JournalFold.fold(&pending, into: &objects, schema: schema) else { return nil }
        let version: GraphVersion
        do {
            version = try GraphVersion.loaded(objects, ids: ids, number: lastRecord ?? storedNumber ?? 0, schema: schema)
            // Freed only now: freeing them while the graph is built would slow its parallel jobs.
            BackgroundRelease.drop(consume leftovers)
        } catch {
            // Whose fault: the snapshot's objects alone are read again (a rare path) to tell.
            if lastRecord == nil { return nil }
            if let snapshot = try? Self.readObjects(url, schema: schema, limit: limit),
               (try? SnapshotCodec.build(snapshot.objects, number: snapshot.header.storeVersion, schema: schema, path: url.path)) == nil {
                return nil
            }
            throw GraphStoreError.damagedFile(
                path: journalPath, offset: nil,
                reason: "the journal's records, replayed onto \(url.path), leave objects that do not form a graph: \(error.description)")
        }
        let opened = header == nil && !pending.holdsRecords ? nil : version
        return (JournalReplay.Opened(version: opened, lineage: pending.lineage, journal: pending.journal), storedNumber ?? 0, snapshotIsEmpty)
    }

    /// Opening by building the snapshot's graph and replaying the journal's records onto it,
    /// one by one: for a snapshot that is migrated, recovered from, or damaged.
    ///
    /// - Returns: what opening gives, the store version of the snapshot, and whether it holds
    ///   no object.
    /// - Throws: the errors of ``readMigrating(schema:migrated:)`` and of
    ///   ``JournalReplay/open(journalAt:stored:storedLineage:storePath:schema:recover:reportingChanges:prefetched:)``.
    /// - Complexity: O(file size + journal size + changed objects × log n).
    private func openReplaying(
        journalPath: String, prefetch: JournalPrefetch?, schema: Schema
    ) throws -> (opened: JournalReplay.Opened, snapshotNumber: UInt64, snapshotIsEmpty: Bool) {
        var snapshot: (header: SnapshotHeaderV1, version: GraphVersion)?
        var migrated = false
        var recovery: PreviousSnapshotRecovery?
        do {
            snapshot = try readMigrating(schema: schema, migrated: &migrated)
        } catch let error as GraphStoreError where options.recoverFromPreviousSnapshot && error.isDamage(of: target.url.path) {
            // Only damage of the snapshot itself: a damaged or foreign journal met while
            // migrating is the journal's, and the snapshot must not be replaced for it.
            let prepared = try recoveryFromPreviousSnapshot(after: error, schema: schema, journalPath: journalPath)
            snapshot = prepared.snapshot
            recovery = prepared
        }
        let replayed = try JournalReplay.open(
            journalAt: journalPath, stored: snapshot?.version, storedLineage: snapshot?.header.lineage.flatMap(UUID.init(uuidString:)),
            storePath: recovery?.previousPath ?? target.url.path, schema: schema, recover: options.recoverFromPreviousSnapshot,
            reportingChanges: false,
            // A migration rewrites the journal: then it is read again.
            prefetched: migrated ? nil : prefetch)
        // Only once the journal replayed onto the previous snapshot is it put back in place of
        // the damaged file: a recovery that fails leaves every file as it was.
        try recovery?.complete()
        return (replayed, snapshot?.version.number ?? 0, snapshot?.version.tables.allSatisfy(\.isEmpty) ?? true)
    }

    // MARK: - Reading

    /// The snapshot in the app's model version: read as is when its header names that
    /// version, migrated when it names an older one (`migrated` is then set).
    ///
    /// - Throws: as ``read(_:schema:limit:modelVersion:)``,
    ///   ``GraphStoreError/newerModelVersion(path:found:supported:)``,
    ///   ``GraphStoreError/unknownModelVersion(path:found:expected:)``, and the errors of
    ///   ``SnapshotStoreMigration/migrate(_:raw:from:schema:format:compression:modelVersion:limit:)``.
    private func readMigrating(schema: Schema, migrated: inout Bool) throws -> (header: SnapshotHeaderV1, version: GraphVersion)? {
        let url = target.url
        do {
            return try Self.read(url, schema: schema, limit: options.maxDecompressedBytes, modelVersion: target.modelVersion)
        } catch let found as StoredModelVersion {
            switch schema.model.compare(found: found.found, option: options.modelVersion) {
            case .same:
                return try Self.read(url, schema: schema, limit: options.maxDecompressedBytes)
            case .newer(let stored, let app):
                throw GraphStoreError.newerModelVersion(path: url.path, found: stored, supported: app)
            case .unknown(let expected):
                throw GraphStoreError.unknownModelVersion(path: url.path, found: found.found, expected: expected)
            case .older(let stored, _):
                let raw: Data?
                do { raw = try FileReader.readFile(at: url) } catch { throw GraphStoreError(error, path: url.path) }
                guard let raw else { throw GraphStoreError.fileOperationFailed(path: url.path, operation: "open", reason: "the file vanished while opening") }
                // The migration rewrites the journal beside the file too.
                migrated = true
                return try SnapshotStoreMigration.migrate(
                    url, raw: raw, from: stored, schema: schema, format: target.format, compression: target.compression,
                    modelVersion: target.modelVersion, limit: options.maxDecompressedBytes)
            }
        }
    }

    /// The graph in the snapshot at `url`, or `nil` when there is no file.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` and the other reading
    ///   errors of ``SnapshotCodec/decode(_:schema:path:)``,
    ///   ``GraphStoreError/decompressedSizeLimitExceeded(path:limit:)``,
    ///   ``GraphStoreError/fileOperationFailed(path:operation:reason:)``.
    /// - Complexity: O(file size).
    ///   ``StoredModelVersion`` when `modelVersion` is given and the header names another.
    ///   ``GraphStoreError/codingFailed(path:entity:id:reason:)`` for a stored field whose
    ///   values the app's types would lose (see ``UnkeptFields``).
    static func read(_ url: URL, schema: Schema, limit: Int, modelVersion: String? = nil) throws -> (header: SnapshotHeaderV1, version: GraphVersion)? {
        guard let decoded = try readObjects(url, schema: schema, limit: limit, modelVersion: modelVersion) else { return nil }
        return (decoded.header, try SnapshotCodec.build(decoded.objects, number: decoded.header.storeVersion, schema: schema, path: url.path))
    }

    /// As ``read(_:schema:limit:modelVersion:)``, without building the graph: the header and
    /// the objects per entity index, in stored order, not yet checked as a graph.
    ///
    /// - Throws: as ``read(_:schema:limit:modelVersion:)``, except for the graph's checks.
    /// - Complexity: O(file size).
    static func readObjects(_ url: URL, schema: Schema, limit: Int, modelVersion: String? = nil) throws -> (header: SnapshotHeaderV1, objects: [[any Entity]])? {
        guard let document = try readDocument(url, limit: limit) else { return nil }
        // The last reference goes in, so the document is freed before the graph is built.
        let decoded = try SnapshotCodec.decodeObjects(consume document, schema: schema, path: url.path, modelVersion: modelVersion, survey: true, limit: limit)
        if !decoded.unkept.isEmpty {
            // Rare: a field the types did not write back. Read the objects generically to see
            // whether the types read it at all, from the document read again (the file is
            // locked, so it is the same).
            guard let document = try readDocument(url, limit: limit) else {
                throw GraphStoreError.fileOperationFailed(path: url.path, operation: "open", reason: "the file vanished while opening")
            }
            // In the JSON conventions the check's round trips decode: a property list's URLs
            // and decimals are dictionaries until they are shaped so (without it, every check
            // of an entity holding one failed, and a renamed field went unnoticed).
            let generic = try GenericSnapshot.decode(document, compression: .none, path: url.path, limit: limit)
            let stored = MigratingStore(conventional: generic.withURLsAndDecimalsInJSONShape().entities)
            if let lost = UnkeptFields.lost(decoded.unkept, stored: stored, schema: schema) {
                throw GraphStoreError.codingFailed(
                    path: url.path, entity: lost.entity, id: stored[lost.entity][lost.index]["id"].map(ModelMigrator.idText),
                    reason: UnkeptFields.reason(lost) + ". The file was left untouched")
            }
        }
        return (decoded.header, decoded.objects)
    }

    /// Whether the file at `url` reads as a sound snapshot without the app's types: its bytes,
    /// header, counts and ids (``GenericSnapshot/decode(_:compression:path:limit:)``).
    ///
    /// - Complexity: O(file size).
    static func readsGenerically(_ url: URL, limit: Int) -> Bool {
        guard let document = try? readDocument(url, limit: limit) else { return false }
        return (try? GenericSnapshot.decode(document, compression: .none, path: url.path, limit: limit)) != nil
    }

    /// The uncompressed document at `url` (gzip is detected by its magic), or `nil` when
    /// there is no file.
    static func readDocument(_ url: URL, limit: Int) throws -> Data? {
        // A file larger than any gzip of `limit` bytes (deflate adds at most about 0.03 % to
        // data it cannot compress, plus headers) holds more than `limit`: refused before it is
        // read into memory.
        let bound = limit > Int.max / 2 ? Int.max : limit + limit / 512 + 4_096
        if let size = FileStatus.size(atPath: url.path), size > bound {
            throw GraphStoreError.decompressedSizeLimitExceeded(path: url.path, limit: limit)
        }
        let raw: Data?
        do {
            raw = try FileReader.readFile(at: url)
        } catch {
            throw GraphStoreError(error, path: url.path)
        }
        guard let raw else { return nil }
        return try document(fromRaw: raw, path: url.path, limit: limit)
    }

    /// The uncompressed document in the file bytes `raw` (gzip is detected by its magic).
    static func document(fromRaw raw: Data, path: String, limit: Int) throws -> Data {
        let url = URL(fileURLWithPath: path)
        guard Gzip.isGzip(raw) else {
            guard raw.count <= limit else { throw GraphStoreError.decompressedSizeLimitExceeded(path: url.path, limit: limit) }
            return raw
        }
        do {
            return try Gzip.decompress(raw, maxOutputBytes: limit)
        } catch {
            throw GraphStoreError(error, path: url.path)
        }
    }

    /// The previous snapshot to open in place of the damaged file, read and checked against
    /// the journal; nothing is written yet (see ``PreviousSnapshotRecovery``).
    ///
    /// - Throws: `damage` when recovery cannot open the previous snapshot, and the errors of
    ///   ``PreviousSnapshotRecovery/prepare(from:target:schema:limit:journalPath:)``.
    private func recoveryFromPreviousSnapshot(
        after damage: GraphStoreError, schema: Schema, journalPath: String
    ) throws -> PreviousSnapshotRecovery {
        // The app's types refusing a file that reads soundly without them (an enum case, a
        // field or an entity of another release of the app) is a model mismatch, not damage:
        // rolling back to the previous snapshot would drop the saves of the release that wrote
        // it. Refused, with the file left as it is.
        if case .codingFailed = damage, Self.readsGenerically(target.url, limit: options.maxDecompressedBytes) { throw damage }
        // So is a file that reads soundly whose objects break a unique constraint or hold a
        // reference the app's model declares and the release that wrote it did not, or that a
        // type's own `init(from:)` refuses (a validation of that release's values).
        if case .damagedFile(_, nil, let reason) = damage, SnapshotCodec.isModelRefusal(reason),
           Self.readsGenerically(target.url, limit: options.maxDecompressedBytes) {
            throw damage
        }
        return try PreviousSnapshotRecovery.prepare(
            from: damage, target: target, schema: schema, limit: options.maxDecompressedBytes, journalPath: journalPath)
    }
}

extension GraphStoreError {
    /// Whether this error says the content of the file at `path` is bad: not I/O or locking,
    /// and not another file met on the way, such as the journal. A file of a newer format
    /// version is not damaged: it is refused, never replaced by recovery. Neither is one larger
    /// than the decompression limit: a store that grew past it is refused with that limit
    /// named, never rolled back to its previous snapshot.
    func isDamage(of path: String) -> Bool {
        switch self {
        case .damagedFile(let damaged, _, _): damaged == path
        case .codingFailed(let damaged, _, _, _): damaged == nil || damaged == path
        default: false
        }
    }
}
