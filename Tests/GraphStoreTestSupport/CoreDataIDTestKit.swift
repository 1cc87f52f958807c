import Foundation
import GRDB

/// A small Core Data app whose `Person` entity has an optional attribute `id` (as SwiftData
/// keeps `var id: UUID`), which the import takes as the persons' ids: its model, of any id
/// type, and a store with the ids and the relationship keys a test gives, built by hand.
public enum CoreDataIDTestKit {
    /// A value as SQLite stores it.
    public enum Stored: Sendable, CustomStringConvertible {
        case null, integer(Int64), real(Double), text(String), blob(Data)

        /// The 16 bytes Core Data keeps a UUID as.
        public static func blob(_ uuid: UUID) -> Stored { .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) }) }

        public var databaseValue: DatabaseValue {
            switch self {
            case .null: .null
            case .integer(let number): number.databaseValue
            case .real(let number): number.databaseValue
            case .text(let text): text.databaseValue
            case .blob(let data): data.databaseValue
            }
        }

        public var description: String {
            switch self {
            case .null: "NULL"
            case .integer(let number): "INTEGER \(number)"
            case .real(let number): "REAL \(number)"
            case .text(let text): "TEXT '\(text.unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16, uppercase: true))}" }.joined())'"
            case .blob(let data): "BLOB x'\(data.map { String(format: "%02x", $0) }.joined())'"
            }
        }
    }

    /// Two UUIDs for ids.
    public static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    public static let otherUUID = UUID(uuidString: "0B3F8A2C-9D4E-4F1A-8B7C-6D5E4F3A2B1C")!

    /// The model: `Person` with an optional attribute `id` of `idType`, and `Pet`, whose
    /// `owner` is a `Person` (inverse `Person.pets`) and whose `friends` are `Person`s
    /// (many-to-many, inverse `Person.petFriends`).
    public static func model(idType: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" systemVersion="22A380" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Person" representedClassName="Person" syncable="YES" codeGenerationType="class">
                <attribute name="id" optional="YES" attributeType="\(idType)" usesScalarValueType="NO"/>
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="pets" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Pet" inverseName="owner" inverseEntity="Pet"/>
                <relationship name="petFriends" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Pet" inverseName="friends" inverseEntity="Pet"/>
            </entity>
            <entity name="Pet" representedClassName="Pet" syncable="YES" codeGenerationType="class">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="pets" inverseEntity="Person"/>
                <relationship name="friends" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Person" inverseName="petFriends" inverseEntity="Person"/>
            </entity>
        </model>
        """
    }

    /// Writes the store of ``model(idType:)`` to `url`: a `Person` per id (`Z_PK` 1, 2, …,
    /// `ZID` declared `idColumn`); `Pet` 1 (Rex), owned by the person whose `Z_PK` is `rexOwner`
    /// and friends with persons 1 and `rexFriend`; `Pet` 2 (Tom), owned by person 1 and friends
    /// with person 2. An empty declaration gives a column without affinity, where SQLite keeps
    /// each value as it is given.
    public static func writeStore(
        at url: URL, idColumn: String, ids: [Stored], ownerColumn: String = "INTEGER", rexOwner: Stored = .integer(2),
        friendColumn: String = "INTEGER", rexFriend: Stored = .integer(2)
    ) throws {
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE ZPERSON ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZID \(idColumn), ZNAME VARCHAR );
                CREATE TABLE ZPET ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZOWNER \(ownerColumn), ZNAME VARCHAR );
                CREATE INDEX ZPET_ZOWNER_INDEX ON ZPET (ZOWNER);
                CREATE TABLE Z_2FRIENDS ( Z_2PETFRIENDS INTEGER, Z_1FRIENDS \(friendColumn) );
                CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
                """)
            try db.execute(sql: "INSERT INTO Z_PRIMARYKEY VALUES (1, 'Person', 0, ?), (2, 'Pet', 0, 2)", arguments: [ids.count])
            for (index, id) in ids.enumerated() {
                try db.execute(sql: "INSERT INTO ZPERSON VALUES (?, 1, 1, ?, ?)", arguments: [index + 1, id.databaseValue, "person \(index + 1)"])
            }
            try db.execute(sql: "INSERT INTO ZPET VALUES (1, 2, 1, ?, 'Rex'), (2, 2, 1, 1, 'Tom')", arguments: [rexOwner.databaseValue])
            try db.execute(sql: "INSERT INTO Z_2FRIENDS VALUES (1, 1), (1, ?), (2, 2)", arguments: [rexFriend.databaseValue])
        }
        try queue.close()
    }
}
