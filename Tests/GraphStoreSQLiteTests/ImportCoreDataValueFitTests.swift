import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A value SQLite keeps in a Core Data column that the model's type does not hold (70000 in an
/// Integer 16, 5.5 in an Integer 64, text in a UUID or Date, a BLOB in a String). Before, the
/// import with the app's model kept it as stored: the migration reported success and wrote (or
/// with `--force` replaced) a destination the app's types then refused to open, or, for a
/// `String` read from a BLOB's Base64 text, a value the app never wrote. Now it is refused,
/// naming the row, the attribute, its column and type, and the stored value; nothing is written.
@Suite struct ImportCoreDataValueFitTests {
    typealias People = CoreDataIDTestKit
    typealias Stored = CoreDataIDTestKit.Stored

    /// A model type of `id`, the column's declared type, a value that does not fit and one
    /// that does (person 2's), and words of the refusal.
    struct Misfit: Sendable, CustomTestStringConvertible {
        var type: String
        var column: String
        var value: Stored
        var fitting: Stored
        var why: String

        var testDescription: String { "\(type): \(value)" }
    }

    static let misfits: [Misfit] = [
        Misfit(type: "Integer 16", column: "INTEGER", value: .integer(70_000), fitting: .integer(7), why: "beyond Int16's range"),
        Misfit(type: "Integer 32", column: "INTEGER", value: .integer(1 << 31), fitting: .integer(7), why: "beyond Int32's range"),
        Misfit(type: "Integer 64", column: "INTEGER", value: .real(5.5), fitting: .integer(7), why: "not an integer Int64 holds"),
        Misfit(type: "Integer 64", column: "", value: .text("five"), fitting: .integer(7), why: "not an integer Int64 holds"),
        Misfit(type: "UUID", column: "BLOB", value: .text("abc"), fitting: .blob(People.uuid), why: "neither a UUID's 16 bytes nor its text"),
        Misfit(type: "UUID", column: "BLOB", value: .blob(Data(repeating: 1, count: 15)), fitting: .blob(People.uuid), why: "neither a UUID's 16 bytes"),
        Misfit(type: "String", column: "", value: .blob(Data([0xFF, 0xFE])), fitting: .text("x"), why: "not a value of type String"),
        Misfit(type: "String", column: "", value: .integer(12), fitting: .text("x"), why: "not a value of type String"),
        Misfit(type: "Date", column: "TIMESTAMP", value: .text("2024-01-01"), fitting: .real(1000.5), why: "not a number of seconds since 2001"),
        Misfit(type: "Boolean", column: "INTEGER", value: .integer(2), fitting: .integer(1), why: "neither 0 nor 1"),
        Misfit(type: "Binary", column: "BLOB", value: .text("not data"), fitting: .blob(Data([1, 2])), why: "not a value of type Data"),
        Misfit(type: "Double", column: "", value: .text("1.5"), fitting: .real(2.5), why: "not a value of type Double"),
        Misfit(type: "Float", column: "", value: .real(1e39), fitting: .real(2.5), why: "not a value of type Float"),
    ]

    /// Import options with the model `contents` (written into `directory`); with `name`, the
    /// persons' ids come from `Z_PK` and `ZID` is imported as the attribute `name`.
    static func options(model contents: String, in directory: TemporaryDirectory, keepingIDAs name: String?) throws -> CoreDataImportOptions {
        let model = try CoreDataModelTestKit.writeModel(in: directory.url, contents: contents)
        var options = CoreDataImportOptions(model: try CoreDataModelDescription.read(from: model))
        if let name {
            options.idColumns = ["Person": "Z_PK"]
            options.attributeNames = ["Person": ["ZID": name]]
        }
        return options
    }

    /// The refusal of importing a store whose person 1 holds `misfit.value` in `ZID`, as the
    /// id (`asID`) or as the attribute `importedID` beside ids from `Z_PK`.
    static func refusal(_ misfit: Misfit, asID: Bool) throws -> (error: GraphStoreError, store: URL) {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("People.sqlite")
        try People.writeStore(at: url, idColumn: misfit.column, ids: [misfit.value, misfit.fitting])
        let options = try Self.options(model: People.model(idType: misfit.type), in: directory, keepingIDAs: asID ? nil : "importedID")
        let before = try Data(contentsOf: url)
        do {
            _ = try CoreDataImporter.snapshot(from: url, options: options)
        } catch let error as GraphStoreError {
            #expect(try Data(contentsOf: url) == before)
            return (error, url)
        }
        Issue.record("\(misfit) was imported")
        throw CancellationError()
    }

    @Test(arguments: misfits)
    func aValueTheModelsTypeDoesNotHoldIsRefusedNamingTheRow(_ misfit: Misfit) throws {
        for asID in [true, false] {
            let (error, url) = try Self.refusal(misfit, asID: asID)
            guard case .codingFailed(let path, let entity, let id, let reason) = error else { throw ImportCoreDataTests.Unexpected(error) }
            #expect(path == url.path && entity == "Person" && id == "Z_PK 1", "\(error)")
            let what = asID ? "its id column ZID (\(misfit.type) in the model)" : "its attribute id (imported as importedID) (column ZID, \(misfit.type) in the model)"
            for words in [what, "holds \(misfit.value)", misfit.why, "fix the row in the store"] {
                #expect(reason.contains(words), "\(asID ? "id" : "attribute"), \(words): \(reason)")
            }
        }
    }

    /// A NULL in a non-optional attribute takes the attribute's default, and a type's zero
    /// without one; a URI has none the app's `URL` reads (its zero was empty text, which made
    /// a store the app could not open). The value is left out, and the report says so.
    @Test func aDefaultTheTypeDoesNotHoldIsLeftOutWithAWarning() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("People.sqlite")
        try People.writeStore(at: url, idColumn: "VARCHAR", ids: [.text("https://example.com/a"), .null])
        let contents = People.model(idType: "URI").replacingOccurrences(
            of: #"<attribute name="id" optional="YES""#, with: #"<attribute name="id" optional="NO""#)
        try #require(contents != People.model(idType: "URI"))
        let options = try Self.options(model: contents, in: directory, keepingIDAs: "link")
        let (snapshot, report) = try CoreDataImporter.snapshot(from: url, options: options)
        let links = snapshot.objects(of: "Person").map { $0["link"] }
        #expect(links.contains(.string("https://example.com/a")) && links.contains(nil), "\(links)")
        #expect(report.warnings.contains { $0.contains("Person.link") && $0.contains("left out") }, "\(report.warnings)")
    }

    /// What does fit is imported: an integral REAL in an integer column without affinity (as
    /// the integer), a UUID as its text, the largest Int16, a Float's largest value.
    @Test func valuesTheTypeHoldsAreImported() throws {
        let cases: [(type: String, column: String, first: Stored, second: Stored, expected: [SnapshotValue])] = [
            ("Integer 64", "", .real(5.0), .integer(7), [.integer(5), .integer(7)]),
            ("Integer 16", "INTEGER", .integer(Int64(Int16.max)), .integer(Int64(Int16.min)), [.integer(Int64(Int16.max)), .integer(Int64(Int16.min))]),
            ("UUID", "BLOB", .text(People.uuid.uuidString), .blob(People.otherUUID), [.string(People.uuid.uuidString), .string(People.otherUUID.uuidString)]),
            ("Float", "", .real(Double(Float.greatestFiniteMagnitude)), .integer(3), [.double(Double(Float.greatestFiniteMagnitude)), .integer(3)]),
            // A column without affinity keeps a Boolean written as a REAL.
            ("Boolean", "", .real(1.0), .real(0.0), [.bool(true), .bool(false)]),
        ]
        for (type, column, first, second, expected) in cases {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let url = directory.file("People.sqlite")
            try People.writeStore(at: url, idColumn: column, ids: [first, second])
            let options = try Self.options(model: People.model(idType: type), in: directory, keepingIDAs: "importedID")
            let (snapshot, _) = try CoreDataImporter.snapshot(from: url, options: options)
            let values = snapshot.objects(of: "Person").sorted { ($0["id"]?.jsonObject as? Int64 ?? 0) < ($1["id"]?.jsonObject as? Int64 ?? 0) }.map { $0["importedID"] }
            #expect(values == expected.map { Optional($0) }, "\(type)")
        }
    }
}
