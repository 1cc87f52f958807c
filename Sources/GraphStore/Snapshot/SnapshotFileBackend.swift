import Foundation
import Logging

/// The snapshot-file store: opens (and locks) the file, loads the graph, and hands every
/// commit to the coalescing ``SnapshotWriter``.
final class SnapshotFileBackend: StoreBackend {
    private let target: SnapshotTarget
    private let options: SnapshotOptions
    private let interval: Duration
    private let lock: StoreFileLock
    /// The coalescing writer; tests reach it to wait for idleness.
    let writer: SnapshotWriter

    init(url: URL, format: SnapshotFormat, compression: Compression, interval: Duration, options: SnapshotOptions, schema: Schema) throws {
        let url = url.standardizedFileURL
        target = SnapshotTarget(
            url: url, format: format, compression: compression, modelVersion: options.modelVersion,
            schema: schema, fileSystem: options.fileSystem)
        self.options = options
        self.interval = interval
        do {
            lock = try StoreFileLock(forStoreAt: url)
        } catch {
            throw GraphStoreError(error, path: url.path)
        }
        // A process killed while writing leaves its temporary file; the lock says it is gone.
        target.removeLeftovers()
        writer = SnapshotWriter(
            target: target, opened: GraphVersion(schema: schema), interval: interval,
            clock: options.clock, beforeWrite: options.beforeWrite)
    }

    // MARK: - StoreBackend

    /// Reads the snapshot: a missing file is an empty store; a damaged one throws, or, when
    /// ``SnapshotOptions/recoverFromPreviousSnapshot`` is set, falls back to the previous snapshot.
    func load(schema: Schema) throws -> GraphVersion? {
        let opened: GraphVersion?
        do {
            opened = try Self.read(target.url, schema: schema, limit: options.maxDecompressedBytes)
        } catch let error as GraphStoreError where options.recoverFromPreviousSnapshot && error.isDamage {
            opened = try recover(from: error, schema: schema)
        } catch {
            lock.unlock()
            throw error
        }
        if let opened { writer.reset(to: opened) }
        return opened
    }

    func didCommit(_ version: GraphVersion, change: GraphChange) {
        writer.didCommit(version)
    }

    func flush() async throws {
        try await writer.flush()
    }

    func close() async throws {
        defer { lock.unlock() }
        try await writer.close()
    }

    var status: StoreStatus {
        writer.status
    }

    func events() -> AsyncStream<StoreEvent> {
        writer.events()
    }

    // MARK: - Reading

    /// The graph in the snapshot at `url`, or `nil` when there is no file.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` and the other reading
    ///   errors of ``SnapshotCodec/decode(_:schema:path:)``,
    ///   ``GraphStoreError/decompressedSizeLimitExceeded(path:limit:)``,
    ///   ``GraphStoreError/fileOperationFailed(path:operation:reason:)``.
    /// - Complexity: O(file size).
    static func read(_ url: URL, schema: Schema, limit: Int) throws -> GraphVersion? {
        guard let document = try readDocument(url, limit: limit) else { return nil }
        return try SnapshotCodec.decode(document, schema: schema, path: url.path).1
    }

    /// The uncompressed document at `url` (gzip is detected by its magic), or `nil` when
    /// there is no file.
    static func readDocument(_ url: URL, limit: Int) throws -> Data? {
        let raw: Data?
        do {
            raw = try FileReader.readFile(at: url)
        } catch {
            throw GraphStoreError(error, path: url.path)
        }
        guard let raw else { return nil }
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

    private func recover(from damage: GraphStoreError, schema: Schema) throws -> GraphVersion? {
        let logger = Logger(label: "GraphStore.SnapshotFileBackend")
        let previous = target.previousURL
        let recovered: GraphVersion?
        do {
            recovered = try Self.read(previous, schema: schema, limit: options.maxDecompressedBytes)
        } catch {
            lock.unlock()
            throw damage
        }
        guard let recovered else {
            lock.unlock()
            throw damage
        }
        // Keep the damaged file for inspection, under a name no earlier recovery took; the next
        // write replaces it. Without that copy the damaged file stays where it is.
        let stamp = target.url.path + ".damaged-\(Int(Date().timeIntervalSince1970))"
        var aside = stamp
        var attempt = 1
        while FileManager.default.fileExists(atPath: aside) {
            attempt += 1
            aside = stamp + "-\(attempt)"
        }
        do {
            try FileManager.default.copyItem(atPath: target.url.path, toPath: aside)
        } catch {
            lock.unlock()
            throw damage
        }
        // The damaged file must not become the previous snapshot: put the good one back first.
        try? FileManager.default.removeItem(at: target.url)
        try? FileManager.default.copyItem(at: previous, to: target.url)
        logger.warning("Opened the previous snapshot because the current one is damaged", metadata: [
            "damaged": "\(damage)", "keptAs": "\(aside)",
        ])
        return recovered
    }
}

extension GraphStoreError {
    /// Whether this error says a file's content is bad (as opposed to I/O or locking). A file
    /// of a newer format version is not damaged: it is refused, never replaced by recovery.
    var isDamage: Bool {
        switch self {
        case .damagedFile, .codingFailed, .decompressedSizeLimitExceeded: true
        default: false
        }
    }
}
