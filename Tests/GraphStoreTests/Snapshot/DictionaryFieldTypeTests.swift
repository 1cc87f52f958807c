import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Dictionaries hold values whose shape differs between JSON and a property list (dates, data,
/// URLs, decimals, and strings JSON writes for non-finite doubles) under keys that differ from
/// object to object. The type hints name a dictionary's values at one path for all its keys
/// (`prices{}`), so a conversion between the formats reaches the values of keys no sampled
/// object holds, and of dictionaries empty in every sampled object.
@Suite struct DictionaryFieldTypeTests {
    typealias Ledger = LedgerModels.Ledger

    @Test func anEmptyDictionaryNamesItsValuesType() {
        let empty = Ledger(id: 0, prices: [:], visits: [:], links: [:], notes: [:], blobs: [:], rates: [:])
        #expect(FieldTypeProbe.fieldTypes(of: [empty]) == [
            "prices{}": "decimal", "visits{}": "date", "links{}": "url", "notes{}": "string", "blobs{}[]": "data",
            "rates{}": "decimal",
        ])
    }

    /// A dictionary with keys of another type is an array of keys and values: nothing in it is
    /// named, since a key and a value share the path (a hint there would turn the keys into
    /// dates in a conversion).
    @Test func aDictionaryWrittenAsAnArrayIsNotNamed() throws {
        struct Visits: Entity {
            var id: Int
            var byPlace: [UUID: Date]
            static var entityName: String { "Visits" }
        }
        let visits = Visits(id: 1, byPlace: [UUID(): Date(timeIntervalSinceReferenceDate: 1)])
        let data = try JSONEncoder().encode(visits.byPlace)
        #expect(try JSONSerialization.jsonObject(with: data) is [Any], "the encoding this test relies on")
        #expect(FieldTypeProbe.fieldTypes(of: [visits]) == [:])
    }

    @Test(arguments: SnapshotFormat.allCases)
    func aConversionReachesEveryKey(from format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("ledgers.\(format.fileExtension).gz")
        let written = try GraphContainer(for: [Ledger.self], store: .file(source, format: format))
        written.mainContext.insert(contentsOf: LedgerModels.ledgers)
        try written.mainContext.save()
        try await written.close()

        let other: SnapshotFormat = format == .json ? .binaryPropertyList : .json
        let converted = directory.file("converted.\(other.fileExtension).gz")
        try GenericSnapshot.read(from: source).write(to: converted, format: other, compression: .gzip)
        let container = try GraphContainer(for: [Ledger.self], store: .file(converted, format: other))
        #expect(try container.mainContext.fetch(FetchDescriptor<Ledger>(sortBy: [SortDescriptor(\.id)])) == LedgerModels.ledgers)
        try await container.close()
    }

    enum Slot: Int, Codable, Hashable, Sendable { case a, b }

    struct Coded: Entity, Equatable {
        var id: Int
        var byCode: [Int8: Date]
        var bySlot: [Slot: Date]
    }

    /// Dictionaries written as arrays of keys and values: their dates stay numbers in the
    /// converted property list, which the app reads (its header says the values may be in
    /// their JSON shapes), and back to JSON.
    @Test func dictionariesWrittenAsArraysConvertBothWays() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let objects = (0..<10).map { (n: Int) -> Coded in
            let byCode: [Int8: Date] = [Int8(n): Date(timeIntervalSinceReferenceDate: Double(n) + 0.5)]
            let bySlot: [Slot: Date] = n % 2 == 0 ? [.a: Date(timeIntervalSinceReferenceDate: 1e9 + Double(n))] : [:]
            return Coded(id: n, byCode: byCode, bySlot: bySlot)
        }
        let source = directory.file("coded.json")
        try await StoreRoundTrips.save(objects, to: .file(source, format: .json, compression: .none))
        let plist = directory.file("coded.plist")
        try GenericSnapshot.read(from: source).write(to: plist, format: .binaryPropertyList, compression: .none)
        #expect(try await StoreRoundTrips.fetch(Coded.self, .file(plist, format: .binaryPropertyList, compression: .none)) == objects)
        let json = directory.file("back.json")
        try GenericSnapshot.read(from: plist).write(to: json, format: .json, compression: .none)
        #expect(try await StoreRoundTrips.fetch(Coded.self, .file(json, format: .json, compression: .none)) == objects)
    }

    /// Hints of a file written before (field-types version 4) named the keys the sample held:
    /// they still convert those keys.
    @Test func aKeyPathOfAnOlderHeaderStillConverts() throws {
        let object = SnapshotValue.object(["id": .integer(1), "visits": .object(["3": .double(5)])])
        let paths = SnapshotValue.typedPaths(["visits.3": "date"])
        #expect(try object.typed(by: paths)["visits"]?["3"] == .date(Date(timeIntervalSinceReferenceDate: 5)))
    }

    @Test func pathComponentsKeepTheFirstLevelWithTheKey() {
        #expect(SnapshotValue.pathComponents("a{}[]{}.b[]") == ["a{}", "[]", "{}", "b[]"])
        #expect(SnapshotValue.pathComponents("grid[][]") == ["grid[]", "[]"])
        #expect(SnapshotValue.pathComponents("place.city") == ["place", "city"])
    }
}
