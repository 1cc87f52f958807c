import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// An entity named like a type the generated source uses (`Date`, `String`, `Entity`) keeps
/// its name, as the migrated snapshot names it, and the source spells the shadowed types with
/// their module, so that `var when: Date?` still means Foundation's date.
@Suite struct GeneratedTypeShadowingTests {
    static let contents = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Event" representedClassName="Event" syncable="YES">
                <attribute name="id" optional="YES" attributeType="String"/>
                <attribute name="when" optional="YES" attributeType="Date"/>
                <attribute name="count" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                <relationship name="day" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Date"/>
                <relationship name="word" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="String"/>
            </entity>
            <entity name="Date" representedClassName="DateEntity" syncable="YES">
                <attribute name="label" optional="YES" attributeType="String"/>
                <attribute name="stamp" optional="YES" attributeType="Date"/>
            </entity>
            <entity name="String" representedClassName="StringEntity" syncable="YES">
                <attribute name="text" attributeType="String" defaultValueString=""/>
            </entity>
            <entity name="Entity" representedClassName="EntityEntity" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """

    /// A store of the model above, imported with it.
    static func imported(in directory: TemporaryDirectory) throws -> (CoreDataModelDescription, CoreDataImportReport, GenericSnapshot) {
        let model = try CoreDataModelDescription.parse(Data(contents.utf8), path: "K.xcdatamodel/contents")
        let store = directory.file("K.sqlite")
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                CREATE TABLE ZEVENT (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZID VARCHAR, ZWHEN TIMESTAMP, ZCOUNT INTEGER, ZDAY INTEGER, ZWORD INTEGER);
                CREATE INDEX ZEVENT_ZDAY_INDEX ON ZEVENT (ZDAY);
                CREATE INDEX ZEVENT_ZWORD_INDEX ON ZEVENT (ZWORD);
                CREATE TABLE ZDATE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLABEL VARCHAR, ZSTAMP TIMESTAMP);
                CREATE TABLE ZSTRING (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTEXT VARCHAR);
                CREATE TABLE ZENTITY (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR);
                INSERT INTO Z_PRIMARYKEY VALUES (1, 'Event', 0, 2), (2, 'Date', 0, 1), (3, 'String', 0, 1), (4, 'Entity', 0, 1);
                INSERT INTO ZEVENT VALUES (1, 1, 1, 'a', 700000000.5, 3, 1, 1), (2, 1, 1, 'b', NULL, 0, NULL, NULL);
                INSERT INTO ZDATE VALUES (1, 2, 1, 'today', 1.25);
                INSERT INTO ZSTRING VALUES (1, 3, 1, 'hello');
                INSERT INTO ZENTITY VALUES (1, 4, 1, 'thing');
                """)
        }
        try queue.close()
        let (snapshot, report) = try CoreDataImporter.snapshot(from: store, options: CoreDataImportOptions(model: model))
        return (model, report, snapshot)
    }

    @Test func typesShadowedByAnEntityAreSpelledWithTheirModule() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (model, report, snapshot) = try Self.imported(in: directory)
        #expect(snapshot.entities.map(\.name) == ["Date", "Entity", "Event", "String"])
        let source = EntitySourceGenerator.source(model: model, report: report, name: "KModel")
        let lines = Set(source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        for line in [
            "struct Date: GraphStore.Entity {", "struct Entity: GraphStore.Entity {", "struct String: GraphStore.Entity {",
            "struct Event: GraphStore.Entity {",
            "var id: Swift.String", "var when: Foundation.Date?", "var count: Int64 = 0", "var day: Date.ID?", "var word: String.ID?",
            "var label: Swift.String?", "var stamp: Foundation.Date?", "var text: Swift.String = \"\"", "var id: Int64",
            "static var relationships: [Relationship<Event>] {", ".toOne(\\.day, Date.self, deleteRule: .nullify),",
            "static let entities: [any GraphStore.Entity.Type] = [Date.self, Entity.self, Event.self, String.self]",
        ] {
            #expect(lines.contains(line), "missing \(line) in:\n\(source)")
        }
        // No bare use of a shadowed type is left.
        for bare in [": Date?", ": String?", ": Entity {", "[any Entity."] {
            #expect(!source.contains(bare), "\(bare) in:\n\(source)")
        }
    }

    /// Without a clash, the source keeps the plain names.
    @Test func unshadowedTypesKeepTheirPlainNames() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try CoreDataModelDescription.read(from: try CoreDataModelTestKit.writeModel(in: directory.url))
        let store = try CoreDataModelTestKit.writeStore(in: directory.url)
        let (_, report) = try CoreDataImporter.snapshot(from: store, options: CoreDataImportOptions(model: model))
        let source = EntitySourceGenerator.source(model: model, report: report, name: "NotesModel")
        #expect(!source.contains("Foundation.") && !source.contains("Swift.") && !source.contains("GraphStore."), "\(source)")
    }
}
