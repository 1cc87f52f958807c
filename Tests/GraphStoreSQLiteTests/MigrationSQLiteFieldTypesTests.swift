import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A SQLite store keeps URLs, decimals and nested values as JSON, which a property list holds
/// differently (dictionaries, native dates and data): the store records the field types the
/// snapshot header carries (`graphstore_metadata`'s `fieldTypes`), so a property list migrated
/// from it holds every value as the app's types read it, and a chain of migrations through
/// every format keeps every value exactly. A store that records none (written before they were
/// recorded) is not written as a property list while a `json` column holds a value: refused,
/// naming the entity, the object and the field, with nothing written.
@Suite struct MigrationSQLiteFieldTypesTests {
    struct Shipment: Codable, Sendable, Equatable {
        var when: Date
        var tracking: URL?
        var weight: Decimal
        var label: String
        var scan: Data
    }

    struct Rec: Entity, Equatable {
        var id: Int
        var price: Decimal
        var link: URL
        var origin: URL?
        var discount: Decimal?
        var history: [Decimal]
        var shipment: Shipment
        var name: String
    }

    static let base = URL(string: "https://a.example/dir/")!

    static let records: [Rec] = [
        Rec(
            id: 1, price: Decimal(string: "12345678901234567890.123456789")!, link: URL(string: "https://b.example/x%20y?z=1")!,
            origin: URL(string: "sub/file.txt", relativeTo: base)!, discount: Decimal(string: "0.1")!,
            history: [Decimal(string: "1.5")!, Decimal(string: "-98765432109876543210.5")!],
            shipment: Shipment(
                when: Date(timeIntervalSinceReferenceDate: 123_456.789_012_345), tracking: URL(string: "NaN", relativeTo: base)!,
                weight: Decimal(string: "3.000000000000000000001")!, label: "NaN", scan: Data([0, 1, 2, 255])),
            name: "Infinity"),
        Rec(
            id: 2, price: 7, link: URL(string: "Infinity")!, origin: nil, discount: nil, history: [],
            shipment: Shipment(when: Date(timeIntervalSinceReferenceDate: -1_000_000_000.25), tracking: nil, weight: 0, label: "-Infinity", scan: Data()), name: "plain"),
    ]

    static func fetch(_ store: StoreConfiguration) async throws -> [Rec] {
        try await StoreRoundTrips.fetch(Rec.self, store)
    }

    static func save(_ objects: [Rec], to store: StoreConfiguration) async throws {
        try await StoreRoundTrips.save(objects, to: store)
    }

    /// The reviewer's case: a store the app wrote, migrated by the tool to a property list,
    /// which `verify` accepts and the app opens with every value.
    @Test func aTypedStoreBecomesAPropertyListTheAppOpens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sqlite = directory.file("w.sqlite")
        try await Self.save(Self.records, to: .sqlite(sqlite))

        let plist = directory.file("w.plist")
        let migrated = try await runProduct("graphstore", ["migrate", sqlite.path, plist.path])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        let verified = try await runProduct("graphstore", ["verify", plist.path])
        #expect(verified.status == 0, "\(verified.standardError)")
        #expect(try await Self.fetch(.file(plist, format: .binaryPropertyList, compression: .none)) == Self.records)

        // Another reader sees the property list's shapes: a decimal's parts, a URL's dictionary,
        // a native date and data inside the nested value, and strings where strings were.
        let shapes = try await SQLiteTestKit.pythonJSON("""
            import json, plistlib, sys
            rec = {o['id']: o for o in plistlib.load(open(sys.argv[1], 'rb'))['entities']['Rec']}[1]
            s = rec['shipment']
            print(json.dumps([type(rec['price']).__name__, ','.join(sorted(rec['link'])), type(s['when']).__name__,
                type(s['scan']).__name__, s['label'], rec['name'], ','.join(sorted(rec['origin'])), type(rec['origin']['base']).__name__]))
            """, [plist.path]) as? [String]
        #expect(shapes == ["dict", "relative", "datetime", "bytes", "NaN", "Infinity", "base,relative", "dict"])

        // The property list converted on to JSON keeps the decimal's digits.
        let json = directory.file("w.json")
        let converted = try await runProduct("graphstore", ["migrate", plist.path, json.path])
        #expect(converted.status == 0, "\(converted.standardError)")
        #expect(try await Self.fetch(.file(json, compression: .none)) == Self.records)
    }

    /// Dictionaries whose keys differ from object to object: the recorded field types name
    /// their values for all keys (`prices{}`), so the property list holds each value as the
    /// app reads it, whichever objects the store sampled.
    @Test func aStoresDictionariesBecomeAPropertyListTheAppOpens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sqlite = directory.file("ledgers.sqlite")
        try await StoreRoundTrips.save(LedgerModels.ledgers, to: .sqlite(sqlite))
        let plist = directory.file("ledgers.plist.gz")
        try Migration.sqliteToSnapshot(from: sqlite, to: plist, format: .binaryPropertyList)
        #expect(try await StoreRoundTrips.fetch(LedgerModels.Ledger.self, .file(plist, format: .binaryPropertyList)) == LedgerModels.ledgers)
    }

    /// src.json → a.sqlite → b.plist.gz → c.json: the app opens each with every value, and the
    /// last holds what the first does, digit for digit.
    @Test func aChainThroughEveryFormatKeepsEveryValue() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("src.json")
        try await Self.save(Self.records, to: .file(source, compression: .none))
        let sqlite = directory.file("a.sqlite")
        try Migration.snapshotToSQLite(from: source, to: sqlite)
        #expect(try await Self.fetch(.sqlite(sqlite)) == Self.records)
        let plist = directory.file("b.plist.gz")
        try Migration.sqliteToSnapshot(from: sqlite, to: plist, format: .binaryPropertyList)
        #expect(try await Self.fetch(.file(plist, format: .binaryPropertyList)) == Self.records)
        let final = directory.file("c.json")
        try Migration.snapshotToSQLite(from: plist, to: directory.file("d.sqlite"))
        #expect(try await Self.fetch(.sqlite(directory.file("d.sqlite"))) == Self.records)
        try GenericSnapshot.read(from: plist).write(to: final, format: .json, compression: .none)
        #expect(try await Self.fetch(.file(final, compression: .none)) == Self.records)

        #expect(MigrationTestKit.canonical(try GenericSnapshot.read(from: final)) == MigrationTestKit.canonical(try GenericSnapshot.read(from: source)))
        let digits = try await SQLiteTestKit.pythonJSON("""
            import decimal, json, sys
            def prices(path):
                document = json.load(open(path), parse_float=decimal.Decimal)
                return {str(o['id']): [str(o['price'])] + [str(h) for h in o['history']] + [str(o['shipment']['weight'])]
                    for o in document['entities']['Rec']}
            print(json.dumps([prices(sys.argv[1]), prices(sys.argv[2])]))
            """, [source.path, final.path]) as? [[String: [String]]]
        #expect(digits?.first?["1"] == ["12345678901234567890.123456789", "1.5", "-98765432109876543210.5", "3.000000000000000000001"])
        #expect(digits?.first == digits?.last)
        let header = try GenericSnapshot.read(from: final).header
        #expect(header.fieldTypes?["Rec"]?["price"] == "decimal" && header.fieldTypes?["Rec"]?["shipment.tracking"] == "url")
    }

    /// The typed store records the field types its objects hold; another program reads them.
    @Test func theTypedStoreRecordsItsFieldTypes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sqlite = directory.file("w.sqlite")
        try await Self.save(Self.records, to: .sqlite(sqlite))
        let recorded = try await SQLiteTestKit.pythonJSON("""
            import json, sqlite3, sys
            metadata = dict(sqlite3.connect(sys.argv[1]).execute('SELECT key, value FROM graphstore_metadata').fetchall())
            print(json.dumps({'version': metadata['fieldTypesVersion'], 'types': json.loads(metadata['fieldTypes'])}))
            """, [sqlite.path]) as? [String: Any]
        #expect(recorded?["version"] as? Int == SnapshotHeaderV1.currentFieldTypesVersion)
        let types = (recorded?["types"] as? [String: [String: String]])?["Rec"]
        #expect(types?["price"] == "decimal" && types?["discount"] == "decimal" && types?["history[]"] == "decimal")
        #expect(types?["link"] == "url" && types?["origin"] == "url" && types?["shipment.tracking"] == "url")
        #expect(types?["shipment.when"] == "date" && types?["shipment.scan"] == "data" && types?["shipment.label"] == "string")
    }

    /// A store whose metadata records no field types (as one written before they were):
    /// JSON as before, a property list refused while a `json` column holds a value.
    @Test func aStoreWithoutFieldTypesIsNotGuessedIntoAPropertyList() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sqlite = directory.file("old.sqlite")
        try await Self.save(Self.records, to: .sqlite(sqlite))
        let database = try DatabaseQueue(path: sqlite.path)
        try await database.write { db in
            try db.execute(sql: "DELETE FROM graphstore_metadata WHERE key IN ('fieldTypes', 'fieldTypesVersion')")
        }
        try database.close()

        let plist = directory.file("old.plist")
        let error = SQLiteTestKit.storeError {
            try Migration.sqliteToSnapshot(from: sqlite, to: plist, format: .binaryPropertyList, compression: .none)
        }
        guard case .codingFailed(let path, let entity, let id, let reason)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(path == plist.path && entity == "Rec" && id == "1")
        #expect(reason.hasPrefix("discount: ") && reason.contains("JSON"), "\(reason)")
        #expect(!FileManager.default.fileExists(atPath: plist.path))

        let tool = try await runProduct("graphstore", ["migrate", sqlite.path, plist.path])
        #expect(tool.status != 0 && tool.standardError.contains("Rec") && tool.standardError.contains("discount"), "\(tool.standardError)")
        #expect(!FileManager.default.fileExists(atPath: plist.path))

        let json = directory.file("old.json")
        try Migration.sqliteToSnapshot(from: sqlite, to: json, format: .json, compression: .none)
        #expect(try await Self.fetch(.file(json, compression: .none)) == Self.records)
        // The app opening the store records the types, and the property list can then be made.
        #expect(try await Self.fetch(.sqlite(sqlite)) == Self.records)
        try Migration.sqliteToSnapshot(from: sqlite, to: plist, format: .binaryPropertyList, compression: .none)
        #expect(try await Self.fetch(.file(plist, format: .binaryPropertyList, compression: .none)) == Self.records)
    }
}
