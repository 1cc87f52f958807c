import Foundation
import GRDB
import GraphStore

/// The columns of one entity table: `Z_PK`, `Z_ENT`, and what every other column is.
struct CoreDataTable {
    let name: String
    let columns: [ColumnInfo]
    /// Column indexes of `Z_PK` and `Z_ENT`.
    let primaryKey: Int
    let entityNumber: Int
    /// Upper-cased names of the columns an index starts with.
    let indexed: Set<String>
    /// Upper-cased name of a to-one column → index of the column that holds its target's
    /// entity number (`ZAUTHOR` → `Z3AUTHOR`).
    let entityColumns: [String: Int]
    /// Upper-cased names of the BLOB columns whose every value is 16 bytes.
    let sixteenByteColumns: Set<String>

    /// Reads the table's columns and indexes.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` when it has no `Z_PK` or
    ///   `Z_ENT` column.
    init(_ name: String, db: Database, path: String) throws {
        self.name = name
        columns = try db.columns(in: name)
        let upper = columns.map { $0.name.uppercased() }
        guard let primaryKey = upper.firstIndex(of: "Z_PK"), let entityNumber = upper.firstIndex(of: "Z_ENT") else {
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "the Core Data entity table \(name) has no \(upper.contains("Z_PK") ? "Z_ENT" : "Z_PK") column")
        }
        self.primaryKey = primaryKey
        self.entityNumber = entityNumber
        indexed = Set(try db.indexes(on: name).compactMap { $0.columns.first?.uppercased() })
        var entityColumns: [String: Int] = [:]
        for (index, column) in upper.enumerated() {
            // `Z` + digits + the to-one column's name without its `Z`.
            guard column.hasPrefix("Z"), let rest = Self.afterDigits(column.dropFirst()), upper.contains("Z" + rest) else { continue }
            entityColumns["Z" + rest] = index
        }
        self.entityColumns = entityColumns
        // One pass over the table counts, for each BLOB column, its values and its 16-byte BLOBs.
        let blobs = columns.filter { $0.type.uppercased() == "BLOB" }
        var sixteen = Set<String>()
        if !blobs.isEmpty {
            let counts = blobs.map { column in
                let quoted = column.name.quotedDatabaseIdentifier
                return "count(\(quoted)), count(CASE WHEN typeof(\(quoted)) = 'blob' AND length(\(quoted)) = 16 THEN 1 END)"
            }
            if let row = try Row.fetchOne(db, sql: "SELECT \(counts.joined(separator: ", ")) FROM \(name.quotedDatabaseIdentifier)") {
                for (index, column) in blobs.enumerated() {
                    let all: Int = row[2 * index]
                    let sixteenBytes: Int = row[2 * index + 1]
                    if all > 0, sixteenBytes == all { sixteen.insert(column.name.uppercased()) }
                }
            }
        }
        sixteenByteColumns = sixteen
    }

    /// What follows one or more leading digits of `text`, when it starts with a digit and a
    /// letter follows them.
    static func afterDigits(_ text: Substring) -> String? {
        let rest = text.drop { $0.isASCII && $0.isNumber }
        guard rest.count < text.count, let first = rest.first, first.isLetter else { return nil }
        return String(rest)
    }
}

/// A many-to-many relationship's join table, `Z_<owner number><NAME>(Z_<n><INVERSE>, Z_<m><NAME>)`:
/// one row per link, the owner's `Z_PK` in one column and the target's in the other.
struct CoreDataJoinTable {
    let name: String
    /// The entity whose relationship `NAME` is, by number, and the column of its `Z_PK`s.
    let owner: Int64
    let ownerColumn: String
    /// The target entity, by number, and the column of its `Z_PK`s.
    let target: Int64
    let targetColumn: String
    /// The relationship's upper-cased name.
    let relationship: String
    /// The order key column (`Z_FOK_…`) of an ordered relationship, or `nil`.
    let orderColumn: String?

    /// The join table `name` describes, or `nil` when it is none of `model`'s.
    ///
    /// The table's number is the owner's entity number and its name the relationship's. Of the
    /// two columns, the one named `Z_<m>` + that name holds the targets (entity `m`), the other
    /// the owners. An ordered relationship's order key (`Z_FOK_…`) orders the targets. Every number is read from
    /// the names, never assumed.
    init?(_ name: String, columns: [String], model: CoreDataModel) {
        let upper = name.uppercased()
        guard upper.hasPrefix("Z_"), let relationship = CoreDataTable.afterDigits(upper.dropFirst(2)),
            let owner = Int64(upper.dropFirst(2).prefix { $0.isASCII && $0.isNumber }), model.entities[owner] != nil
        else { return nil }
        let linkColumns = columns.filter { !$0.uppercased().hasPrefix("Z_FOK_") }
        guard linkColumns.count == 2 else { return nil }
        let parsed = linkColumns.map { column -> (name: String, number: Int64?, relationship: String?) in
            let body = column.uppercased().dropFirst(2)
            guard column.uppercased().hasPrefix("Z_") else { return (column, nil, nil) }
            return (column, Int64(body.prefix { $0.isASCII && $0.isNumber }), CoreDataTable.afterDigits(body))
        }
        // A relationship that is its own inverse has both columns named after it, one with a
        // suffix: the exact name is the target's.
        guard let targetIndex = parsed.lastIndex(where: { $0.relationship == relationship }),
            let target = parsed[targetIndex].number, model.entities[target] != nil,
            parsed[1 - targetIndex].number != nil
        else { return nil }
        self.name = name
        self.owner = owner
        ownerColumn = parsed[1 - targetIndex].name
        self.target = target
        targetColumn = parsed[targetIndex].name
        self.relationship = relationship
        orderColumn = columns.first { $0.uppercased().hasPrefix("Z_FOK_") }
    }
}

/// How one entity's rows become objects.
struct CoreDataEntityPlan {
    /// What a column becomes.
    enum Role {
        case attribute(CoreDataImportOptions.ValueConversion)
        /// The target's `Z_PK`; `target` is the declared target entity, `entityColumn` the
        /// index of the column holding the target's entity number.
        case toOne(target: Int64?, entityColumn: Int?)
        /// A target's entity number, read as the entity's snapshot name.
        case entityNumber
    }

    struct Field {
        let column: Int
        var name: String
        let role: Role
        /// The model's attribute, when a model was given: its type, optionality and default.
        var attribute: CoreDataModelDescription.Attribute? = nil
    }

    /// An ordered one-to-many relationship: the targets hold the owner's `Z_PK` in
    /// `inverseColumn` and their position in `orderColumn` (`Z_FOK_<INVERSE>`).
    struct OrderedToMany {
        let name: String
        let targetTable: String
        let inverseColumn: String
        let orderColumn: String

        /// The key of its links.
        var key: String { targetTable + "." + inverseColumn }
    }

    struct ToMany {
        let join: CoreDataJoinTable
        var name: String
    }

    let entity: CoreDataModel.Entity
    let table: CoreDataTable
    var fields: [Field] = []
    /// The column the ids come from; `nil` for `Z_PK`.
    var idColumn: Int?
    var idConversion: CoreDataImportOptions.ValueConversion = .asStored
    /// The model's type of the id attribute (the app's id type), or `nil` for `Z_PK` or
    /// without a model.
    var idType: CoreDataModelDescription.AttributeType?
    var toMany: [ToMany] = []
    var orderedToMany: [OrderedToMany] = []
}
