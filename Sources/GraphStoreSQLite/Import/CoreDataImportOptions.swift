/// Choices for ``CoreDataImporter/snapshot(from:options:progress:)``: names, relationships, ids
/// and value conversions the SQLite file cannot tell.
///
/// With a model (``model``, or the store's own model cache, see ``usesModelCache``), names and
/// types come from it. Without one, since Core Data stores names upper-cased (`ZCREATEDAT`), a
/// field is named by its column, lower-cased and without the `Z` (`createdat`); give the names
/// your Swift types use (with ``usesModelCache`` `false` when the store has a cache):
///
/// ```swift
/// var options = CoreDataImportOptions(usesModelCache: false)
/// options.attributeNames = [
///     "Item": ["ZCREATEDAT": "createdAt"],                  // Item and its sub-entities
///     "Note": ["ZISARCHIVED": "isArchived", "ZFOLDER": "folderID", "ZTAGS": "tagIDs"],
/// ]
/// options.valueConversions = ["Note": ["ZISARCHIVED": .bool]]
/// options.relationships = ["Folder": ["ZPARENT": "Folder"]]
/// let (snapshot, report) = try CoreDataImporter.snapshot(from: storeURL, options: options)
/// ```
///
/// **Keys.** Every per-entity dictionary is keyed by entity name, either the Core Data name
/// (`Note`, as `Z_PRIMARYKEY` and the metadata name it) or its name in the snapshot after
/// ``entityNames``; then by column name as SQLite has it (`ZCREATEDAT`). A many-to-many
/// relationship has no column; it is keyed by `Z` and its upper-cased name (`ZTAGS`), as if it
/// were one, because its join table's name (`Z_5TAGS`) changes from store to store. Names
/// match in any case. An entry given for an entity also applies to its sub-entities (which
/// share its table), unless they have their own entry for the column. Entries that match no
/// entity or column are listed in ``CoreDataImportReport/warnings``.
public struct CoreDataImportOptions: Sendable {
    /// Core Data entity name → entity name in the snapshot. Default: the Core Data name.
    public var entityNames: [String: String]
    /// Entity → column → field name. Default: the model's name for the attribute or
    /// relationship, with a ``model``; else the column name lower-cased without its leading
    /// `Z` (`ZCREATEDAT` → `createdat`, `ZFOLDER` → `folder`, the many-to-many `ZTAGS` → `tags`).
    /// With a model, an entry renames the model's field: for example an `id` attribute whose
    /// values repeat, kept as `importedID` while ``idColumns`` takes the ids from `Z_PK`
    /// (`graphstore migrate … --id-column Person=Z_PK --attribute-name Person.ZID=importedID`).
    public var attributeNames: [String: [String: String]]
    /// Entity → column → target entity: declares the column a to-one relationship to that
    /// entity, or, with an empty string, a plain attribute. Needed only where the automatic
    /// detection (see ``CoreDataImporter``) is wrong, which matters only when the target's ids
    /// are not `Z_PK` (see ``idColumns``): then the field holds the target's id, not its `Z_PK`.
    public var relationships: [String: [String: String]]
    /// Entity → column → how to convert its values, overriding the automatic choice (dates for
    /// `TIMESTAMP` columns, UUIDs for id-like 16-byte BLOB columns, the stored value otherwise).
    public var valueConversions: [String: [String: ValueConversion]]
    /// Entity → the column whose values become the objects' `id`s, or `"Z_PK"`. Default: the
    /// column whose field is named `id` (such as SwiftData's `id: UUID`, column `ZID`) when
    /// the entity has one, `Z_PK` otherwise. References to the entity (to-one fields and
    /// to-many arrays) then hold that value too. The column must give every row an id of its
    /// own as the app's type sees it (no NULL, no value twice, no two values that are one id
    /// to that type, all of one kind; see ``CoreDataImporter``), or the import is refused;
    /// `"Z_PK"` always does.
    public var idColumns: [String: String]
    /// Whether a BLOB column whose field name is `id`, `uuid` or `identifier`, or ends in `ID`
    /// or `UUID` (any case), and whose every value is 16 bytes, gives UUID strings
    /// (`"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"`, as Swift encodes a `UUID`): SwiftData keeps a
    /// `UUID` property that way. Default `true`. ``valueConversions`` overrides it per column.
    public var decodesUUIDBlobs: Bool
    /// The model version written into the snapshot's header. Default `"1"`.
    public var modelVersion: String
    /// The app's model (see ``CoreDataModelDescription/read(from:)``). With it, entities,
    /// fields and relationships are named as the model spells them, values take the model's
    /// types (Booleans, dates, UUIDs), a NULL in a non-optional attribute takes its default,
    /// ordered to-many relationships become arrays in their order, and a store that does not
    /// match the model is refused. Then ``entityNames``, ``idColumns`` and ``attributeNames``
    /// still apply; the other per-column options do not. Default `nil`: the store's model
    /// cache, if it has one.
    public var model: CoreDataModelDescription?
    /// Whether, without ``model``, the store's own model cache (`Z_MODELCACHE`, which Core Data
    /// keeps in every store it writes) serves as the model. Default `true`; set it to `false`
    /// to read the columns yourself with the per-column options.
    public var usesModelCache: Bool

    /// Options with the documented defaults: the model cache as the model, no renaming and no
    /// conversions.
    public init(
        entityNames: [String: String] = [:], attributeNames: [String: [String: String]] = [:],
        relationships: [String: [String: String]] = [:], valueConversions: [String: [String: ValueConversion]] = [:],
        idColumns: [String: String] = [:], decodesUUIDBlobs: Bool = true, modelVersion: String = "1",
        model: CoreDataModelDescription? = nil, usesModelCache: Bool = true
    ) {
        self.model = model
        self.usesModelCache = usesModelCache
        self.entityNames = entityNames
        self.attributeNames = attributeNames
        self.relationships = relationships
        self.valueConversions = valueConversions
        self.idColumns = idColumns
        self.decodesUUIDBlobs = decodesUUIDBlobs
        self.modelVersion = modelVersion
    }
}
