import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite

/// A small Core Data app, "Notes": its model file and a store it wrote, built by hand.
///
/// - `Item` (every attribute type; `image` allows external storage) with the sub-entity
///   `Note`; `Note.folder` ↔ `Folder.notes`, ordered, cascading from the folder;
///   `Note.tags` ↔ `Tag.notes`, many-to-many; `Folder.name` and `Tag.name` unique.
public enum CoreDataModelTestKit {
    public static let contents = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" systemVersion="22A380" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Folder" representedClassName="Folder" syncable="YES" codeGenerationType="class">
                <attribute name="name" attributeType="String"/>
                <relationship name="notes" toMany="YES" deletionRule="Cascade" ordered="YES" destinationEntity="Note" inverseName="folder" inverseEntity="Note"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="name"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <entity name="Item" representedClassName="Item" syncable="YES" codeGenerationType="class">
                <attribute name="title" attributeType="String"/>
                <attribute name="createdAt" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="isArchived" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>
                <attribute name="rating" attributeType="Integer 16" defaultValueString="3" usesScalarValueType="YES"/>
                <attribute name="wordCount" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="views" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="score" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                <attribute name="ratio" attributeType="Float" defaultValueString="0.0" usesScalarValueType="YES"/>
                <attribute name="price" attributeType="Decimal" defaultValueString="0.0"/>
                <attribute name="uuid" optional="YES" attributeType="UUID" usesScalarValueType="NO"/>
                <attribute name="link" optional="YES" attributeType="URI"/>
                <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="payload" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData"/>
                <attribute name="draft" optional="YES" transient="YES" attributeType="String"/>
            </entity>
            <entity name="Note" representedClassName="Note" parentEntity="Item" syncable="YES" codeGenerationType="class">
                <attribute name="body" optional="YES" attributeType="String"/>
                <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
                <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/>
            </entity>
            <entity name="Tag" representedClassName="Tag" syncable="YES" codeGenerationType="class">
                <attribute name="name" attributeType="String"/>
                <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="tags" inverseEntity="Note"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="name"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
        </model>
        """

    public static let noteUUID = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    /// The bytes of the externally stored image, and of the inline one.
    public static let externalImage = Data((0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) })
    public static let inlineImage = Data([9, 8, 7])
    public static let externalFileName = "0B3F8A2C-9D4E-4F1A-8B7C-6D5E4F3A2B1C"

    /// Writes `Notes.xcdatamodeld` (one version, current per `.xccurrentversion`) into
    /// `directory` and returns its URL; `contents` replaces the model's XML.
    public static func writeModel(in directory: URL, contents: String = contents) throws -> URL {
        let bundle = directory.appendingPathComponent("Notes.xcdatamodeld")
        let version = bundle.appendingPathComponent("Notes 2.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: bundle.appendingPathComponent("Notes.xcdatamodel"), withIntermediateDirectories: true)
        try Data("<model/>".utf8).write(to: bundle.appendingPathComponent("Notes.xcdatamodel/contents"))
        try Data(contents.utf8).write(to: version.appendingPathComponent("contents"))
        let current = try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": "Notes 2.xcdatamodel"], format: .xml, options: 0)
        try current.write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    /// Writes the app's store, `Notes.sqlite`, with its external-data folder, into `directory`.
    public static func writeStore(in directory: URL, dropColumn: Bool = false) throws -> URL {
        let url = directory.appendingPathComponent("Notes.sqlite")
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE ZFOLDER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
                CREATE TABLE ZITEM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZISARCHIVED INTEGER, ZRATING INTEGER, ZWORDCOUNT INTEGER,
                  ZVIEWS INTEGER, ZFOLDER INTEGER, Z_FOK_FOLDER INTEGER, ZCREATEDAT TIMESTAMP, ZSCORE FLOAT, ZRATIO FLOAT, ZPRICE DECIMAL,
                  ZTITLE VARCHAR, \(dropColumn ? "" : "ZBODY VARCHAR, ")ZLINK VARCHAR, ZUUID BLOB, ZIMAGE BLOB, ZPAYLOAD BLOB );
                CREATE INDEX ZITEM_ZFOLDER_INDEX ON ZITEM (ZFOLDER);
                CREATE TABLE ZTAG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
                CREATE TABLE Z_3TAGS ( Z_3NOTES INTEGER, Z_4TAGS INTEGER, PRIMARY KEY (Z_3NOTES, Z_4TAGS) );
                CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
                INSERT INTO Z_PRIMARYKEY VALUES (1, 'Folder', 0, 2), (2, 'Item', 0, 4), (3, 'Note', 2, 0), (4, 'Tag', 0, 2);
                INSERT INTO ZFOLDER VALUES (1, 1, 1, 'Inbox'), (2, 1, 1, 'Empty');
                INSERT INTO ZTAG VALUES (1, 4, 1, 'swift'), (2, 4, 1, 'linux');
                INSERT INTO Z_3TAGS VALUES (1, 2), (1, 1), (3, 2);
                """)
            let columns = "Z_PK, Z_ENT, Z_OPT, ZISARCHIVED, ZRATING, ZWORDCOUNT, ZVIEWS, ZFOLDER, Z_FOK_FOLDER, ZCREATEDAT, ZSCORE, ZRATIO, ZPRICE, ZTITLE, \(dropColumn ? "" : "ZBODY, ")ZLINK, ZUUID, ZIMAGE, ZPAYLOAD"
            func insert(_ values: [(any DatabaseValueConvertible)?]) throws {
                let row = dropColumn ? Array(values.prefix(14) + values.suffix(4)) : values
                try db.execute(sql: "INSERT INTO ZITEM (\(columns)) VALUES (\(Array(repeating: "?", count: row.count).joined(separator: ", ")))", arguments: StatementArguments(row))
            }
            let uuid = withUnsafeBytes(of: noteUUID.uuid) { Data($0) }
            // Notes 3 then 1 in the folder's order (Z_FOK_), against their Z_PK order.
            try insert([1, 3, 1, 1, 5, 120, Int64.max, 1, 2, 700_000_000.5, 0.25, 1.5, 19.99, "Groceries", "milk", "https://example.com/a", uuid, Data([1]) + inlineImage, Data([0xCA, 0xFE]), ])
            try insert([3, 3, 1, 0, 1, 7, 0, 1, 1, -31_622_400.5, 1.0, 0.5, 0, "Plan", nil, nil, nil, Data([2]) + Data(externalFileName.utf8) + Data([0]), nil])
            // A note with NULLs in non-optional attributes, which take the model's defaults.
            try insert([4, 3, 1, nil, nil, nil, nil, nil, nil, 0, nil, nil, nil, "Loose", nil, nil, nil, nil, nil])
            // A plain item.
            try insert([2, 2, 1, 0, 2, 0, 0, nil, nil, 1.0, 2.0, 0.0, 1, "Item", nil, nil, nil, nil, nil])
        }
        try queue.close()
        let support = directory.appendingPathComponent(".Notes_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: support, withIntermediateDirectories: true)
        try externalImage.write(to: support.appendingPathComponent(externalFileName))
        return url
    }

    /// The Notes model as Core Data keeps it in the store (`Z_MODELCACHE`): the keyed archive
    /// of ``contents`` (with `Item.draft`, the transient attribute the model file has) deflated,
    /// leaving out the entities in `omitting`; `contents` replaces the model's XML.
    public static func modelCache(
        contents: String = contents, inherited: CoreDataModelCacheWriter.Inherited = .proxies, omitting: Set<String> = [], zlibWrapper: Bool = false
    ) throws -> Data {
        let model = try CoreDataModelDescription.parse(Data(contents.utf8), path: "Notes.xcdatamodel/contents")
        let archive = CoreDataModelCacheWriter.archive(of: model, inherited: inherited, transients: ["Item": ["draft"]], omitting: omitting)
        return CoreDataModelCacheWriter.deflate(archive, zlibWrapper: zlibWrapper)
    }

    /// Writes the app's store, as ``writeStore(in:dropColumn:)``, with `modelCache` as its
    /// `Z_MODELCACHE`.
    public static func writeStore(in directory: URL, modelCache: Data, dropColumn: Bool = false) throws -> URL {
        let store = try writeStore(in: directory, dropColumn: dropColumn)
        try CoreDataModelCacheWriter.install(modelCache, in: store)
        return store
    }
}
