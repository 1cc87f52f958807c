import Foundation
import GRDB
import GraphStore

/// The entities of a Core Data store, read from `Z_PRIMARYKEY` and `Z_METADATA`, and what each
/// of its tables holds.
///
/// `Z_PRIMARYKEY(Z_ENT, Z_NAME, Z_SUPER, Z_MAX)` has a row per entity: its number, name, parent
/// number (0 for a root) and last primary key. A root entity's rows, and its sub-entities',
/// are in the table `Z` + the root's upper-cased name, told apart by `Z_ENT`. `Z_METADATA`'s
/// property list maps every entity name, in its original case, to a version hash
/// (`NSStoreModelVersionHashes`).
struct CoreDataModel {
    struct Entity {
        /// `Z_ENT`.
        let number: Int64
        /// The Core Data name, its case restored from the metadata when `Z_PRIMARYKEY` lost it.
        let name: String
        /// The name in the snapshot.
        var snapshotName: String
        /// `Z_SUPER`, or `nil` for a root entity.
        let parent: Int64?
        /// The entity, its parent, … up to the root.
        var lineage: [Int64] = []
        /// The table of the root entity, as the database spells it.
        var table: String = ""
    }

    /// The entities that have a table, by number.
    var entities: [Int64: Entity] = [:]
    /// Entities without a `Z…` table (Core Data's own), by name.
    var skippedEntities: [String] = []
    /// `Z_METADATA.Z_UUID`.
    var storeUUID: String?
    /// Why each table that is no entity table is skipped; entity and join tables are not in it.
    var skippedTables: [String: SkippedTable.Reason] = [:]

    static let metadataTables: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]
    /// Core Data's persistent-history tables, whose entities are not always in `Z_PRIMARYKEY`.
    static let historyTables: Set<String> = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]

    /// The entities of the store in `db`, named as `options` says.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` for a database without
    ///   `Z_PRIMARYKEY`, or whose `Z_PRIMARYKEY` or `Z_METADATA` cannot be read;
    ///   ``GraphStoreError/codingFailed(path:entity:id:reason:)`` when ``CoreDataImportOptions/entityNames``
    ///   gives two entities one name.
    static func read(_ db: Database, tables: [ForeignDatabase.Table], path: String, options: CoreDataImportOptions) throws -> CoreDataModel {
        var tableNames: [String: String] = [:]
        for table in tables { tableNames[table.name.uppercased()] = table.name }
        guard let primaryKeyTable = tableNames["Z_PRIMARYKEY"] else {
            let names = tables.map(\.name).prefix(10).joined(separator: ", ")
            throw GraphStoreError.damagedFile(
                path: path, offset: nil,
                reason: "it is a SQLite database but not a Core Data store: it has no Z_PRIMARYKEY table (its tables: \(names.isEmpty ? "none" : names))")
        }
        var model = CoreDataModel()
        let caseRestoredNames = try readMetadata(db, table: tableNames["Z_METADATA"], path: path, into: &model)
        try readEntities(db, table: primaryKeyTable, path: path, names: caseRestoredNames, into: &model)

        // Each entity's table is its root's; entities without one are Core Data's own.
        var internalTables = historyTables
        for number in model.entities.keys.sorted() {
            let entity = model.entities[number]!
            let lineage = try lineage(of: number, in: model.entities, path: path)
            let rootName = model.entities[lineage.last!]!.name.uppercased()
            if let table = tableNames["Z" + rootName] {
                model.entities[number]!.lineage = lineage
                model.entities[number]!.table = table
            } else {
                if tableNames["A" + rootName] != nil { internalTables.insert("A" + rootName) }
                model.skippedEntities.append(entity.name)
                model.entities[number] = nil
            }
        }
        model.skippedEntities.sort()
        try model.applyEntityNames(options, path: path)

        let entityTables = Set(model.entities.values.map { $0.table.uppercased() })
        for table in tables where !entityTables.contains(table.name.uppercased()) {
            let upper = table.name.uppercased()
            if metadataTables.contains(upper) {
                model.skippedTables[table.name] = .coreDataMetadata
            } else if internalTables.contains(upper) || upper.hasPrefix("ANSCK") {
                model.skippedTables[table.name] = .coreDataInternal
            } else {
                model.skippedTables[table.name] = .notInModel
            }
        }
        for (table, reason) in ForeignDatabase.internalTables(tables, in: db) { model.skippedTables[table] = reason }
        return model
    }

    /// The entity an option key names: a Core Data or snapshot name, in any case.
    func entity(named key: String) -> Entity? {
        let lowered = key.lowercased()
        return entities.values.first { $0.name.lowercased() == lowered } ?? entities.values.first { $0.snapshotName.lowercased() == lowered }
    }

    // MARK: - Private

    /// Reads `Z_METADATA`'s UUID and the entity names of its version hashes, upper-cased name →
    /// original name.
    private static func readMetadata(_ db: Database, table: String?, path: String, into model: inout CoreDataModel) throws -> [String: String] {
        guard let table else { return [:] }
        let columns = Set(try db.columns(in: table).map { $0.name.uppercased() })
        guard columns.contains("Z_PLIST") else {
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "its Core Data metadata table \(table) has no Z_PLIST column")
        }
        let uuidColumn = columns.contains("Z_UUID") ? "Z_UUID" : "NULL"
        guard let row = try Row.fetchOne(db, sql: "SELECT \(uuidColumn), Z_PLIST FROM \(table.quotedDatabaseIdentifier) LIMIT 1") else { return [:] }
        model.storeUUID = row.text(at: 0)
        guard let plist = row.blob(at: 1) else { return [:] }
        let dictionary: [String: Any]
        do {
            guard let decoded = try PropertyListSerialization.propertyList(from: plist, options: [], format: nil) as? [String: Any] else {
                throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "\(table).Z_PLIST is a property list but not a dictionary")
            }
            dictionary = decoded
        } catch let error as GraphStoreError {
            throw error
        } catch {
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "\(table).Z_PLIST is not a readable property list (\(error))")
        }
        if model.storeUUID == nil { model.storeUUID = dictionary["NSStoreUUID"] as? String }
        let hashes = dictionary["NSStoreModelVersionHashes"] as? [String: Any] ?? [:]
        var names: [String: String] = [:]
        for name in hashes.keys { names[name.uppercased()] = name }
        return names
    }

    private static func readEntities(_ db: Database, table: String, path: String, names: [String: String], into model: inout CoreDataModel) throws {
        let columns = Set(try db.columns(in: table).map { $0.name.uppercased() })
        for column in ["Z_ENT", "Z_NAME", "Z_SUPER"] where !columns.contains(column) {
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "its Core Data table \(table) has no \(column) column")
        }
        for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER FROM \(table.quotedDatabaseIdentifier) ORDER BY Z_ENT") {
            let numberValue: DatabaseValue = row[0]
            let nameValue: DatabaseValue = row[1]
            guard case .int64(let number) = numberValue.storage, case .string(let storedName) = nameValue.storage, !storedName.isEmpty else {
                throw GraphStoreError.damagedFile(
                    path: path, offset: nil, reason: "\(table) has a row with Z_ENT \(numberValue.importText) and Z_NAME \(nameValue.importText), not an entity number and name")
            }
            let parentValue: DatabaseValue = row[2]
            let parent: Int64? = if case .int64(let parent) = parentValue.storage, parent != 0 { parent } else { nil }
            // The metadata's version hashes name every entity in the model's case; they restore
            // a case Z_NAME lost.
            let name = names[storedName.uppercased()] ?? storedName
            guard model.entities[number] == nil else {
                throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "\(table) lists entity number \(number) twice")
            }
            model.entities[number] = Entity(number: number, name: name, snapshotName: name, parent: parent)
        }
    }

    /// The numbers from `number` up to its root.
    private static func lineage(of number: Int64, in entities: [Int64: Entity], path: String) throws -> [Int64] {
        var lineage = [number]
        while let parent = entities[lineage.last!]!.parent {
            guard entities[parent] != nil else {
                throw GraphStoreError.damagedFile(
                    path: path, offset: nil, reason: "Z_PRIMARYKEY gives entity \(entities[number]!.name) the parent number \(parent), which it does not list")
            }
            guard !lineage.contains(parent) else {
                throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "Z_PRIMARYKEY makes entity \(entities[number]!.name) its own ancestor")
            }
            lineage.append(parent)
        }
        return lineage
    }

    private mutating func applyEntityNames(_ options: CoreDataImportOptions, path: String) throws {
        let renames = Dictionary(options.entityNames.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        var taken: [String: String] = [:]
        for number in entities.keys.sorted() {
            let entity = entities[number]!
            let name = renames[entity.name.lowercased()] ?? entity.name
            if let other = taken.updateValue(entity.name, forKey: name) {
                throw GraphStoreError.codingFailed(
                    path: path, entity: name, id: nil,
                    reason: "the Core Data entities \(other) and \(entity.name) would both be named \(name) in the snapshot; give one another name in entityNames")
            }
            entities[number]!.snapshotName = name
        }
    }
}
