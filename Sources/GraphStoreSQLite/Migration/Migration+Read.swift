import Foundation
import GraphStore

extension Migration {
    /// A store of any kind GraphStore reads, read as generic values.
    public struct ReadStore: Sendable {
        /// The store's values.
        public var snapshot: GenericSnapshot
        /// What the store was: detected, or as the caller said.
        public var kind: StoreKind
        /// What an import skipped or found worth a look, one line each.
        public var notes: [String]
        /// The Core Data import's report, for a Core Data or SwiftData store.
        public var coreDataReport: CoreDataImportReport?
    }

    /// Reads the store at `url`, whatever its kind: detected from its bytes and tables (see
    /// ``StoreKind/detect(at:)``) unless `kind` says.
    ///
    /// ```swift
    /// let model = try CoreDataModelDescription.read(from: modelURL)
    /// let read = try Migration.readStore(from: storeURL, model: model)
    /// try Migration.writeSnapshot(read.snapshot, to: snapshotURL, format: .json, compression: .gzip)
    /// ```
    ///
    /// - Parameters:
    ///   - model: The app's Core Data model, used for a Core Data or SwiftData store. Without
    ///     it, the store's own model cache (`Z_MODELCACHE`) serves; without either, such a
    ///     store's names are its columns' lower-cased, and a note says so.
    /// - Throws: what ``StoreKind/detect(at:)``, `GenericSnapshot.read(from:)`,
    ///   ``readSQLite(from:progress:)``, ``CoreDataImporter/snapshot(from:options:progress:)``
    ///   and ``PlainSQLiteImporter/snapshot(from:options:progress:)`` throw. Nothing is written.
    /// - Complexity: O(size of the store).
    public static func readStore(
        from url: URL, kind: StoreKind? = nil, model: CoreDataModelDescription? = nil,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws -> ReadStore {
        try readStore(from: url, kind: kind, coreDataOptions: CoreDataImportOptions(model: model), progress: progress)
    }

    /// Reads the store at `url`, whatever its kind, as ``readStore(from:kind:model:progress:)``
    /// does, with `coreDataOptions` for a Core Data or SwiftData store: its
    /// ``CoreDataImportOptions/model``, and the names, ids and conversions it sets.
    ///
    /// - Throws: As ``readStore(from:kind:model:progress:)``. Nothing is written.
    /// - Complexity: O(size of the store).
    public static func readStore(
        from url: URL, kind: StoreKind? = nil, coreDataOptions: CoreDataImportOptions,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws -> ReadStore {
        let kind = try kind ?? StoreKind.detect(at: url)
        switch kind {
        case .snapshot:
            return ReadStore(snapshot: try GenericSnapshot.read(from: url), kind: kind, notes: [])
        case .graphStoreSQLite:
            return ReadStore(snapshot: try readSQLite(from: url, progress: progress), kind: kind, notes: [])
        case .coreData, .swiftData:
            let (snapshot, report) = try CoreDataImporter.snapshot(from: url, options: coreDataOptions, progress: progress)
            var notes = report.skippedTables.map { "skipped table \($0)" } + report.skippedEntities.map { "skipped entity \($0)" } + report.warnings
            if report.model?.origin == .modelCache {
                notes.append("names and types from the store's own model cache (Z_MODELCACHE)")
            } else if report.model == nil {
                notes.append(
                    "warning: names are the columns' lower-cased and values as SQLite keeps them; pass the app's model (--model App.xcdatamodeld, or CoreDataImportOptions.model) to keep its names, types and ordered relationships")
            }
            return ReadStore(snapshot: snapshot, kind: kind, notes: notes, coreDataReport: report)
        case .plainSQLite:
            let (snapshot, report) = try PlainSQLiteImporter.snapshot(from: url, progress: progress)
            return ReadStore(snapshot: snapshot, kind: kind, notes: report.skippedTables.map { "skipped table \($0)" })
        }
    }
}
