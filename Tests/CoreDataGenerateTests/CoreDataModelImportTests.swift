import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// The app's model file gives the import its names, types, defaults, ordered relationships
/// and external data; the generated types open what it migrated.
@Suite struct CoreDataModelImportTests {
    private static func imported(_ directory: TemporaryDirectory) throws -> (GenericSnapshot, CoreDataImportReport, CoreDataModelDescription) {
        let model = try CoreDataModelDescription.read(from: try CoreDataModelTestKit.writeModel(in: directory.url))
        let store = try CoreDataModelTestKit.writeStore(in: directory.url)
        let (snapshot, report) = try CoreDataImporter.snapshot(from: store, options: CoreDataImportOptions(model: model))
        return (snapshot, report, model)
    }

    private static func object(_ snapshot: GenericSnapshot, _ entity: String, _ pk: Int64) throws -> [String: SnapshotValue] {
        guard case .object(let fields)? = snapshot.objects(of: entity).first(where: { $0["id"] == .integer(pk) }) else {
            throw GraphStoreError.codingFailed(path: nil, entity: entity, id: "\(pk)", reason: "missing")
        }
        return fields
    }

    @Test func theCurrentVersionIsReadWithEveryTypeAndRule() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try CoreDataModelDescription.read(from: try CoreDataModelTestKit.writeModel(in: directory.url))
        #expect(model.path.hasSuffix("Notes 2.xcdatamodel/contents"))
        #expect(model.entities.map(\.name) == ["Folder", "Item", "Note", "Tag"])
        #expect(Set(model.allAttributes(of: "Note").map(\.type)) == Set(CoreDataModelDescription.AttributeType.allCases))
        #expect(!model.allAttributes(of: "Note").contains { $0.name == "draft" })  // transient
        let folderNotes = try #require(model.entity("Folder")?.relationships.first)
        #expect(folderNotes.isOrdered && folderNotes.isToMany && folderNotes.deleteRule == .cascade && folderNotes.inverse == "folder")
        #expect(model.entity("Tag")?.uniqueConstraints == [["name"]])
    }

    @Test func valuesTakeTheModelsNamesAndTypes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (snapshot, report, _) = try Self.imported(directory)
        // Only the loose note's NULLs, one warning per field.
        #expect(report.warnings.count == 7 && report.warnings.allSatisfy { $0.hasPrefix("Note.") && $0.contains("took the model's default") }, "\(report.warnings)")
        let groceries = try Self.object(snapshot, "Note", 1)
        #expect(groceries["isArchived"] == .bool(true))
        #expect(groceries["createdAt"] == .double(700_000_000.5))
        #expect(groceries["rating"] == .integer(5) && groceries["views"] == .integer(.max))
        #expect(groceries["uuid"] == .string(CoreDataModelTestKit.noteUUID.uuidString))
        #expect(groceries["link"] == .string("https://example.com/a"))
        #expect(groceries["image"] == .data(CoreDataModelTestKit.inlineImage))
        #expect(groceries["payload"] == .data(Data([0xCA, 0xFE])))
        #expect(groceries["folder"] == .integer(1))
        #expect(groceries["tags"] == .array([.integer(1), .integer(2)]))
        #expect(groceries["draft"] == nil && groceries["body"] == .string("milk"))
        #expect(snapshot.header.fieldTypes?["Note"]?["createdAt"] == "date")
        // External storage: the file in the support folder beside the store.
        #expect(try Self.object(snapshot, "Note", 3)["image"] == .data(CoreDataModelTestKit.externalImage))
        // NULLs in non-optional attributes take the defaults; optional ones are left out.
        let loose = try Self.object(snapshot, "Note", 4)
        #expect(loose["isArchived"] == .bool(false) && loose["rating"] == .integer(3) && loose["score"] == .double(0))
        #expect(loose["body"] == nil && loose["folder"] == nil && loose["tags"] == .array([]))
        // The ordered to-many keeps Z_FOK_ order, not Z_PK order.
        #expect(try Self.object(snapshot, "Folder", 1)["notes"] == .array([.integer(3), .integer(1)]))
        #expect(try Self.object(snapshot, "Folder", 2)["notes"] == .array([]))
        // Sub-entities: the plain item has only Item's fields.
        let item = try Self.object(snapshot, "Item", 2)
        #expect(item["title"] == .string("Item") && item["body"] == nil && item["tags"] == nil)
        #expect(snapshot.objects(of: "Tag").count == 2)
    }

    @Test func aModelThatDoesNotMatchTheStoreIsRefusedNamingEntityAndField() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try CoreDataModelDescription.read(from: try CoreDataModelTestKit.writeModel(in: directory.url))
        let store = try CoreDataModelTestKit.writeStore(in: directory.url, dropColumn: true)
        let error = #expect(throws: GraphStoreError.self) { try CoreDataImporter.snapshot(from: store, options: CoreDataImportOptions(model: model)) }
        #expect(error?.description.contains("Note.body") == true && error?.description.contains("ZBODY") == true && error?.description.contains("contents") == true)

        let extra = CoreDataModelTestKit.contents.replacingOccurrences(
            of: "</model>", with: "<entity name=\"Archive\" syncable=\"YES\"><attribute name=\"name\" attributeType=\"String\"/></entity></model>")
        let extraModel = try CoreDataModelDescription.parse(Data(extra.utf8), path: "Extra.xcdatamodel/contents")
        let missing = #expect(throws: GraphStoreError.self) { try CoreDataImporter.snapshot(from: store, options: CoreDataImportOptions(model: extraModel)) }
        #expect(missing?.description.contains("Archive") == true)
    }

    /// A store holding a column the model does not declare (a model of another version, say)
    /// is migrated with a warning naming it: its values are not in the snapshot, and the
    /// import says so instead of dropping them unnoticed.
    @Test func aColumnTheModelDoesNotDeclareIsNamedInAWarning() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try CoreDataModelDescription.read(from: try CoreDataModelTestKit.writeModel(in: directory.url))
        let store = try CoreDataModelTestKit.writeStore(in: directory.url)
        let result = try await runPython(
            "import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\ndb.execute('ALTER TABLE ZITEM ADD COLUMN ZMOOD VARCHAR')\ndb.execute(\"UPDATE ZITEM SET ZMOOD = 'calm'\")\ndb.commit()",
            [store.path])
        try #require(result.status == 0, "\(result.standardError)")

        let (snapshot, report) = try CoreDataImporter.snapshot(from: store, options: CoreDataImportOptions(model: model))
        #expect(report.warnings.contains { $0.contains("ZITEM.ZMOOD") && $0.contains("not in the model") }, "\(report.warnings)")
        #expect(snapshot.objects(of: "Note").allSatisfy { $0["mood"] == nil })
    }

    @Test func malformedOrWrongModelFilesAreRefused() throws {
        let truncated = String(CoreDataModelTestKit.contents.prefix(900))
        let error = #expect(throws: GraphStoreError.self) { try CoreDataModelDescription.parse(Data(truncated.utf8), path: "Bad.xcdatamodel/contents") }
        #expect(error?.description.contains("Bad.xcdatamodel/contents") == true && error?.description.contains("line") == true)
        let notAModel = #expect(throws: GraphStoreError.self) { try CoreDataModelDescription.parse(Data("<plist/>".utf8), path: "x/contents") }
        #expect(notAModel?.description.contains("<model>") == true)
        let badType = CoreDataModelTestKit.contents.replacingOccurrences(of: "\"Integer 16\"", with: "\"Integer 8\"")
        let typeError = #expect(throws: GraphStoreError.self) { try CoreDataModelDescription.parse(Data(badType.utf8), path: "x/contents") }
        #expect(typeError?.description.contains("Item.rating") == true)
        let absent = #expect(throws: GraphStoreError.self) { try CoreDataModelDescription.read(from: URL(fileURLWithPath: "/nonexistent/App.xcdatamodeld")) }
        #expect(absent?.description.contains("App.xcdatamodeld") == true)
    }

    @Test func storeKindsAreToldFromBytesAndTables() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CoreDataModelTestKit.writeStore(in: directory.url)
        #expect(try StoreKind.detect(at: store) == .coreData)
        let swiftData = directory.file("default.store")
        try FileManager.default.copyItem(at: store, to: swiftData)
        #expect(try StoreKind.detect(at: swiftData) == .swiftData)
        let text = directory.file("notes.sqlite")
        try Data("just text".utf8).write(to: text)
        let unrecognized = #expect(throws: GraphStoreError.self) { try StoreKind.detect(at: text) }
        guard case .unrecognizedFile? = unrecognized else { Issue.record("\(String(describing: unrecognized))"); return }
        #expect(unrecognized?.description.contains("damaged") == false)
        let empty = directory.file("empty.sqlite")
        try Data().write(to: empty)
        guard case .damagedFile? = #expect(throws: GraphStoreError.self, performing: { try StoreKind.detect(at: empty) }) else { Issue.record("empty"); return }
    }

    /// The committed `NotesModel.generated.swift` is what the generator prints today.
    @Test func theCommittedGeneratedTypesAreCurrent() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (_, report, model) = try Self.imported(directory)
        let source = EntitySourceGenerator.source(model: model, report: report, name: "NotesModel")
        let committed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("NotesModel.generated.swift")
        let current = try String(contentsOf: committed, encoding: .utf8)
        if current != source {
            try source.write(to: committed, atomically: true, encoding: .utf8)
            Issue.record("NotesModel.generated.swift was out of date and has been rewritten; rebuild and run the tests again")
        }
        #expect(source.contains("var tags: [Tag.ID]") && source.contains(".toOne(\\.folder, Folder.self, deleteRule: .cascade)"))
        #expect(source.contains("static var uniqueConstraints: [UniqueConstraint<Tag>]"))
        #expect(source.contains("enum NotesModel {"))
    }

    /// The snapshot migrated with the model opens with the generated types, unedited, in
    /// either format: the header marks the model's decimals and URIs, which a property list
    /// holds as `Decimal` and `URL` encode them.
    @Test(arguments: [SnapshotFormat.json, .binaryPropertyList])
    func theMigratedSnapshotOpensWithTheGeneratedTypes(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try CoreDataModelDescription.read(from: try CoreDataModelTestKit.writeModel(in: directory.url))
        let store = try CoreDataModelTestKit.writeStore(in: directory.url)
        let read = try Migration.readStore(from: store, model: model)
        #expect(read.kind == .coreData)
        let snapshotURL = directory.file("notes.gz")
        _ = try Migration.writeSnapshot(read.snapshot, to: snapshotURL, format: format, compression: .gzip)

        let container = try GraphContainer(for: NotesModel.entities, store: .file(snapshotURL, format: format, compression: .gzip))
        try await Self.check(container)
        try await container.close()
    }

    /// A join row and a to-one column naming rows the store does not have: the migrated
    /// snapshot leaves both references out (the warnings name them) and still opens.
    @Test func referencesToMissingRowsAreLeftOutSoTheSnapshotOpens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try CoreDataModelDescription.read(from: try CoreDataModelTestKit.writeModel(in: directory.url))
        let store = try CoreDataModelTestKit.writeStore(in: directory.url)
        let queue = try DatabaseQueue(path: store.path)
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO Z_3TAGS VALUES (1, 99)")
            try db.execute(sql: "UPDATE ZITEM SET ZFOLDER = 77 WHERE Z_PK = 4")
        }
        try queue.close()
        let read = try Migration.readStore(from: store, model: model)
        #expect(read.notes.contains { $0.hasPrefix("Note.tags: 1 reference(s) to objects that do not exist") && $0.contains("Z_PK 99 of ZTAG") }, "\(read.notes)")
        #expect(read.notes.contains { $0.hasPrefix("Note.folder: 1 reference(s) to objects that do not exist") && $0.contains("Z_PK 77 of ZFOLDER") }, "\(read.notes)")
        let snapshotURL = directory.file("notes.json.gz")
        _ = try Migration.writeSnapshot(read.snapshot, to: snapshotURL, format: .json, compression: .gzip)

        let container = try GraphContainer(for: NotesModel.entities, store: .file(snapshotURL, format: .json, compression: .gzip))
        let context = container.mainContext
        #expect(context.model(Note.self, id: 1)?.tags == [1, 2])
        #expect(try #require(context.model(Note.self, id: 4)).folder == nil)
        try container.checkInvariants()
        try await container.close()
    }
}
