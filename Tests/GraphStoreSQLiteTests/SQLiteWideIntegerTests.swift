import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// `Int128` and `UInt128` fields in the SQLite store: a value within 64 bits in an `integer`
/// column, as an `Int64` or `UInt64` is; a wider one as the JSON number with every digit, which
/// turns its column to `json` as a field mixing kinds does. A save that returned reads back
/// exactly after the store is reopened, and after a crash from the journal.
@Suite struct SQLiteWideIntegerTests {
    struct Amounts: Codable, Sendable, Equatable {
        var low: Int128
        var high: UInt128?
    }

    struct Wide: Entity, Equatable {
        var id: Int
        var signed: Int128
        var unsigned: UInt128
        var optional: Int128?
        var list: [UInt128]
        var nested: Amounts
    }

    static let beyond64 = Int128(Int64.max) * 1_000 + 7

    /// Values within 64 bits only: every column an `integer` (or `json` for the containers).
    static let narrow: [Wide] = [
        Wide(id: 1, signed: 5, unsigned: 7, optional: nil, list: [1], nested: Amounts(low: -1, high: nil)),
        Wide(
            id: 2, signed: Int128(Int64.min), unsigned: UInt128(UInt64.max), optional: Int128(Int64.max), list: [],
            nested: Amounts(low: 0, high: UInt128(UInt64.max))),
    ]

    /// Values at and beyond the 64-bit extremes, up to the 128-bit ones.
    static let wide: [Wide] = [
        Wide(
            id: 3, signed: .max, unsigned: .max, optional: .min, list: [.max, 0, UInt128(UInt64.max) + 1],
            nested: Amounts(low: -beyond64, high: .max)),
        Wide(
            id: 4, signed: .min, unsigned: UInt128(Int128.max), optional: nil, list: [],
            nested: Amounts(low: beyond64, high: nil)),
        Wide(
            id: 5, signed: Int128(Int64.min) - 1, unsigned: UInt128(UInt64.max) + 1, optional: Int128(Int64.max) + 1, list: [2],
            nested: Amounts(low: Int128(UInt64.max), high: 0)),
    ]

    static func fetch(_ store: StoreConfiguration) async throws -> [Wide] {
        try await StoreRoundTrips.fetch(Wide.self, store)
    }

    static func save(_ objects: [Wide], to store: StoreConfiguration) async throws {
        try await StoreRoundTrips.save(objects, to: store)
    }

    /// The recorded kinds of the table's columns.
    static func kinds(_ url: URL) throws -> [String: String] {
        let database = try DatabaseQueue(path: url.path)
        defer { try? database.close() }
        return try database.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT \"column\", kind FROM graphstore_columns WHERE entity = 'Wide'").map {
                ($0[0] as String, $0[1] as String)
            })
        }
    }

    @Test func valuesWithin64BitsKeepIntegerColumns() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("wide.sqlite")
        try await Self.save(Self.narrow, to: .sqlite(url))
        #expect(try await Self.fetch(.sqlite(url)) == Self.narrow)
        let kinds = try Self.kinds(url)
        #expect(kinds["signed"] == "integer" && kinds["unsigned"] == "integer" && kinds["optional"] == "integer")
        #expect(kinds["list"] == "json" && kinds["nested"] == "json")
    }

    /// Wider values, saved into a store whose columns were made by narrower ones: the store
    /// reopens (twice: the second open reads what the first wrote) with every value.
    @Test func widerValuesReopenExactly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("wide.sqlite")
        try await Self.save(Self.narrow, to: .sqlite(url))
        try await Self.save(Self.wide, to: .sqlite(url))
        #expect(try await Self.fetch(.sqlite(url)) == Self.narrow + Self.wide)
        #expect(try await Self.fetch(.sqlite(url)) == Self.narrow + Self.wide)
        let kinds = try Self.kinds(url)
        #expect(kinds["signed"] == "json" && kinds["unsigned"] == "json" && kinds["optional"] == "json")

        // The columns hold the numbers' digits, as another program reads them.
        let texts = try await SQLiteTestKit.pythonJSON("""
            import json, sqlite3, sys
            rows = sqlite3.connect(sys.argv[1]).execute('SELECT signed, unsigned FROM Wide WHERE id = 3').fetchone()
            print(json.dumps([str(value) for value in rows]))
            """, [url.path]) as? [String]
        #expect(texts == [String(Int128.max), String(UInt128.max)])
    }

    /// A store created by wide values, and one whose first save mixes both.
    @Test(arguments: [false, true])
    func aNewStoreKeepsWideValues(mixed: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("wide.sqlite")
        let objects = mixed ? Self.narrow + Self.wide : Self.wide
        try await Self.save(objects, to: .sqlite(url))
        #expect(try await Self.fetch(.sqlite(url)) == objects)
    }

    /// A crash after the save returned and before the background writer wrote the wide values
    /// into the narrow columns: the journal gives them back, and the store opens.
    @Test func aCrashBeforeTheWriteKeepsWideValues() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("wide.sqlite")
        try await Self.save(Self.narrow, to: .sqlite(url))

        let gate = WriterGate()
        var options = SQLiteStoreOptions()
        options.beforeTransaction = { _ in gate.pass() }
        let live = try GraphContainer(for: [Wide.self], store: .sqlite(url, options: options))
        gate.close()
        // Every object wide, so no object still writes the columns' recorded kind.
        let widened = Self.narrow.map { object in
            var object = object
            object.signed += Int128(Int64.max) * 4
            object.unsigned += UInt128(UInt64.max) * 4
            return object
        }
        live.mainContext.insert(contentsOf: widened)
        try live.mainContext.save()
        await gate.waitUntilReached()
        let crashed = try SQLiteJournalTestKit.crashCopy(of: url, to: directory.file("crashed"))
        gate.open()
        try await live.close()

        #expect(try await Self.fetch(.sqlite(crashed)) == widened)
        #expect(try await Self.fetch(.sqlite(crashed)) == widened)
        #expect(try await Self.fetch(.sqlite(url)) == widened)
    }

    /// The snapshot stores keep the same values; `migrate` carries them to SQLite and back.
    /// (A property list's `UInt128` above `Int128.max` reads, without the app's types, as the
    /// negative number its 16 bytes are, so a migration of one is refused when it is opened as
    /// a `UInt128`: documented, and left out here.)
    @Test(arguments: SnapshotFormat.allCases)
    func migrationCarriesWideValues(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        func signedRange(_ value: UInt128) -> UInt128 { format == .json ? value : min(value, UInt128(Int128.max)) }
        let objects = (Self.narrow + Self.wide).map { object in
            var object = object
            object.unsigned = signedRange(object.unsigned)
            object.list = object.list.map(signedRange)
            object.nested.high = object.nested.high.map(signedRange)
            return object
        }
        let snapshot = directory.file("wide.\(format.fileExtension).gz")
        try await Self.save(objects, to: .file(snapshot, format: format))
        #expect(try await Self.fetch(.file(snapshot, format: format)) == objects)

        let sqlite = directory.file("wide.sqlite")
        try Migration.snapshotToSQLite(from: snapshot, to: sqlite)
        #expect(try await Self.fetch(.sqlite(sqlite)) == objects)
        let back = directory.file("back.\(format.fileExtension).gz")
        try Migration.sqliteToSnapshot(from: sqlite, to: back, format: format)
        #expect(try await Self.fetch(.file(back, format: format)) == objects)
    }
}
