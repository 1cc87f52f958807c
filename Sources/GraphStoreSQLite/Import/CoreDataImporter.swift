import Foundation
import GraphStore

/// Reads a Core Data (or SwiftData) SQLite store into a ``GraphStore/GenericSnapshot``, without
/// Core Data: every entity becomes a snapshot entity, every object one with its `Z_PK` as its id.
///
/// ```swift
/// import GraphStoreSQLite
///
/// // Names and types from the store's own model cache, or from the app's model file:
/// let (snapshot, report) = try CoreDataImporter.snapshot(from: URL(fileURLWithPath: "Notes.sqlite"))
/// // let model = try CoreDataModelDescription.read(from: URL(fileURLWithPath: "Notes.xcdatamodeld"))
/// // let (snapshot, report) = try CoreDataImporter.snapshot(from: storeURL, options: CoreDataImportOptions(model: model))
/// report.warnings.forEach { print("warning:", $0) }
/// try snapshot.write(to: URL(fileURLWithPath: "notes.plist.gz"), format: .binaryPropertyList, compression: .gzip)
/// ```
///
/// **The model.** Names and types come from a model, the first of:
///
/// 1. ``CoreDataImportOptions/model``, the app's `.xcdatamodeld` read with
///    ``CoreDataModelDescription/read(from:)``;
/// 2. the store's own model cache: Core Data keeps the model it last wrote the store with in
///    the table `Z_MODELCACHE` (a raw-deflated `NSKeyedArchiver` archive of the
///    `NSManagedObjectModel`), read unless ``CoreDataImportOptions/usesModelCache`` is `false`.
///    ``CoreDataImportReport/model`` says which one was used.
///
/// With a model, entities, fields and relationships are named as the model spells them;
/// attributes take the model's types (Booleans become `true`/`false`, dates, UUIDs, and the
/// rest as stored); a NULL in a non-optional attribute takes its default; ordered to-many
/// relationships become arrays of ids in their order (`Z_FOK_…`), many-to-many ones arrays in
/// ascending `Z_PK` order; one-to-many ones appear on their to-one side (GraphStore declares a
/// relationship on the side that holds the reference); attributes that allow external storage
/// are read from the store's support folder (`.<name>_SUPPORT/_EXTERNAL_DATA`) when it is
/// beside the store. A store that does not match the model (an entity or a column missing) is
/// refused, naming the entity and the field. ``CoreDataImportOptions/entityNames``,
/// ``CoreDataImportOptions/idColumns`` and ``CoreDataImportOptions/attributeNames`` (which
/// renames the model's fields) still apply; the other per-column options do not.
///
/// **Without a model** (no option and no cache), fields are found from the schema and the
/// values:
///
/// - **Entities.** `Z_PRIMARYKEY` lists every entity: number (`Z_ENT`), name and parent. A
///   root entity's table is `Z` + its upper-cased name; its sub-entities' rows are in the same
///   table, told apart by `Z_ENT`. Each entity, sub-entities included, becomes a snapshot
///   entity with only its own rows (an `Item` root with `Note` and `Photo` sub-entities gives
///   three entities; `Item` holds the rows that are neither). Names keep their case: `Z_NAME`
///   and the metadata's `NSStoreModelVersionHashes` have it (the metadata wins).
///   ``CoreDataImportOptions/entityNames`` renames. (With a model, the same.)
/// - **Ids.** An object's `id` is its `Z_PK`, an integer unique in its table. When the entity
///   has an attribute whose field is named `id` (SwiftData's `var id: UUID`), that attribute is
///   the id instead, or the column ``CoreDataImportOptions/idColumns`` names; references to the
///   entity then hold that id too. `Z_ENT` and `Z_OPT` (the optimistic-locking version) are
///   dropped, as are Core Data's other `Z_…` columns. (With a model, the same.) Such ids must
///   be ids to the app: an entity whose id column is NULL in a row (an optional attribute), or
///   whose rows hold one id twice, is refused, naming the entity, the column and the rows'
///   `Z_PK`s; so are two values SQLite stores differently that are one id to the app's type —
///   `INTEGER 5` and `REAL 5.0`; a UUID as a BLOB and as text, in any case; strings equal under
///   Swift's comparison, which is by canonical equivalence (`"caf\u{E9}"` and
///   `"cafe\u{301}"`); two doubles that are one `Float`, for a `Float` attribute — and ids of
///   kinds no one Swift type reads (`INTEGER 5` in a row, `TEXT '5'` in another). The app
///   would otherwise take two objects, and the references to them, for one, or not open the
///   snapshot. No id is made up or changed: ``CoreDataImportOptions/idColumns`` set to `Z_PK`
///   imports such an entity with its `Z_PK`s as ids.
/// - **Field names.** Core Data upper-cases column names, so a field is named by its column
///   lower-cased without the `Z` (`ZCREATEDAT` → `createdat`) unless
///   ``CoreDataImportOptions/attributeNames`` names it.
/// - **Attributes** by declared type: `TIMESTAMP` columns hold dates as seconds since
///   2001-01-01 (REAL, or INTEGER when whole, negative before 2001): they become doubles, equal
///   to the stored value to the bit (the snapshot's JSON date encoding), and the header's
///   ``GraphStore/SnapshotHeaderV1/fieldTypes`` marks them `"date"`, so the snapshot written as
///   a property list holds native dates. `BLOB` columns (binary data, transformable values)
///   become data, marked `"data"`; except that a 16-byte BLOB column with an id-like name
///   (see ``CoreDataImportOptions/decodesUUIDBlobs``) becomes UUID strings. INTEGER, FLOAT
///   and VARCHAR columns give integers, doubles and strings. Booleans are INTEGER 0/1 like any
///   integer and stay numbers unless ``CoreDataImportOptions/valueConversions`` says `.bool`.
///   Decimal attributes (known by the model, or without one by the column type `DECIMAL`) give
///   numbers marked `"decimal"`, and URI attributes (known only by the model) strings marked
///   `"url"`: a property list written from the snapshot holds them as Swift's `Decimal` and
///   `URL` encode them, so the app's types (as `graphstore generate` writes them) open it.
///   Externally stored values are kept as Core Data's reference. NULL leaves the key out.
/// - **To-one relationships** are integer columns holding the target's `Z_PK`; the field (named
///   like any column: `ZFOLDER` → `folder`) holds the target's id. A column is taken for one
///   when ``CoreDataImportOptions/relationships`` says so; when a column `Z<digits><NAME>` beside
///   it holds the target's entity number, which Core Data adds when the target has
///   sub-entities; or when it is an INTEGER column that leads an index (Core Data indexes
///   every to-one column, `ZNOTE_ZFOLDER_INDEX`) and its name is an entity's (`ZFOLDER` and
///   `Folder`). The entity-number column becomes the field `<field>Entity`, holding the target
///   entity's snapshot name (`"itemEntity": "Photo"`). A relationship the rules miss still
///   comes out right, as an integer attribute holding the target's `Z_PK`, unless the target's
///   ids are not `Z_PK`. A NULL is no reference; a to-one value that is not an integer (text,
///   a REAL, a BLOB) is no `Z_PK`, and is refused, naming the row and the column, rather than
///   kept as a reference to no object.
/// - **To-many relationships.** A one-to-many relationship is stored only as its inverse
///   to-one column, so it appears there. A many-to-many one is a join table `Z_<n><NAME>`
///   (`Z_5TAGS`) with a column of the owner's and one of the targets' `Z_PK`s (`Z_5NOTES`,
///   `Z_13TAGS`); the numbers are entity numbers, read from the names. The owner's objects, and
///   its sub-entities', get the field `<name>` (`tags`) holding an array of the targets' ids, in
///   ascending `Z_PK` order (empty when there are none). Without a model the order of ordered
///   relationships is not known and not kept. A join row with a NULL links nothing and is
///   skipped; one whose key is not an integer is refused, naming it, rather than left out (and
///   so is a target row of an ordered one-to-many relationship whose inverse column is).
///
/// **Skipped tables**, listed in ``CoreDataImportReport/skippedTables``: `Z_PRIMARYKEY`,
/// `Z_METADATA`, `Z_MODELCACHE`; the persistent-history and CloudKit tables of Core Data's own
/// entities (`ACHANGE`, `ATRANSACTION`, `ATRANSACTIONSTRING`, `ANSCK…`); SQLite's tables; and
/// any table the model does not use.
public enum CoreDataImporter {
    /// Reads the Core Data SQLite store at `url` into a snapshot, following the rules above.
    ///
    /// ```swift
    /// let (snapshot, report) = try CoreDataImporter.snapshot(from: storeURL) { progress in
    ///     print("\(progress.entity) \(progress.done)/\(progress.total)")
    /// }
    /// print(report.entities.map { "\($0.name): \($0.objects)" })
    /// ```
    ///
    /// The store is read in one read transaction through a read-only connection, so the
    /// snapshot is one consistent state and the file is never changed. A store in
    /// write-ahead-log mode (Core Data's default) whose `-wal` file is missing or empty is opened
    /// `immutable`, so no `-wal` or `-shm` file appears beside it; with a non-empty `-wal` (copy
    /// it along with the store), SQLite reads it and may create or update the `-shm` file.
    ///
    /// - Parameters:
    ///   - url: The store file, such as `Notes.sqlite`.
    ///   - options: Names, relationships, ids and conversions the file cannot tell.
    ///   - progress: Called as each entity is read (see ``MigrationProgress``), with the
    ///     entity's snapshot name: synchronously, one call at a time, before this method returns.
    /// - Returns: The snapshot (header with model version, import time as `savedAt`, store
    ///   version 0, counts and field types) and what was imported, skipped and worth a look.
    /// - Throws: ``GraphStore/GraphStoreError/damagedFile(path:offset:reason:)`` for an empty
    ///   file, a file that is not a SQLite database or that SQLite finds truncated or malformed,
    ///   a SQLite database without `Z_PRIMARYKEY` (not a Core Data store), an unreadable
    ///   `Z_METADATA` property list, a model cache that does not inflate or is no keyed archive
    ///   of a Core Data model (naming the store; pass a model to read the store without it), an
    ///   entity table without `Z_PK` or `Z_ENT`, or a row whose `Z_ENT` is no entity of its
    ///   table;
    ///   ``GraphStore/GraphStoreError/codingFailed(path:entity:id:reason:)`` when two columns
    ///   would be one field, two entities one name, an id column holds NULL, two ids that are
    ///   one to the app, or ids of two kinds (naming the entity, the column and the rows'
    ///   `Z_PK`s), a to-one column, a join row or an ordered relationship's inverse column holds
    ///   a key that is not an integer `Z_PK` (naming the row and the column), a value the
    ///   model's type of its attribute or id does not hold (70000 in an Integer 16, 5.5 in an
    ///   Integer 64, text in a UUID or a Date, a BLOB in a String: naming the row, the
    ///   attribute, its column and type, and the value), or the store does
    ///   not match the model (naming the model file, or the store for its cache, and the entity
    ///   and field);
    ///   ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)`` for a missing
    ///   or unreadable file; ``GraphStore/GraphStoreError/storeLocked(path:)`` while another
    ///   connection holds the store locked. The file is left unchanged.
    /// - Complexity: O(rows + links + total size of the values), plus one pass per entity over
    ///   the table it shares with its sub-entities, plus O(size of the model cache) to inflate
    ///   and decode it; the snapshot is built in memory.
    public static func snapshot(
        from url: URL, options: CoreDataImportOptions = CoreDataImportOptions(),
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws -> (GenericSnapshot, CoreDataImportReport) {
        let database = try ForeignDatabase.open(url)
        defer { database.close() }
        return try database.read { db in
            var reader = CoreDataReader(db: db, path: database.path, options: options, progress: progress)
            return try reader.read()
        }
    }
}
