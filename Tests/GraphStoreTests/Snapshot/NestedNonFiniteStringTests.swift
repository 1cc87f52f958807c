import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// The `"NaN"` strings of `NonFiniteStringTests`, in nested values and arrays: the type hints
/// (``SnapshotHeaderV1/fieldTypesVersion`` 4) name a nested field or an array's elements
/// declared `String`, so generic reading, conversion to a property list and a migration step
/// keep such a string a string there.
@Suite struct NestedNonFiniteStringTests {
    struct Place: Codable, Equatable {
        var city: String
        var altitude: Double
    }

    struct Station: Entity, Equatable {
        var id: Int
        var place: Place
        var labels: [String]
        var levels: [Double]
        static var entityName: String { "Station" }
    }

    /// Version 2: the city in capitals, which fails on a city that is not a string.
    struct CappedStation: Entity {
        var id: Int
        var place: Place
        var labels: [String]
        var levels: [Double]
        static var entityName: String { "Station" }

        static let migrations = [SchemaMigration(from: 1, to: 2, [
            .transform("Station") { object in
                guard case .object(var place)? = object["place"], case .string(let city)? = place["city"] else {
                    throw NonFiniteModels.NotAString(value: "\(object["place"] ?? .null)")
                }
                guard case .array(let labels)? = object["labels"], labels.allSatisfy({ if case .string = $0 { true } else { false } }) else {
                    throw NonFiniteModels.NotAString(value: "\(object["labels"] ?? .null)")
                }
                place["city"] = .string(city.uppercased())
                object["place"] = .object(place)
            },
        ])]
    }

    /// A hundred stations: the first three in cities named as non-finite doubles, with such
    /// labels beside ordinary ones, and altitudes and levels that are those doubles.
    static let stations: [Station] = (0..<100).map { id in
        let names = ["NaN", "Infinity", "-Infinity"]
        let values: [Double] = [.nan, .infinity, -.infinity]
        return Station(
            id: id,
            place: Place(city: id < 3 ? names[id] : "city \(id)", altitude: id < 3 ? values[id] : Double(id)),
            labels: id < 3 ? [names[id], "plain", names[(id + 1) % 3]] : ["station \(id)"],
            levels: id < 3 ? [values[id], 1.5] : [])
    }

    /// Whether `found` holds `expected`'s values, a NaN matching a NaN, in any order.
    static func match(_ found: [Station], _ expected: [Station], city: (String) -> String = { $0 }) -> Bool {
        func same(_ a: Double, _ b: Double) -> Bool { a == b || (a.isNaN && b.isNaN) }
        let found = found.sorted { $0.id < $1.id }
        return found.count == expected.count && zip(found, expected).allSatisfy { found, expected in
            found.id == expected.id && found.place.city == city(expected.place.city) && same(found.place.altitude, expected.place.altitude)
                && found.labels == expected.labels && found.levels.count == expected.levels.count
                && zip(found.levels, expected.levels).allSatisfy(same)
        }
    }

    static func writeJSONStore(_ url: URL) async throws {
        let container = try GraphContainer(for: [Station.self], store: .file(url, format: .json))
        container.mainContext.insert(contentsOf: stations)
        try container.mainContext.save()
        try await container.close()
    }

    @Test func theHintsNameNestedStringsAndArrayElements() {
        let types = FieldTypeProbe.fieldTypes(of: [Station(id: 1, place: Place(city: "a", altitude: 1), labels: [], levels: [])])
        #expect(types == ["place.city": "string", "labels[]": "string"], "an empty [String] still names its elements; nested doubles are not hinted")
    }

    struct Attributes: Entity {
        var id: Int
        var attributes: [String: String]
        var names: [String: [String]]
        static var entityName: String { "Attributes" }
    }

    /// A dictionary's keys are data, not fields: its string values are named at one path for
    /// all keys, not per key.
    @Test func aDictionarysStringsAreNamedForAllKeys() {
        let types = FieldTypeProbe.fieldTypes(of: [Attributes(id: 1, attributes: ["colour": "red"], names: ["a": ["b"]])])
        #expect(types == ["attributes{}": "string", "names{}[]": "string"])
    }

    /// A value a custom encoding writes as text in one object and as a number in another.
    enum Cell: Codable {
        case text(String)
        case number(Double)

        enum CodingKeys: String, CodingKey { case value }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let number = try? container.decode(Double.self, forKey: .value) { self = .number(number) } else { self = .text(try container.decode(String.self, forKey: .value)) }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .text(let text): try container.encode(text, forKey: .value)
            case .number(let number): try container.encode(number, forKey: .value)
            }
        }
    }

    struct Sheet: Entity {
        var id: Int
        var cell: Cell
        static var entityName: String { "Sheet" }
    }

    /// A nested place where a sampled object holds a number is never named `string`, whichever
    /// object the probe meets first.
    @Test func aNestedPlaceHoldingANumberIsNotNamed() {
        let text = Sheet(id: 1, cell: .text("NaN")), number = Sheet(id: 2, cell: .number(2))
        #expect(FieldTypeProbe.fieldTypes(of: [text]) == ["cell.value": "string"])
        #expect(FieldTypeProbe.fieldTypes(of: [text, number]) == [:])
        #expect(FieldTypeProbe.fieldTypes(of: [number, text]) == [:])
    }

    @Test func genericReadingRestoresNestedStrings() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("stations.json.gz")
        try await Self.writeJSONStore(url)
        let snapshot = try GenericSnapshot.read(from: url)
        #expect(snapshot.header.fieldTypesVersion == SnapshotHeaderV1.currentFieldTypesVersion)
        let objects = Dictionary(uniqueKeysWithValues: snapshot.entities[0].objects.map { ($0["id"] ?? .null, $0) })
        #expect(objects[.integer(1)]?["place"]?["city"] == .string("Infinity"))
        #expect(objects[.integer(1)]?["place"]?["altitude"] == .double(.infinity))
        #expect(objects[.integer(2)]?["labels"] == .array([.string("-Infinity"), .string("plain"), .string("NaN")]))
        #expect(objects[.integer(1)]?["levels"] == .array([.double(.infinity), .double(1.5)]))
    }

    @Test func convertingToAPropertyListKeepsEveryValue() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("stations.json.gz")
        try await Self.writeJSONStore(url)
        let plist = directory.file("stations.plist")
        try GenericSnapshot.read(from: url).encoded(as: .binaryPropertyList).write(to: plist)

        let container = try GraphContainer(for: [Station.self], store: .file(plist, format: .binaryPropertyList, compression: .none))
        #expect(Self.match(try container.mainContext.fetch(FetchDescriptor<Station>()), Self.stations))
        try await container.close()
    }

    /// A migration step sees the nested strings, in the snapshot and in the records of the
    /// journal a crash left (the three with non-finite names saved last, one per save).
    @Test(arguments: [false, true])
    func aMigrationStepSeesNestedStrings(crashed: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await NonFiniteStringTests.storeWithLateSaves(Self.stations, format: .json, crashed: crashed, in: directory)

        let container = try GraphContainer(for: [CappedStation.self], store: .file(url, format: .json), version: 2, migrations: CappedStation.migrations)
        let migrated = try container.mainContext.fetch(FetchDescriptor<CappedStation>())
        try await container.close()
        let asStations = migrated.map { Station(id: $0.id, place: $0.place, labels: $0.labels, levels: $0.levels) }
        #expect(Self.match(asStations, Self.stations) { $0.uppercased() })
    }
}
