import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

private typealias Kit = ImportTestKit

/// The attribute a Core Data import takes as an entity's id (`id`, as SwiftData keeps
/// `var id: UUID`, optional in the model) when rows hold NULL there, the same id twice, or
/// ids that differ in SQLite but are one id to the app's Swift type; and the relationships
/// that point at such rows. None of it may reach a snapshot: the app would refuse it, or take
/// two objects, and the references to them, for one. Each is refused, naming the store, the
/// entity, the column and the rows, and the store is left as it was.
@Suite struct ImportCoreDataIDTests {
    typealias People = CoreDataIDTestKit
    typealias Stored = CoreDataIDTestKit.Stored

    /// How the store is imported: with the app's model, or with none (names and kinds from the
    /// columns and values).
    enum Import: String, Sendable, CaseIterable {
        case withModel, withoutModel

        func options(idType: String, in directory: TemporaryDirectory) throws -> CoreDataImportOptions {
            switch self {
            case .withModel:
                let url = try CoreDataModelTestKit.writeModel(in: directory.url, contents: People.model(idType: idType))
                return CoreDataImportOptions(model: try CoreDataModelDescription.read(from: url))
            case .withoutModel:
                return CoreDataImportOptions(usesModelCache: false)
            }
        }
    }

    /// Ids that must be refused: the model's type of `id`, the declared type of `ZID`, and the
    /// ids of persons 1 and 2, both of which pets refer to.
    struct Refused: Sendable, CustomTestStringConvertible {
        var idType: String
        var idColumn: String
        var first: Stored
        var second: Stored
        /// Words the reason gives, beyond the rows and their values.
        var why: String
        var imports: [Import] = Import.allCases

        var testDescription: String { "\(idType) id: \(first) and \(second)" }
    }

    /// Writes the store and imports it as `how` says, expecting a refusal that names the store,
    /// `Person` and the row `Z_PK 2`, and leaves the store as it was; returns the reason.
    static func refusal(
        idType: String, how: Import, sourceLocation: SourceLocation = #_sourceLocation, writeStore: (URL) throws -> Void
    ) throws -> String {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("People.sqlite")
        try writeStore(url)
        let options = try how.options(idType: idType, in: directory)
        let error = try Kit.expectRefused(url, sourceLocation: sourceLocation) { _ = try CoreDataImporter.snapshot(from: url, options: options) }
        guard case .codingFailed(let path, let entity, let id, let reason) = error else { throw ImportCoreDataTests.Unexpected(error) }
        #expect(path == url.path, sourceLocation: sourceLocation)
        #expect(["Person", "Pet"].contains(entity), "\(error)", sourceLocation: sourceLocation)
        #expect(id == "Z_PK 2" || id == "Z_PK 1", "\(error)", sourceLocation: sourceLocation)
        return "\(entity) \(id ?? ""): \(reason)"
    }

    /// A type of `id` in the model, the column Core Data declares for it, and a value.
    struct IDType: Sendable, CustomTestStringConvertible {
        var name: String
        var column: String
        var value: Stored

        static let all = [
            IDType(name: "UUID", column: "BLOB", value: .blob(People.uuid)), IDType(name: "String", column: "VARCHAR", value: .text("a")),
            IDType(name: "Integer 64", column: "INTEGER", value: .integer(5)),
        ]

        var testDescription: String { name }
    }

    // MARK: - (a) NULL

    /// An optional id attribute with no value in one row: the object would have no id, and the
    /// references to it nothing to hold. (Before: refused too.)
    @Test(arguments: IDType.all, Import.allCases)
    func aNullIDIsRefusedNamingTheRow(_ type: IDType, how: Import) throws {
        let reason = try Self.refusal(idType: type.name, how: how) { try People.writeStore(at: $0, idColumn: type.column, ids: [type.value, .null]) }
        #expect(reason.hasPrefix("Person Z_PK 2: ") && reason.contains("ZID is NULL") && reason.contains("idColumns"), "\(reason)")
    }

    // MARK: - (b) The same value twice

    /// Two rows with the same stored id. (Before: refused too.)
    @Test(arguments: IDType.all, Import.allCases)
    func theSameIDInTwoRowsIsRefusedNamingBoth(_ type: IDType, how: Import) throws {
        let reason = try Self.refusal(idType: type.name, how: how) { try People.writeStore(at: $0, idColumn: type.column, ids: [type.value, type.value]) }
        #expect(reason.hasPrefix("Person Z_PK 2: ") && reason.contains("Z_PK 1 and 2 have the same id") && reason.contains("ZID"), "\(reason)")
    }

    // MARK: - (c) Different in SQLite, one id to the app

    static let oneIDToTheApp: [Refused] = [
        // A UUID as Core Data keeps it (16 bytes) and as text, in either case.
        Refused(idType: "UUID", idColumn: "BLOB", first: .blob(People.uuid), second: .text(People.uuid.uuidString.lowercased()), why: "the same UUID", imports: [.withModel]),
        Refused(idType: "UUID", idColumn: "BLOB", first: .blob(People.uuid), second: .text(People.uuid.uuidString), why: "the same UUID", imports: [.withModel]),
        Refused(idType: "UUID", idColumn: "BLOB", first: .text(People.uuid.uuidString), second: .text(People.uuid.uuidString.lowercased()), why: "the same UUID", imports: [.withModel]),
        // Without a model the BLOB stays data: no one type reads data and text.
        Refused(idType: "UUID", idColumn: "BLOB", first: .blob(People.uuid), second: .text(People.uuid.uuidString), why: "does not read both data and text", imports: [.withoutModel]),
        // One string under Swift's comparison (canonical equivalence), two in SQLite.
        Refused(idType: "String", idColumn: "VARCHAR", first: .text("caf\u{E9}"), second: .text("cafe\u{301}"), why: "Unicode canonical equivalence"),
        // One number, stored as INTEGER and REAL (a column without affinity keeps both).
        Refused(idType: "Integer 64", idColumn: "", first: .integer(5), second: .real(5.0), why: "the same number"),
        Refused(idType: "Double", idColumn: "", first: .integer(5), second: .real(5.0), why: "the same Double", imports: [.withModel]),
        // An integer as INTEGER and as TEXT: no one type reads a number and text.
        // (With the model, the text is refused on its own: see ImportCoreDataValueFitTests.)
        Refused(idType: "Integer 64", idColumn: "", first: .integer(5), second: .text("5"), why: "does not read both number and text", imports: [.withoutModel]),
        // Two doubles that are one Float.
        Refused(idType: "Float", idColumn: "FLOAT", first: .real(0.1), second: .real(0.100_000_000_1), why: "the same Float", imports: [.withModel]),
    ]

    /// Before, the UUID, number, number-and-text and Float cases were imported as two objects
    /// (and the pets' references as two targets): the app then took them for one, or could not
    /// read the ids at all, after the migration had written (and with `--force` replaced) the
    /// destination. Now each is refused naming both rows and how they are stored.
    @Test(arguments: oneIDToTheApp)
    func idsThatAreOneToTheAppAreRefusedNamingBothRows(_ refused: Refused) throws {
        for how in refused.imports {
            let reason = try Self.refusal(idType: refused.idType, how: how) {
                try People.writeStore(at: $0, idColumn: refused.idColumn, ids: [refused.first, refused.second])
            }
            #expect(reason.hasPrefix("Person Z_PK 2: "), "\(how): \(reason)")
            #expect(reason.contains("Z_PK 1 holds \(refused.first) and Z_PK 2 \(refused.second)"), "\(how): \(reason)")
            #expect(reason.contains("ZID") && reason.contains(refused.why) && reason.contains("idColumns"), "\(how): \(reason)")
        }
    }

    /// What is not one id to the app is imported, with the pets' references translated: a UUID
    /// as a BLOB and another as lowercase text, with the model; `5` and `5.5`; strings that
    /// differ in case.
    @Test func idsThatDifferToTheAppAreImportedAndReferencesFollow() throws {
        let cases: [(type: String, column: String, ids: [Stored], expected: [SnapshotValue])] = [
            ("UUID", "BLOB", [.blob(People.uuid), .text(People.otherUUID.uuidString.lowercased())],
             [.string(People.uuid.uuidString), .string(People.otherUUID.uuidString.lowercased())]),
            // Above 2^53: one Double, but two Decimals (read from the numbers' exact text).
            ("Decimal", "DECIMAL", [.integer(9_007_199_254_740_992), .integer(9_007_199_254_740_993)],
             [.integer(9_007_199_254_740_992), .integer(9_007_199_254_740_993)]),
            ("String", "VARCHAR", [.text("Caf\u{E9}"), .text("caf\u{E9}")], [.string("Caf\u{E9}"), .string("caf\u{E9}")]),
        ]
        for (type, column, ids, expected) in cases {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let url = directory.file("People.sqlite")
            try People.writeStore(at: url, idColumn: column, ids: ids)
            let options = try Import.withModel.options(idType: type, in: directory)
            let (snapshot, report) = try Kit.expectUnchanged(url) { try CoreDataImporter.snapshot(from: url, options: options) }
            #expect(snapshot.objects(of: "Person").map { $0["id"] } == expected.map { $0 }, "\(type)")
            let rex = try Kit.object(snapshot, "Pet", id: .integer(1))
            #expect(rex["owner"] == expected[1] && rex["friends"] == .array(expected), "\(type): \(rex)")
            #expect(report.warnings.isEmpty, "\(report.warnings)")
        }
    }

    // MARK: - (d) Relationships

    /// A to-one column or a join row whose key is not an integer `Z_PK`. Before, a to-one value
    /// went into the snapshot as it was stored (`"2"`, `2.0`, `"abc"`: a reference to no object,
    /// not named in the warnings) and a join row was silently left out (Rex lost his friend).
    /// Now each is refused, naming the pet, the column and the value.
    @Test func relationshipKeysThatAreNotZPKsAreRefused() throws {
        let ids: [Stored] = [.blob(People.uuid), .blob(People.otherUUID)]
        let toOne: [(column: String, value: Stored)] = [("", .text("2")), ("", .real(2.0)), ("INTEGER", .text("abc"))]
        for (column, value) in toOne {
            let reason = try Self.refusal(idType: "UUID", how: .withModel) {
                try People.writeStore(at: $0, idColumn: "BLOB", ids: ids, ownerColumn: column, rexOwner: value)
            }
            #expect(reason.hasPrefix("Pet Z_PK 1: ") && reason.contains("owner (column ZOWNER) holds \(value)"), "\(reason)")
        }
        let join: [(column: String, value: Stored)] = [("", .text("2")), ("", .real(2.0)), ("INTEGER", .text("abc")), ("", .blob(Data([2])))]
        for (column, value) in join {
            for how in Import.allCases {
                let reason = try Self.refusal(idType: "UUID", how: how) {
                    try People.writeStore(at: $0, idColumn: "BLOB", ids: ids, friendColumn: column, rexFriend: value)
                }
                #expect(reason.hasPrefix("Pet Z_PK 1: ") && reason.contains("Z_2FRIENDS") && reason.contains("Z_1FRIENDS holds \(value)"), "\(how): \(reason)")
            }
        }
    }

    /// A NULL in a to-one column or a join row links nothing: imported without the link, as
    /// before.
    @Test func nullRelationshipKeysLinkNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("People.sqlite")
        try People.writeStore(at: url, idColumn: "BLOB", ids: [.blob(People.uuid)], rexOwner: .null, rexFriend: .null)
        let options = try Import.withModel.options(idType: "UUID", in: directory)
        let (snapshot, _) = try CoreDataImporter.snapshot(from: url, options: options)
        let rex = try Kit.object(snapshot, "Pet", id: .integer(1))
        #expect(rex["owner"] == nil && rex["friends"] == .array([.string(People.uuid.uuidString)]), "\(rex)")
    }

    /// An ordered to-many relationship (`Folder.notes`) is read from its inverse column in the
    /// targets' table: a value there that is not a `Z_PK` was skipped, losing the note from
    /// the folder's order; now it is refused, naming the row.
    @Test func anOrderedRelationshipsKeyThatIsNoZPKIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try CoreDataModelDescription.read(from: try CoreDataModelTestKit.writeModel(in: directory.url))
        let url = try CoreDataModelTestKit.writeStore(in: directory.url)
        try Kit.execute("UPDATE ZITEM SET ZFOLDER = 'Inbox' WHERE Z_PK = 3", on: url)
        let error = try Kit.expectRefused(url) { _ = try CoreDataImporter.snapshot(from: url, options: CoreDataImportOptions(model: model)) }
        guard case .codingFailed(url.path, "Folder", _, let reason) = error else { throw ImportCoreDataTests.Unexpected(error) }
        #expect(reason.contains("Z_PK 3 of ZITEM holds TEXT 'Inbox' in ZFOLDER") && reason.contains("notes"), "\(reason)")
    }

    /// With a model, attributeNames renames the model's fields (the way out of repeated ids):
    /// a name that takes an ordered to-many relationship's (`Folder.name` → `notes`) would have
    /// its values overwritten by the relationship's array, every folder's name lost; it is
    /// refused, naming both. A rename that collides with nothing applies.
    @Test func aRenameOntoAnOrderedRelationshipIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let model = try CoreDataModelDescription.read(from: try CoreDataModelTestKit.writeModel(in: directory.url))
        let url = try CoreDataModelTestKit.writeStore(in: directory.url)
        let error = try Kit.expectRefused(url) {
            _ = try CoreDataImporter.snapshot(from: url, options: CoreDataImportOptions(attributeNames: ["Folder": ["ZNAME": "notes"]], model: model))
        }
        guard case .codingFailed(_, "Folder", _, let reason) = error else { throw ImportCoreDataTests.Unexpected(error) }
        #expect(reason.contains("ZNAME and the ordered relationship notes would both be the field notes"), "\(reason)")

        let (snapshot, report) = try CoreDataImporter.snapshot(from: url, options: CoreDataImportOptions(attributeNames: ["Folder": ["ZNAME": "title"]], model: model))
        let folders = try #require(snapshot.entities.first { $0.name == "Folder" }?.objects)
        for folder in folders {
            guard case .object(let fields) = folder else { continue }
            #expect(fields["title"] != nil && fields["name"] == nil && fields["notes"] != nil, "\(fields)")
        }
        #expect(!report.warnings.contains { $0.contains("attributeNames") }, "\(report.warnings)")
    }
}
