/// What ``CoreDataImporter/snapshot(from:options:progress:)`` imported and skipped.
///
/// ```swift
/// let (_, report) = try CoreDataImporter.snapshot(from: storeURL)
/// for entity in report.entities { print(entity.name, entity.objects, entity.relationships) }
/// for table in report.skippedTables { print(table) }   // "Z_MODELCACHE: it is Core Data's metadata"
/// report.warnings.forEach { print("warning:", $0) }
/// ```
public struct CoreDataImportReport: Sendable, Hashable {
    /// The entities imported, by snapshot name, with their sub-entities as entities of their own.
    public var entities: [ImportedEntity]
    /// The tables that hold no entity and no relationship of the model, by name, with the
    /// reason: Core Data's metadata and own entities (persistent history, CloudKit), SQLite's
    /// tables, and tables the model does not know.
    public var skippedTables: [SkippedTable]
    /// Entities `Z_PRIMARYKEY` lists that have no `Z…` table: Core Data's own, such as the
    /// persistent history's `CHANGE`, `TRANSACTION` and `TRANSACTIONSTRING`, whose `A…` tables
    /// are in ``skippedTables``.
    public var skippedEntities: [String]
    /// The store's UUID, from `Z_METADATA`.
    public var storeUUID: String?
    /// Things worth a look that did not stop the import: option entries that matched no entity
    /// or column, references to objects that do not exist (left out, so that the snapshot opens,
    /// and the first of each field named), to-one targets that could not be found.
    public var warnings: [String]
    /// The model the names and types came from: ``CoreDataImportOptions/model``, or else the
    /// store's own model cache (its ``CoreDataModelDescription/origin`` is `.modelCache`);
    /// `nil` when the import had neither and named fields after the columns.
    public var model: CoreDataModelDescription?

    /// A report with the given parts; the importer makes these.
    public init(entities: [ImportedEntity] = [], skippedTables: [SkippedTable] = [], skippedEntities: [String] = [], storeUUID: String? = nil, warnings: [String] = []) {
        self.entities = entities
        self.skippedTables = skippedTables
        self.skippedEntities = skippedEntities
        self.storeUUID = storeUUID
        self.warnings = warnings
    }

    /// The entity named `name` in the snapshot, if it was imported.
    public func entity(_ name: String) -> ImportedEntity? {
        entities.first { $0.name == name }
    }
}
