import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A Core Data–shaped store becomes a snapshot: entities and sub-entities, ids, values, dates to
/// the bit, relationships, names, skipped tables, and the file left as it was.
@Suite struct ImportCoreDataTests {
    typealias Kit = ImportTestKit

    /// Imports a fresh standard store and checks it was not changed.
    private func importStore(
        numbers: Kit.EntityNumbers = .standard, options: CoreDataImportOptions = CoreDataImportOptions(),
        upperCaseNames: Bool = false
    ) throws -> (GenericSnapshot, CoreDataImportReport) {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Notes.sqlite")
        try Kit.makeCoreDataStore(at: url, numbers: numbers, upperCaseNames: upperCaseNames)
        return try Kit.expectUnchanged(url) { try CoreDataImporter.snapshot(from: url, options: options) }
    }

    // MARK: - Entities

    @Test func everyEntityBecomesOneWithItsOwnRows() throws {
        let (snapshot, report) = try importStore()
        #expect(snapshot.entities.map(\.name) == ["Comment", "Folder", "Item", "Note", "Photo", "Reminder", "SyncSession", "Tag"])
        #expect(snapshot.header.counts == ["Comment": 3, "Folder": 3, "Item": 1, "Note": 2, "Photo": 2, "Reminder": 0, "SyncSession": 2, "Tag": 3])
        #expect(report.entities.map(\.name) == snapshot.entities.map(\.name))
        #expect(report.entities.map(\.objects) == snapshot.entities.map(\.objects.count))
        #expect(snapshot.header.modelVersion == "1")
        #expect(snapshot.header.storeVersion == 0)

        let note = try #require(report.entity("Note"))
        #expect(note.coreDataName == "Note")
        #expect(note.entityNumber == 7)
        #expect(note.parent == "Item")
        #expect(note.table == "ZITEM")
        #expect(note.idColumn == "Z_PK")
        #expect(report.entity("Item")?.parent == nil)
        #expect(report.entity("Photo")?.parent == "Item")
        #expect(report.storeUUID == Kit.storeUUID)
        #expect(report.warnings.isEmpty, "\(report.warnings)")
    }

    @Test func subEntitiesShareTheRootTableAndKeepTheirOwnColumns() throws {
        let (snapshot, _) = try importStore()
        let dates = Kit.Dates.self
        #expect(snapshot.objects(of: "Item") == [.object(["id": .integer(4), "title": .string("Plain item")])])
        #expect(snapshot.objects(of: "Note") == [
            .object([
                "id": .integer(1), "title": .string("Groceries"), "text": .string("milk, eggs"), "isarchived": .integer(0),
                "folder": .integer(1), "createdat": .double(dates.groceriesCreated), "modifiedat": .double(Double(dates.groceriesModified)),
                "tags": .array([.integer(1), .integer(2)]),
            ]),
            .object([
                "id": .integer(3), "title": .string("Plan"), "text": .string("ship it"), "isarchived": .integer(1),
                "folder": .integer(2), "createdat": .double(dates.planCreated), "tags": .array([.integer(2)]),
            ]),
        ])
        #expect(snapshot.objects(of: "Photo") == [
            .object([
                "id": .integer(2), "title": .string("Sunset"), "width": .double(1920.5), "createdat": .double(dates.sunsetCreated),
                "imagedata": .data(Kit.sunsetImage),
            ]),
            .object(["id": .integer(5), "title": .string("Empty photo"), "imagedata": .data(Data())]),
        ])
    }

    @Test func plainEntitiesKeepTheirValuesAndDropBookkeeping() throws {
        let (snapshot, _) = try importStore()
        #expect(snapshot.objects(of: "Folder") == [
            .object(["id": .integer(1), "sortindex": .integer(0), "createdat": .double(Kit.Dates.inboxCreated), "name": .string("Inbox")]),
            .object(["id": .integer(2), "sortindex": .integer(1), "parent": .integer(1), "createdat": .double(600_000_000), "name": .string("Work")]),
            .object(["id": .integer(3), "sortindex": .integer(2), "parent": .integer(1), "name": .string("Ünïcödé 🎉")]),
        ])
        #expect(snapshot.objects(of: "Tag").map { $0["name"] } == [.string("swift"), .string("linux"), .string("unused")])
        #expect(snapshot.objects(of: "Reminder").isEmpty)
        for (_, objects) in snapshot.entities {
            for object in objects {
                guard case .object(let fields) = object else { Issue.record("not an object: \(object)"); continue }
                #expect(fields.keys.allSatisfy { !$0.hasPrefix("_") && $0 != "ent" && $0 != "opt" && $0 != "pk" }, "\(fields.keys.sorted())")
            }
        }
    }

    @Test func dateColumnsComeOutAsTheStoredSecondsToTheBit() throws {
        let (snapshot, _) = try importStore()
        let dates = Kit.Dates.self
        let expected: [(String, SnapshotValue, String, Double)] = [
            ("Folder", .integer(1), "createdat", dates.inboxCreated),
            ("Folder", .integer(2), "createdat", Double(dates.workCreated)),
            ("Note", .integer(1), "createdat", dates.groceriesCreated),
            ("Note", .integer(1), "modifiedat", Double(dates.groceriesModified)),
            ("Note", .integer(3), "createdat", dates.planCreated),
            ("Photo", .integer(2), "createdat", dates.sunsetCreated),
            ("Comment", .integer(1), "postedat", dates.commentPosted),
            ("SyncSession", .string(Kit.sessionIDs[0].uuidString), "startedat", dates.sessionStarted),
        ]
        for (entity, id, field, seconds) in expected {
            guard case .double(let value)? = try Kit.object(snapshot, entity, id: id)[field] else {
                Issue.record("\(entity) \(id) \(field) is not a double")
                continue
            }
            #expect(value.bitPattern == seconds.bitPattern, "\(entity).\(field): \(value) is not \(seconds)")
        }
        #expect(snapshot.header.fieldTypes == [
            "Comment": ["postedat": "date"],
            "Folder": ["createdat": "date"],
            "Note": ["createdat": "date", "modifiedat": "date"],
            "Photo": ["createdat": "date", "imagedata": "data"],
            "SyncSession": ["startedat": "date", "token": "data"],
        ])
    }

    // MARK: - Relationships

    @Test func toOneColumnsHoldTheTargetsID() throws {
        let (snapshot, report) = try importStore()
        #expect(try Kit.object(snapshot, "Note", id: .integer(1))["folder"] == .integer(1))
        #expect(try Kit.object(snapshot, "Note", id: .integer(3))["folder"] == .integer(2))
        #expect(report.entity("Note")?.relationships["folder"] == .init(kind: .toOne, target: "Folder", source: "ZFOLDER"))
        // Indexed, but named like no entity: an integer attribute holding the same Z_PK.
        #expect(try Kit.object(snapshot, "Folder", id: .integer(2))["parent"] == .integer(1))
        #expect(report.entity("Folder")?.relationships.isEmpty == true)
    }

    @Test func aToOneToAnEntityWithSubEntitiesNamesTheTargetEntity() throws {
        for numbers in [Kit.EntityNumbers.standard, .shuffled] {
            let (snapshot, report) = try importStore(numbers: numbers)
            let onNote = try Kit.object(snapshot, "Comment", id: .integer(1))
            #expect(onNote["item"] == .integer(1))
            #expect(onNote["itemEntity"] == .string("Note"))
            let onPhoto = try Kit.object(snapshot, "Comment", id: .integer(2))
            #expect(onPhoto["item"] == .integer(2))
            #expect(onPhoto["itemEntity"] == .string("Photo"))
            #expect(try Kit.object(snapshot, "Comment", id: .integer(3)) == ["id": .integer(3), "body": .string("orphan")])
            #expect(report.entity("Comment")?.relationships["item"] == .init(kind: .toOne, target: "Item", source: "ZITEM", entityColumn: numbers.itemEntityColumn))
        }
    }

    @Test func manyToManyJoinTablesGiveArraysOnTheOwningSide() throws {
        for numbers in [Kit.EntityNumbers.standard, .shuffled] {
            let (snapshot, report) = try importStore(numbers: numbers)
            #expect(try Kit.object(snapshot, "Note", id: .integer(1))["tags"] == .array([.integer(1), .integer(2)]))
            #expect(try Kit.object(snapshot, "Note", id: .integer(3))["tags"] == .array([.integer(2)]))
            #expect(snapshot.objects(of: "Tag").allSatisfy { $0["notes"] == nil && $0["tags"] == nil })
            #expect(snapshot.objects(of: "Photo").allSatisfy { $0["tags"] == nil })
            #expect(report.entity("Note")?.relationships["tags"] == .init(kind: .toMany, target: "Tag", source: numbers.joinTable))
            #expect(report.entity("Note")?.fields["ZTAGS"] == "tags")
            #expect(!report.skippedTables.map(\.name).contains(numbers.joinTable))
        }
    }

    /// A join row or a to-one column naming a row that is not in the store (a store Core Data
    /// left half-written, or one edited by hand) would give a snapshot the app refuses to open
    /// ("its folder references Folder 77, which is not in the file"): such references are left
    /// out and named in the warnings, with `Z_PK` ids as with ids of their own.
    @Test func referencesToRowsThatDoNotExistAreLeftOutAndNamed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Notes.sqlite")
        let n = Kit.EntityNumbers.standard
        try Kit.makeCoreDataStore(at: url)
        try Kit.execute("INSERT INTO \(n.joinTable) VALUES (1, 99)", on: url)
        try Kit.execute("UPDATE ZITEM SET ZFOLDER = 77 WHERE Z_PK = 3", on: url)

        for options in [CoreDataImportOptions(), CoreDataImportOptions(idColumns: ["Tag": "ZNAME", "Folder": "ZNAME"])] {
            let byName = !options.idColumns.isEmpty
            let (snapshot, report) = try Kit.expectUnchanged(url) { try CoreDataImporter.snapshot(from: url, options: options) }
            let note1 = try Kit.object(snapshot, "Note", id: .integer(1))
            #expect(note1["tags"] == .array(byName ? [.string("swift"), .string("linux")] : [.integer(1), .integer(2)]))
            #expect(note1["folder"] == (byName ? .string("Inbox") : .integer(1)))
            let note3 = try Kit.object(snapshot, "Note", id: .integer(3))
            #expect(note3["folder"] == nil, "a reference to Folder 77 was kept: \(note3)")
            #expect(note3["tags"] == .array(byName ? [.string("linux")] : [.integer(2)]))
            #expect(report.warnings.contains {
                $0.hasPrefix("Note.folder: 1 reference(s) to objects that do not exist were left out") && $0.contains("Z_PK 3") && $0.contains("Z_PK 77 of ZFOLDER")
            }, "\(report.warnings)")
            #expect(report.warnings.contains {
                $0.hasPrefix("Note.tags: 1 reference(s) to objects that do not exist were left out") && $0.contains("Z_PK 1") && $0.contains("Z_PK 99 of ZTAG")
            }, "\(report.warnings)")
        }
    }

    @Test func theSameModelWithOtherEntityNumbersGivesTheSameSnapshot() throws {
        let (standard, _) = try importStore(numbers: .standard)
        let (shuffled, report) = try importStore(numbers: .shuffled)
        #expect(standard.entities.map(\.name) == shuffled.entities.map(\.name))
        for (name, objects) in standard.entities {
            #expect(shuffled.objects(of: name) == objects, "\(name)")
        }
        #expect(standard.header.fieldTypes == shuffled.header.fieldTypes)
        #expect(report.entity("Note")?.entityNumber == Kit.EntityNumbers.shuffled.note)
    }

    @Test func anEmptyEntityTableGivesAnEmptyEntity() throws {
        let (snapshot, report) = try importStore()
        #expect(snapshot.entities.contains { $0.name == "Reminder" && $0.objects.isEmpty })
        #expect(report.entity("Reminder")?.objects == 0)
        #expect(report.entity("Reminder")?.relationships["note"] == .init(kind: .toOne, target: "Note", source: "ZNOTE"))
    }

    // MARK: - UUIDs and ids

    @Test func swiftDataUUIDBlobsBecomeTheIDAndReferencesFollow() throws {
        let (snapshot, report) = try importStore()
        let sessions = snapshot.objects(of: "SyncSession")
        #expect(sessions.map { $0["id"] } == Kit.sessionIDs.map { .string($0.uuidString) })
        #expect(sessions.allSatisfy { $0["token"] == .data(Kit.sessionToken) }, "a 16-byte BLOB not named like an id stays data")
        #expect(report.entity("SyncSession")?.idColumn == "ZID")
        #expect(try Kit.object(snapshot, "Comment", id: .integer(1))["syncsession"] == .string(Kit.sessionIDs[0].uuidString))
        #expect(report.entity("Comment")?.relationships["syncsession"]?.target == "SyncSession")
    }

    @Test func uuidDecodingAndTheIDColumnAreTheCallersChoice() throws {
        var options = CoreDataImportOptions()
        options.decodesUUIDBlobs = false
        options.idColumns = ["SyncSession": "Z_PK"]
        options.attributeNames = ["SyncSession": ["ZID": "uuid"]]
        options.valueConversions = ["SyncSession": ["ZTOKEN": .uuid]]
        let (snapshot, report) = try importStore(options: options)
        let first = try Kit.object(snapshot, "SyncSession", id: .integer(1))
        #expect(first["uuid"] == .data(withUnsafeBytes(of: Kit.sessionIDs[0].uuid) { Data($0) }))
        #expect(first["token"] == .string(UUID(uuid: Kit.sessionToken.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }).uuidString))
        #expect(try Kit.object(snapshot, "Comment", id: .integer(1))["syncsession"] == .integer(1))
        #expect(report.entity("SyncSession")?.idColumn == "Z_PK")
        #expect(snapshot.header.fieldTypes?["SyncSession"] == ["startedat": "date", "uuid": "data"])
    }

    @Test func anIDColumnWithDuplicatesOrNullsIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Notes.sqlite")
        try Kit.makeCoreDataStore(at: url)

        let duplicate = try Kit.expectRefused(url) { _ = try CoreDataImporter.snapshot(from: url, options: .init(idColumns: ["Folder": "ZPARENT"])) }
        guard case .codingFailed(let path, let entity, _, let reason) = duplicate else { throw Unexpected(duplicate) }
        #expect(path == url.path)
        #expect(entity == "Folder")
        #expect(reason.contains("NULL") || reason.contains("same id"), "\(reason)")

        let clash = try Kit.expectRefused(url) { _ = try CoreDataImporter.snapshot(from: url, options: .init(idColumns: ["SyncSession": "Z_PK"])) }
        guard case .codingFailed(_, "SyncSession", nil, let clashReason) = clash else { throw Unexpected(clash) }
        #expect(clashReason.contains("ZID") && clashReason.contains("idColumns"), "\(clashReason)")

        let byName = try CoreDataImporter.snapshot(from: url, options: .init(idColumns: ["Tag": "ZNAME"])).0
        #expect(byName.objects(of: "Tag").map { $0["id"] } == [.string("swift"), .string("linux"), .string("unused")])
        #expect(try Kit.object(byName, "Note", id: .integer(1))["tags"] == .array([.string("swift"), .string("linux")]))
    }

    // MARK: - Names

    @Test func namesComeFromTheMappingAndApplyToSubEntities() throws {
        var options = CoreDataImportOptions()
        options.entityNames = ["Note": "TextNote"]
        options.attributeNames = [
            "Item": ["ZCREATEDAT": "createdAt", "ZTITLE": "title"],
            "TextNote": ["zisarchived": "isArchived", "ZFOLDER": "folderID", "ZTAGS": "tagIDs", "ZMODIFIEDAT": "modifiedAt"],
            "Photo": ["ZIMAGEDATA": "imageData"],
            "Comment": ["ZITEM": "itemID"],
            "Nope": ["ZX": "x"],
        ]
        options.valueConversions = ["Note": ["ZISARCHIVED": .bool]]
        let (snapshot, report) = try importStore(options: options)

        #expect(snapshot.entities.map(\.name).contains("TextNote"))
        #expect(!snapshot.entities.map(\.name).contains("Note"))
        #expect(try Kit.object(snapshot, "TextNote", id: .integer(3)) == [
            "id": .integer(3), "title": .string("Plan"), "text": .string("ship it"), "isArchived": .bool(true),
            "folderID": .integer(2), "createdAt": .double(Kit.Dates.planCreated), "tagIDs": .array([.integer(2)]),
        ])
        #expect(try Kit.object(snapshot, "Photo", id: .integer(2))["imageData"] == .data(Kit.sunsetImage))
        #expect(try Kit.object(snapshot, "Photo", id: .integer(2))["createdAt"] == .double(Kit.Dates.sunsetCreated))
        let comment = try Kit.object(snapshot, "Comment", id: .integer(1))
        #expect(comment["itemID"] == .integer(1))
        #expect(comment["itemIDEntity"] == .string("TextNote"))
        #expect(snapshot.header.fieldTypes?["TextNote"] == ["createdAt": "date", "modifiedAt": "date"])
        #expect(report.entity("TextNote")?.coreDataName == "Note")
        #expect(report.entity("TextNote")?.fields["ZISARCHIVED"] == "isArchived")
        #expect(report.entity("Reminder")?.relationships["note"]?.target == "TextNote")
        #expect(report.warnings == ["attributeNames names the entity Nope, which the store does not have"])
    }

    @Test func defaultNamesAreTheColumnsLowerCasedWithoutTheZ() throws {
        let (_, report) = try importStore()
        #expect(report.entity("Note")?.fields == [
            "Z_PK": "id", "ZISARCHIVED": "isarchived", "ZFOLDER": "folder", "ZCREATEDAT": "createdat", "ZMODIFIEDAT": "modifiedat",
            "ZTITLE": "title", "ZTEXT": "text", "ZTAGS": "tags",
        ])
        #expect(report.entity("Comment")?.fields[Kit.EntityNumbers.standard.itemEntityColumn] == "itemEntity")
    }

    @Test func entityNamesLostToUpperCaseAreRestoredFromTheMetadata() throws {
        let (snapshot, report) = try importStore(upperCaseNames: true)
        #expect(snapshot.entities.map(\.name) == ["Comment", "Folder", "Item", "Note", "Photo", "Reminder", "SyncSession", "Tag"])
        #expect(report.skippedEntities == ["CHANGE", "TRANSACTION", "TRANSACTIONSTRING"])
    }

    @Test func twoColumnsForOneFieldAreRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Notes.sqlite")
        try Kit.makeCoreDataStore(at: url)
        let options = CoreDataImportOptions(attributeNames: ["Folder": ["ZNAME": "title", "ZSORTINDEX": "title"]])
        let error = try Kit.expectRefused(url) { _ = try CoreDataImporter.snapshot(from: url, options: options) }
        guard case .codingFailed(_, "Folder", nil, let reason) = error else { throw Unexpected(error) }
        #expect(reason.contains("ZNAME") && reason.contains("ZSORTINDEX") && reason.contains("title"), "\(reason)")
    }

    @Test func relationshipsCanBeDeclaredOrDenied() throws {
        var options = CoreDataImportOptions()
        options.relationships = ["Folder": ["ZPARENT": "Folder"], "Note": ["ZFOLDER": ""]]
        options.idColumns = ["Folder": "ZNAME"]
        let (snapshot, report) = try importStore(options: options)
        // ZPARENT now refers to folders, whose ids are their names.
        #expect(try Kit.object(snapshot, "Folder", id: .string("Work"))["parent"] == .string("Inbox"))
        #expect(report.entity("Folder")?.relationships["parent"] == .init(kind: .toOne, target: "Folder", source: "ZPARENT"))
        // ZFOLDER declared a plain attribute: its Z_PK is not translated.
        #expect(try Kit.object(snapshot, "Note", id: .integer(1))["folder"] == .integer(1))
        #expect(report.entity("Note")?.relationships["folder"] == nil)
    }

    // MARK: - Skipped tables and progress

    @Test func bookkeepingAndHistoryTablesAreSkippedAndListed() throws {
        let (snapshot, report) = try importStore()
        #expect(report.skippedTables == [
            SkippedTable(name: "ACHANGE", reason: .coreDataInternal),
            SkippedTable(name: "ATRANSACTION", reason: .coreDataInternal),
            SkippedTable(name: "ATRANSACTIONSTRING", reason: .coreDataInternal),
            SkippedTable(name: "Z_METADATA", reason: .coreDataMetadata),
            SkippedTable(name: "Z_MODELCACHE", reason: .coreDataMetadata),
            SkippedTable(name: "Z_PRIMARYKEY", reason: .coreDataMetadata),
        ])
        #expect(report.skippedEntities == ["CHANGE", "TRANSACTION", "TRANSACTIONSTRING"])
        #expect(!snapshot.entities.map(\.name).contains { $0.uppercased().contains("CHANGE") || $0.uppercased().contains("TRANSACTION") })
    }

    @Test func anUnknownTableIsSkippedAsNotInTheModel() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Notes.sqlite")
        try Kit.makeCoreDataStore(at: url)
        try Kit.execute("CREATE TABLE ZLEFTOVER (Z_PK INTEGER PRIMARY KEY, ZNAME VARCHAR); CREATE TABLE Z_99THINGS (Z_99A INTEGER, Z_98THINGS INTEGER)", on: url)
        let (_, report) = try CoreDataImporter.snapshot(from: url)
        #expect(report.skippedTables.contains(SkippedTable(name: "ZLEFTOVER", reason: .notInModel)))
        #expect(report.skippedTables.contains(SkippedTable(name: "Z_99THINGS", reason: .notInModel)))
    }

    @Test func progressReportsEveryEntityFromZeroToItsTotal() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Notes.sqlite")
        try Kit.makeCoreDataStore(at: url)
        try Kit.execute(
            "WITH RECURSIVE n(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM n WHERE i < 2599) INSERT INTO ZTAG SELECT i, 13, 1, 'tag ' || i FROM n",
            on: url)
        let log = ProgressLog()
        let (snapshot, _) = try CoreDataImporter.snapshot(from: url, progress: log.callback)

        let reports = log.all
        #expect(reports.filter { $0.entity == "Tag" }.map(\.done) == [0, 1_000, 2_000, 2_503])
        #expect(Set(reports.map(\.entity)) == Set(snapshot.entities.map(\.name)))
        for (name, objects) in snapshot.entities {
            let mine = reports.filter { $0.entity == name }
            #expect(mine.first == MigrationProgress(entity: name, done: 0, total: objects.count))
            #expect(mine.last == MigrationProgress(entity: name, done: objects.count, total: objects.count))
        }
        // One entity after another, never interleaved.
        let order = reports.map(\.entity).reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
        #expect(order == snapshot.entities.map(\.name))
    }

    @Test func aStoreWithCommitsStillInItsWriteAheadLogIsReadWhole() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Notes.sqlite")
        try Kit.makeCoreDataStore(at: url)
        var configuration = Configuration()
        configuration.journalMode = .wal
        let writer = try DatabaseQueue(path: url.path, configuration: configuration)
        try writer.write { db in
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            try db.execute(sql: "INSERT INTO ZTAG VALUES (4, 13, 1, 'fresh')")
        }
        let wal = try #require(SQLiteTestKit.contents(directory.file("Notes.sqlite-wal")))
        #expect(!wal.isEmpty)

        let (snapshot, _) = try CoreDataImporter.snapshot(from: url)
        #expect(snapshot.objects(of: "Tag").map { $0["name"] } == [.string("swift"), .string("linux"), .string("unused"), .string("fresh")])
        try writer.close()
    }

    struct Unexpected: Error, CustomStringConvertible {
        let error: GraphStoreError
        init(_ error: GraphStoreError) { self.error = error }
        var description: String { "unexpected error: \(error)" }
    }
}
