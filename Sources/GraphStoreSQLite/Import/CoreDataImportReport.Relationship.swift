extension CoreDataImportReport {
    /// A relationship the importer found, held by the entity it is listed under.
    public struct Relationship: Sendable, Hashable {
        /// How the relationship is stored and what its field holds.
        public enum Kind: String, Sendable, Hashable {
            /// A column holding the target's `Z_PK`: the field holds the target's id.
            case toOne
            /// A join table: the field holds an array of the targets' ids.
            case toMany
        }

        /// To-one or to-many.
        public var kind: Kind
        /// The target entity's snapshot name, when known (a to-one relationship to an entity with
        /// sub-entities whose column matches no entity name and whose rows are all NULL has none).
        public var target: String?
        /// Where it is stored: the column (`ZFOLDER`) or the join table (`Z_5TAGS`).
        public var source: String
        /// For a to-one relationship to an entity with sub-entities, the column that holds the
        /// target's entity number (`Z3ITEM`, read into the field `<field>Entity` as the target
        /// entity's snapshot name).
        public var entityColumn: String?

        /// A relationship of `kind` to `target`, read from the column `source`; the importer makes these.
        public init(kind: Kind, target: String?, source: String, entityColumn: String? = nil) {
            self.kind = kind
            self.target = target
            self.source = source
            self.entityColumn = entityColumn
        }
    }
}
