import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// A JSON snapshot writes a non-finite `Double` as the string `"NaN"`, `"Infinity"` or
/// `"-Infinity"`. A `String` field holding one of those strings is still a string to generic
/// reading where the type hints tell (top-level fields), so converting the file to a property
/// list gives one the app opens with every value.
@Suite struct NonFiniteStringTests {
    typealias Reading = NonFiniteModels.Reading

    static func writeJSONStore(_ url: URL, readings: [Reading] = NonFiniteModels.readings) async throws {
        let container = try GraphContainer(for: [Reading.self], store: .file(url, format: .json))
        container.mainContext.insert(contentsOf: readings)
        try container.mainContext.save()
        try await container.close()
    }

    @Test func genericReadingKeepsTheStringsAndTheDoubles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("readings.json.gz")
        try await Self.writeJSONStore(url)
        let snapshot = try GenericSnapshot.read(from: url)
        let objects = Dictionary(uniqueKeysWithValues: snapshot.entities[0].objects.map { object -> (SnapshotValue, [String: SnapshotValue]) in
            guard case .object(let fields) = object else { return (.null, [:]) }
            return (fields["id"] ?? .null, fields)
        })
        #expect(objects[.integer(0)]?["label"] == .string("NaN"))
        #expect(objects[.integer(1)]?["label"] == .string("Infinity"))
        #expect(objects[.integer(2)]?["label"] == .string("-Infinity"))
        #expect(objects[.integer(1)]?["value"] == .double(.infinity))
        #expect(objects[.integer(99)]?["limit"] == .double(-.infinity), "a hinted double, nil in the sampled objects")
    }

    @Test func convertingToAPropertyListKeepsEveryValue() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("readings.json.gz")
        try await Self.writeJSONStore(url)
        let plist = directory.file("readings.plist")
        try GenericSnapshot.read(from: url).encoded(as: .binaryPropertyList).write(to: plist)

        let container = try GraphContainer(for: [Reading.self], store: .file(plist, format: .binaryPropertyList, compression: .none))
        #expect(NonFiniteModels.match(try container.mainContext.fetch(FetchDescriptor<Reading>()), NonFiniteModels.readings))
        try await container.close()
    }

    typealias CappedReading = NonFiniteModels.CappedReading

    /// A store of model version 1 in `directory` holding `objects`: all but the first three in
    /// its snapshot (which the type hints sample), then those three one save each; after a
    /// crash (`crashed`) in the journal only, else folded in by `close()`.
    static func storeWithLateSaves<E: Entity>(_ objects: [E], format: SnapshotFormat, crashed: Bool, in directory: TemporaryDirectory) async throws -> URL {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let source = live.file("store.\(format.fileExtension).gz")
        let first = try GraphContainer(for: [E.self], store: .file(source, format: format), version: 1)
        first.mainContext.insert(contentsOf: objects.dropFirst(3))
        try first.mainContext.save()
        try await first.close()
        let old = try GraphContainer(for: [E.self], store: .file(source, format: format, coalescingInterval: .seconds(3600)), version: 1)
        for object in objects.prefix(3) {
            old.mainContext.insert(object)
            try old.mainContext.save()
        }
        if crashed {
            let url = try JournalStoreTests.crashCopy(of: source, into: directory)
            try await old.close()
            return url
        }
        try await old.close()
        let url = directory.file(source.lastPathComponent)
        try FileManager.default.copyItem(at: source, to: url)
        return url
    }

    /// A migration step sees a `String` field's `"NaN"` as the string it is, in the snapshot and
    /// in the records of a journal a crash left (which are JSON whatever the snapshot's format).
    @Test(arguments: [(SnapshotFormat.json, false), (.json, true), (.binaryPropertyList, true)])
    func aMigrationStepSeesTheStrings(format: SnapshotFormat, crashed: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.storeWithLateSaves(NonFiniteModels.readings, format: format, crashed: crashed, in: directory)

        let container = try GraphContainer(for: [CappedReading.self], store: .file(url, format: format), version: 2, migrations: CappedReading.migrations)
        let migrated = try container.mainContext.fetch(FetchDescriptor<CappedReading>())
        try await container.close()
        #expect(NonFiniteModels.match(migrated.map(\.reading), NonFiniteModels.capped(NonFiniteModels.readings)))
    }

    /// A value that is text or a number, encoded as either: a custom type, not a `String`.
    enum Cell: Codable, Equatable {
        case text(String)
        case number(Double)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) { self = .number(number) } else { self = .text(try container.decode(String.self)) }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            }
        }
    }

    struct Sheet: Entity {
        var id: Int
        var cell: Cell
        var note: String?
        var weight: Double?
        static var entityName: String { "Sheet" }

        enum CodingKeys: String, CodingKey { case id, cell, note, weight }

        // Hand-written: a nil note is encoded as a value, a nil weight is left out.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(cell, forKey: .cell)
            try container.encode(note, forKey: .note)
            if let weight { try container.encode(weight, forKey: .weight) }
        }
    }

    /// The hints name declared strings and doubles, `nil` ones included, and never a custom type
    /// that encodes a string: probed directly, so which objects are sampled does not matter.
    @Test func theHintsNameDeclaredStringsAndDoublesOnly() {
        #expect(FieldTypeProbe.fieldTypes(of: [Reading(id: 1, label: "a", value: 1, limit: nil)])
            == ["label": "string", "value": "real", "limit": "real"])
        #expect(FieldTypeProbe.fieldTypes(of: [Sheet(id: 1, cell: .text("NaN"), note: nil, weight: nil)]) == ["note": "string"])
        #expect(FieldTypeProbe.fieldTypes(of: [Sheet(id: 1, cell: .number(1), note: "x", weight: 2)]) == ["cell": "real", "note": "string", "weight": "real"])
    }

    /// A number a custom type holds stays a number, even where the objects the hints sampled
    /// held only text in that field: converting to a property list keeps `.number(NaN)`.
    @Test func aCustomTypesNumberStaysANumber() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("sheets.json.gz")
        let sheets = (0..<100).map { Sheet(id: $0, cell: $0 == 42 ? .number(.nan) : .text($0 == 7 ? "NaN" : "cell \($0)"), note: $0 == 3 ? "Infinity" : nil, weight: nil) }
        let container = try GraphContainer(for: [Sheet.self], store: .file(url, format: .json))
        container.mainContext.insert(contentsOf: sheets)
        try container.mainContext.save()
        try await container.close()

        // Whether the number's object was among those the hints sampled depends on the table's
        // order: drop a "cell" hint, as when it was not, so that only "string" hints restore.
        var snapshot = try GenericSnapshot.read(from: url)
        snapshot.header.fieldTypes?["Sheet"]?["cell"] = nil
        #expect(snapshot.header.fieldTypes?["Sheet"]?["note"] == "string")
        let unhinted = directory.file("unhinted.json")
        try snapshot.encoded(as: .json).write(to: unhinted)

        let plist = directory.file("sheets.plist")
        try GenericSnapshot.read(from: unhinted).encoded(as: .binaryPropertyList).write(to: plist)
        let converted = try GraphContainer(for: [Sheet.self], store: .file(plist, format: .binaryPropertyList, compression: .none))
        let found = Dictionary(uniqueKeysWithValues: try converted.mainContext.fetch(FetchDescriptor<Sheet>()).map { ($0.id, $0) })
        try await converted.close()
        guard case .number(let number)? = found[42]?.cell else {
            Issue.record("the number became \(String(describing: found[42]?.cell))")
            return
        }
        #expect(number.isNaN)
        #expect(found[3]?.note == "Infinity", "a declared String? keeps its text")
        #expect(found.count == 100)
    }

    struct Tagged: Entity, Equatable {
        var id: String
        var count: Int
        static var entityName: String { "Tagged" }
    }

    struct TaggedV2: Entity, Equatable {
        var id: String
        var count: Int
        var note: String
        static var entityName: String { "Tagged" }
        static let migrations = [SchemaMigration(from: 1, to: 2, [.addField("note", in: "Tagged", default: .string(""))])]
    }

    /// String ids that are non-finite names: a journal record's update and deletion find the
    /// snapshot's object, in a model migration as in a plain open.
    @Test func journalRecordsFindStringIdsThatAreNonFiniteNames() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let source = live.file("tagged.json.gz")
        let first = try GraphContainer(for: [Tagged.self], store: .file(source, format: .json), version: 1)
        first.mainContext.insert(contentsOf: ["a", "Infinity", "-Infinity", "NaN"].map { Tagged(id: $0, count: 0) })
        try first.mainContext.save()
        try await first.close()
        let old = try GraphContainer(for: [Tagged.self], store: .file(source, format: .json, coalescingInterval: .seconds(3600)), version: 1)
        old.mainContext.insert(Tagged(id: "Infinity", count: 1))
        old.mainContext.insert(Tagged(id: "NaN", count: 2))
        try old.mainContext.save()
        old.mainContext.delete(Tagged.self, id: "-Infinity")
        try old.mainContext.save()
        let url = try JournalStoreTests.crashCopy(of: source, into: directory)
        try await old.close()

        let container = try GraphContainer(for: [TaggedV2.self], store: .file(url, format: .json), version: 2, migrations: TaggedV2.migrations)
        let migrated = try container.mainContext.fetch(FetchDescriptor<TaggedV2>(sortBy: [SortDescriptor(\.id)]))
        try await container.close()
        #expect(migrated.map(\.id) == ["Infinity", "NaN", "a"])
        #expect(migrated.map(\.count) == [1, 2, 0])
    }
}
