import Foundation
import GRDB
import GraphStore

/// Moves a store between a snapshot file and a SQLite file without the app's Swift types.
///
/// ```swift
/// import GraphStoreSQLite
///
/// // A snapshot file becomes a SQLite store that `.sqlite(url)` opens with the same objects…
/// let summary = try Migration.snapshotToSQLite(
///     from: URL(fileURLWithPath: "store.json.gz"), to: URL(fileURLWithPath: "store.sqlite")) { progress in
///     print(progress)                      // "Post: 1000/100000"
/// }
/// print(summary.objectsPerSecond)
///
/// // …and back to a snapshot that `.file(url)` opens.
/// try Migration.sqliteToSnapshot(
///     from: URL(fileURLWithPath: "store.sqlite"), to: URL(fileURLWithPath: "store.plist.gz"),
///     format: .binaryPropertyList, compression: .gzip)
/// ```
///
/// The SQLite file is the one the typed store writes: the same `graphstore_metadata`, a table
/// per entity with a column per top-level key (`id` first, then by name) and the same column
/// kinds and encodings (NaN, -0.0, unsigned integers above `Int64.max` and strings holding NUL
/// as BLOBs), recorded in `graphstore_columns`. Column kinds come from the snapshot header's
/// ``GraphStore/SnapshotHeaderV1/fieldTypes`` (`date`, `data`, `real`) and otherwise from the
/// values: only Booleans give `bool`, only integers `integer`, other numbers `real`, strings
/// `text`, arrays, objects and mixtures `json`; so does a number a double holds only rounded
/// (an `Int128` beyond 64 bits, a long `Decimal`), whose digits the column keeps as the typed
/// store keeps them (under a `real` or `date` field type, such a number is refused). Going back, the column kinds give the snapshot its
/// values: dates as seconds since 2001 in JSON and native dates in a property list, data as
/// Base64 in JSON and native in a property list; the header's `fieldTypes` records them.
///
/// The destination is written under a temporary name in its directory and renamed into place
/// when complete, so it is never half-written, and an existing destination is replaced only
/// with ``MigrationOptions/overwrite``. The temporary name holds the migrating process's id: a
/// migration to the same destination removes the temporary files of processes that no longer
/// exist (a migration killed while it wrote) once nothing has written them for a minute. The source is only read; a destination that is the
/// source's own file (through a link, or spelled another way) is refused. Once the new file is
/// in place, the replaced store's previous snapshot (`<file>.previous`) is removed when the new
/// file is a snapshot store, so that recovering it never opens the old one's; a snapshot
/// destination with no file but such a previous snapshot is refused without
/// ``MigrationOptions/overwrite``. A SQLite destination leaves a `<file>.previous` alone: a
/// SQLite store never reads one.
///
/// A `json` column holds URLs, decimals and nested dates and data as JSON does (strings and
/// numbers), where a property list holds dictionaries and native values. The SQLite file
/// records the snapshot header's field types in `graphstore_metadata` (the typed store records
/// those its objects hold; a migration, its source's), so a property list written from it holds
/// them as the app reads them, wherever the field types name them (as converting a JSON
/// snapshot to a property list does). A SQLite file that records none (written before they were
/// recorded) is not written as a property list while one of its `json` columns holds a value:
/// that is refused, naming the entity, the object and the field; JSON is exact from it.
///
/// Limits: a JSON snapshot without `real` field types (written before they were recorded) gives
/// a Double property whose values are all whole numbers an `integer` column; the typed store
/// reads it, and writes only whole numbers to it.
public enum Migration {
    /// Writes the snapshot file at `source` as a GraphStore SQLite file at `destination`.
    ///
    /// - Parameters:
    ///   - source: A snapshot file (JSON or binary property list, gzip or not).
    ///   - destination: The SQLite file to create, such as `store.sqlite`.
    ///   - options: Overwriting, model version, decompression bound.
    ///   - progress: Called on the calling thread as each entity's rows are written (see
    ///     ``MigrationProgress``).
    /// - Returns: What was migrated, and how fast.
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)`` when
    ///   the destination exists (without ``MigrationOptions/overwrite``), is the source's own
    ///   file, or cannot be written;
    ///   the errors of ``GraphStore/GenericSnapshot/read(from:maxDecompressedBytes:)`` for the
    ///   source; ``GraphStore/GraphStoreError/codingFailed(path:entity:id:reason:)`` for an
    ///   entity or value SQLite cannot hold as the typed store would (a reserved entity name, a
    ///   value that contradicts the header's field types, a duplicate id).
    /// - Complexity: O(objects × their size); the snapshot is read into memory.
    @discardableResult
    public static func snapshotToSQLite(
        from source: URL, to destination: URL, options: MigrationOptions = MigrationOptions(),
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws -> MigrationSummary {
        try migrating(from: source, to: destination, options: options, writesSnapshot: false) { file, started in
            let snapshot = try GenericSnapshot.read(from: source, maxDecompressedBytes: options.maxDecompressedBytes)
            return try writeSQLite(snapshot, to: file, options: options, progress: progress, started: started)
        }
    }

    /// Writes the GraphStore SQLite file at `source` as a snapshot file at `destination`.
    ///
    /// - Parameters:
    ///   - source: A SQLite file written by the SQLite store (or by ``snapshotToSQLite(from:to:options:progress:)``).
    ///   - destination: The snapshot file to create, such as `store.json.gz`.
    ///   - format: ``GraphStore/SnapshotFormat/json`` (default) or ``GraphStore/SnapshotFormat/binaryPropertyList``.
    ///   - compression: ``GraphStore/Compression/gzip`` (default) or ``GraphStore/Compression/none``.
    ///   - options: Overwriting, model version.
    ///   - progress: Called on the calling thread as each entity's rows are read.
    /// - Returns: What was migrated, and how fast.
    /// - Throws: the errors of ``readSQLite(from:progress:)`` for the source;
    ///   ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)`` when the
    ///   destination exists (without ``MigrationOptions/overwrite``), is the source's own file,
    ///   or cannot be written;
    ///   ``GraphStore/GraphStoreError/codingFailed(path:entity:id:reason:)`` for a property list
    ///   from a file that records no field types while a `json` column holds a value (naming the
    ///   entity, the object and the field; see ``Migration``).
    /// - Complexity: O(rows × their size); the graph is built in memory.
    @discardableResult
    public static func sqliteToSnapshot(
        from source: URL, to destination: URL, format: SnapshotFormat = .json, compression: Compression = .gzip,
        options: MigrationOptions = MigrationOptions(), progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws -> MigrationSummary {
        try migrating(from: source, to: destination, options: options, writesSnapshot: true) { file, started in
            let snapshot = try readSQLite(from: source, progress: progress)
            return try writeSnapshot(snapshot, to: file, format: format, compression: compression, options: options, started: started)
        }
    }

    /// Writes a snapshot held in memory (read from a file, or made by an importer) as a
    /// GraphStore SQLite file, as ``snapshotToSQLite(from:to:options:progress:)`` does.
    ///
    /// ```swift
    /// let (snapshot, _) = try PlainSQLiteImporter.snapshot(from: legacyURL)
    /// try Migration.writeSQLite(snapshot, to: URL(fileURLWithPath: "store.sqlite"))
    /// ```
    ///
    /// - Throws: as ``snapshotToSQLite(from:to:options:progress:)``, without the source's errors.
    /// - Complexity: O(objects × their size).
    @discardableResult
    public static func writeSQLite(
        _ snapshot: GenericSnapshot, to destination: URL, options: MigrationOptions = MigrationOptions(),
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws -> MigrationSummary {
        try migrating(to: destination, options: options, writesSnapshot: false) { file, started in
            try writeSQLite(snapshot, to: file, options: options, progress: progress, started: started)
        }
    }

    /// Writes a snapshot held in memory as a snapshot file, atomically and only over an existing
    /// file with ``MigrationOptions/overwrite``.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)``,
    ///   ``GraphStore/GraphStoreError/codingFailed(path:entity:id:reason:)``.
    /// - Complexity: O(objects) to encode, O(bytes) to compress and write.
    @discardableResult
    public static func writeSnapshot(
        _ snapshot: GenericSnapshot, to destination: URL, format: SnapshotFormat = .json, compression: Compression = .gzip,
        options: MigrationOptions = MigrationOptions()
    ) throws -> MigrationSummary {
        try migrating(to: destination, options: options, writesSnapshot: true) { file, started in
            try writeSnapshot(snapshot, to: file, format: format, compression: compression, options: options, started: started)
        }
    }

    /// Reads a GraphStore SQLite file as a snapshot: an entity per table the store made (sorted
    /// by name; a table `graphstore_columns` knows nothing of is not the store's, and skipped), an
    /// object per row (in table order), a key per non-NULL column; the header has the file's
    /// model and store versions, the time of reading as `savedAt`, and `fieldTypes` for its
    /// `date`, `blob`, `real` and `text` columns and, inside its `json` columns, those the file
    /// records (with their `fieldTypesVersion`). What `graphstore dump` prints.
    ///
    /// The file is opened read-only, in one read transaction, and never changed.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)`` for
    ///   a missing or unreadable file, and for a journal beside it that holds newer saves (see
    ///   ``GraphStore/UnreplayedSaves``); ``GraphStore/GraphStoreError/damagedFile(path:offset:reason:)``
    ///   for an empty file, one that is not SQLite, is truncated or malformed, or is a SQLite
    ///   database without GraphStore's metadata, or whose tables disagree with it;
    ///   ``GraphStore/GraphStoreError/unsupportedFormatVersion(path:found:supported:)``;
    ///   ``GraphStore/GraphStoreError/codingFailed(path:entity:id:reason:)`` for a value that
    ///   does not fit its column's kind; ``GraphStore/GraphStoreError/storeLocked(path:)`` while
    ///   a container has the store open.
    /// - Complexity: O(rows × their size).
    public static func readSQLite(from source: URL, progress: (@Sendable (MigrationProgress) -> Void)? = nil) throws -> GenericSnapshot {
        let database = try ForeignDatabase.open(source)
        defer { database.close() }
        return try database.read { db in
            let contents = try SQLiteStoreContents.read(db, path: database.path)
            let fieldTypes = contents.snapshotFieldTypes
            var entities: [(name: String, objects: [SnapshotValue])] = []
            var numbers = ExactNumbers()
            for table in contents.tables {
                var objects = try SQLiteStoreContents.objects(of: table, in: db, path: database.path, progress: progress, numbers: &numbers)
                // A `json` column's "NaN" reads as a double, as in a JSON snapshot; where the
                // recorded types say `String`, it was the string.
                if let types = fieldTypes[table.name], case let paths = SnapshotValue.stringPaths(of: types), !paths.isEmpty {
                    objects = objects.map { $0.withNonFiniteStringsRestored(at: paths) }
                }
                entities.append((table.name, objects))
            }
            var header = SnapshotHeaderV1(
                modelVersion: contents.metadata.modelVersion, savedAt: Date(), storeVersion: contents.metadata.storeVersion,
                counts: Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.objects.count) }),
                fieldTypes: fieldTypes.isEmpty ? nil : fieldTypes)
            header.fieldTypesVersion = contents.metadata.fieldTypesVersion
            if let saves = try UnreplayedSaves.find(forStoreAt: source, fileVersion: header.storeVersion, lineage: contents.metadata.lineage) {
                throw saves.error(reading: source.path)
            }
            // Its top-level dates and data are native values, as a property list's are; its
            // `json` columns hold URLs, decimals and nested values as JSON does, which a
            // property list written from it converts by the recorded field types.
            var snapshot = GenericSnapshot(header: header, entities: entities, format: .binaryPropertyList, compression: .none)
            snapshot.exactNumbers = numbers
            snapshot.urlsAndDecimalsInJSONShape = true
            // A file that records no field types (written before they were recorded) leaves a
            // property list to guess: writing one is refused while a `json` column holds a value.
            // (One that records a snapshot's is as good as that snapshot: an older one's types
            // name no URLs or decimals, and converting it to a property list directly is the same.)
            if contents.metadata.fieldTypes == nil { snapshot.unhintedJSONFields = contents.jsonColumns }
            return snapshot
        }
    }

    // MARK: - Package

    /// Refuses a migration from `source` to `destination` when they are one file under any
    /// name (a symbolic link, another hard link, another spelling of the path), before anything
    /// is read: see ``MigrationFile/checkDistinct(source:destination:operation:)``. The
    /// migrations here that are given both files check it themselves; a caller that reads the
    /// source and then writes what it read (as `graphstore` does) calls it first.
    ///
    /// - Parameter operation: What the caller calls the migration in its error.
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)``
    ///   naming `destination` and `source`.
    package static func checkDistinct(source: URL, destination: URL, operation: String = "migrate") throws {
        try MigrationFile.checkDistinct(source: source, destination: destination, operation: operation)
    }

    // MARK: - Internal

    /// Writes `snapshot` to the file's temporary name, then renames it into place.
    static func writeSnapshot(
        _ snapshot: GenericSnapshot, to file: MigrationFile, format: SnapshotFormat, compression: Compression,
        options: MigrationOptions, started: ContinuousClock.Instant
    ) throws -> MigrationSummary {
        var snapshot = snapshot
        if let modelVersion = options.modelVersion { snapshot.header.modelVersion = modelVersion }
        try file.build(beforeRename: options.beforeRename) { temporary in
            do {
                try snapshot.write(to: temporary, format: format, compression: compression)
            } catch let error as GraphStoreError {
                throw relocated(error, from: temporary, to: file.url)
            }
        }
        return summary(of: snapshot, file: file, started: started)
    }

    /// Builds the SQLite file under the file's temporary name, then renames it into place.
    static func writeSQLite(
        _ snapshot: GenericSnapshot, to file: MigrationFile, options: MigrationOptions,
        progress: (@Sendable (MigrationProgress) -> Void)?, started: ContinuousClock.Instant
    ) throws -> MigrationSummary {
        // A property list's URLs and decimals become the JSON the typed store keeps them as.
        let snapshot = snapshot.withURLsAndDecimalsInJSONShape()
        let tables = try SQLiteTablePlan.plans(for: snapshot, path: file.url.path)
        try file.build(beforeRename: options.beforeRename) { temporary in
            try SQLiteTablePlan.build(
                tables, snapshot: snapshot, at: temporary, destination: file.url,
                modelVersion: options.modelVersion ?? snapshot.header.modelVersion, progress: progress)
        }
        return summary(of: snapshot, file: file, started: started)
    }

    // MARK: - Private

    /// The frame of every migration: starts the clock, refuses a `source` that is
    /// `destination`'s own file, checks `destination` (see ``MigrationFile``) and runs `write`,
    /// which reads what it needs and writes it to the file; then, given a `source`, records it
    /// and its size in the summary.
    ///
    /// The summary's ``MigrationSummary/duration`` counts from before the destination is
    /// checked, so it covers reading the source too.
    private static func migrating(
        from source: URL? = nil, to destination: URL, options: MigrationOptions, writesSnapshot: Bool,
        _ write: (MigrationFile, ContinuousClock.Instant) throws -> MigrationSummary
    ) throws -> MigrationSummary {
        let started = ContinuousClock.now
        if let source { try MigrationFile.checkDistinct(source: source, destination: destination, operation: "migrate") }
        let file = try MigrationFile(
            destination: destination, overwrite: options.overwrite, writesSnapshot: writesSnapshot, source: source ?? options.source)
        var summary = try write(file, started)
        if let source {
            summary.source = source
            summary.bytesRead = MigrationFile.size(of: source.path)
        }
        return summary
    }

    private static func summary(of snapshot: GenericSnapshot, file: MigrationFile, started: ContinuousClock.Instant) -> MigrationSummary {
        MigrationSummary(
            source: nil, destination: file.url,
            entities: snapshot.entities.map { MigrationSummary.EntityCount(name: $0.name, objects: $0.objects.count) },
            bytesRead: 0, bytesWritten: MigrationFile.size(of: file.url.path), duration: ContinuousClock.now - started)
    }

    /// The error with the temporary file's path replaced by the destination's.
    private static func relocated(_ error: GraphStoreError, from temporary: URL, to destination: URL) -> GraphStoreError {
        switch error {
        case .fileOperationFailed(let path, let operation, let reason) where path == temporary.path:
            .fileOperationFailed(path: destination.path, operation: operation, reason: reason)
        case .codingFailed(let path, let entity, let id, let reason) where path == temporary.path:
            .codingFailed(path: destination.path, entity: entity, id: id, reason: reason)
        default:
            error
        }
    }
}
