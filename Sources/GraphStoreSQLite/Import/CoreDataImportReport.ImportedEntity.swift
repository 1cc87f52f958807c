extension CoreDataImportReport {
    /// One Core Data entity that became a snapshot entity.
    public struct ImportedEntity: Sendable, Hashable {
        /// The name in the snapshot.
        public var name: String
        /// The Core Data entity name (with its case restored from the store's metadata).
        public var coreDataName: String
        /// The entity number, `Z_ENT`, which differs from store to store.
        public var entityNumber: Int64
        /// The snapshot name of the parent entity, for a sub-entity.
        public var parent: String?
        /// The table its rows are in: its root entity's.
        public var table: String
        /// The number of objects (rows of this entity, not of its sub-entities).
        public var objects: Int
        /// The column the ids come from: `Z_PK`, or an attribute's (see
        /// ``CoreDataImportOptions/idColumns``).
        public var idColumn: String
        /// Column → field name, for every column imported for this entity: the id's column
        /// (`Z_PK` → `id`), attributes, to-one relationships and their entity-number columns
        /// (`Z3ITEM` → `itemEntity`). A many-to-many relationship is listed as `Z` and its
        /// upper-cased name (`ZTAGS` → `tags`). In a table an entity shares with its
        /// sub-entities, its columns are those its rows hold values in.
        public var fields: [String: String]
        /// The relationships found, by field name.
        public var relationships: [String: Relationship]

        /// An imported entity with the given names, table and counts; the importer makes these.
        public init(name: String, coreDataName: String, entityNumber: Int64, parent: String?, table: String, objects: Int, idColumn: String, fields: [String: String], relationships: [String: Relationship]) {
            self.name = name
            self.coreDataName = coreDataName
            self.entityNumber = entityNumber
            self.parent = parent
            self.table = table
            self.objects = objects
            self.idColumn = idColumn
            self.fields = fields
            self.relationships = relationships
        }
    }
}
