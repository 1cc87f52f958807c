import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// Numbers a double holds only rounded (integers beyond 64 bits, as `Int128` and `UInt128`
/// write them, and long decimals without a type hint) in a snapshot migrated to SQLite: their
/// column is a `json` one holding every digit, and the snapshot migrated back holds them as
/// they were; where the header's field types make the column a `real` or `date` one, the
/// migration is refused naming the entity, the object and the field, and nothing is written.
@Suite struct MigrationWideNumberTests {
    static let wide = "123456789012345678901234567890"
    static let uint128Max = String(UInt128.max)
    static let longDecimal = "0.12345678901234567890123"

    /// A JSON snapshot of the entity `Rec` whose objects are `objects` (JSON texts), with
    /// `fieldTypes` (a JSON object) in its header.
    static func snapshot(_ objects: [String], fieldTypes: String = "null") -> Data {
        Data("""
            {"header":{"format":"GraphStore","formatVersion":1,"modelVersion":"1","savedAt":0,"storeVersion":1,\
            "counts":{"Rec":\(objects.count)},"dateEncoding":"secondsSince2001","fieldTypes":\(fieldTypes)},\
            "entities":{"Rec":[\(objects.joined(separator: ","))]}}
            """.utf8)
    }

    static let objects = [
        #"{"id":1,"f":\#(wide),"g":\#(longDecimal),"h":\#(uint128Max),"n":1}"#,
        #"{"id":2,"f":5,"g":0.5,"h":-\#(uint128Max),"n":2.5}"#,
        #"{"id":3,"f":-\#(wide)}"#,
    ]

    @Test func wideNumbersKeepEveryDigitThroughSQLite() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("wide.json")
        try Self.snapshot(Self.objects).write(to: source)
        let sqlite = directory.file("wide.sqlite")
        try Migration.snapshotToSQLite(from: source, to: sqlite)

        // Another program reads the columns: JSON text with every digit, and their kinds.
        let stored = try await SQLiteTestKit.pythonJSON("""
            import json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            kinds = dict(db.execute("SELECT \\"column\\", kind FROM graphstore_columns WHERE entity = 'Rec'").fetchall())
            rows = {str(row[0]): [str(value) for value in row[1:]] for row in db.execute('SELECT id, f, g, h, n FROM Rec')}
            print(json.dumps({'kinds': kinds, 'rows': rows}))
            """, [sqlite.path]) as? [String: Any]
        #expect(stored?["kinds"] as? [String: String] == ["id": "integer", "f": "json", "g": "json", "h": "json", "n": "real"])
        let rows = stored?["rows"] as? [String: [String]]
        #expect(rows?["1"] == [Self.wide, Self.longDecimal, Self.uint128Max, "1.0"])
        #expect(rows?["2"] == ["5", "0.5", "-" + Self.uint128Max, "2.5"])
        #expect(rows?["3"] == ["-" + Self.wide, "None", "None", "None"])

        // And back to a snapshot: the same numbers, read exactly by Python's `json`.
        let back = directory.file("back.json")
        try Migration.sqliteToSnapshot(from: sqlite, to: back, format: .json, compression: .none)
        let numbers = try await SQLiteTestKit.pythonJSON("""
            import decimal, json, sys
            document = json.load(open(sys.argv[1]), parse_float=decimal.Decimal)
            print(json.dumps({str(o['id']): [str(o.get(k)) for k in 'fgh'] for o in document['entities']['Rec']}))
            """, [back.path]) as? [String: [String]]
        #expect(numbers?["1"] == [Self.wide, Self.longDecimal, Self.uint128Max])
        #expect(numbers?["2"] == ["5", "0.5", "-" + Self.uint128Max])
        #expect(numbers?["3"] == ["-" + Self.wide, "None", "None"])
    }

    /// A `real` (or `date`) field type says the field is a `Double` (or `Date`), which holds no
    /// such number: refused, nothing written.
    @Test(arguments: ["real", "date"])
    func aWideNumberUnderADoubleHintIsRefused(hint: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("wide.json")
        try Self.snapshot([#"{"id":1,"r":2.5}"#, #"{"id":7,"r":\#(Self.wide)}"#], fieldTypes: #"{"Rec":{"r":"\#(hint)"}}"#).write(to: source)
        let sqlite = directory.file("wide.sqlite")
        let error = SQLiteTestKit.storeError { try Migration.snapshotToSQLite(from: source, to: sqlite) }
        guard case .codingFailed(let path, let entity, let id, let reason)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(path == sqlite.path && entity == "Rec" && id == "7")
        #expect(reason.hasPrefix("r: ") && reason.contains(Self.wide) && reason.contains("\(hint) column"), "\(reason)")
        #expect(!FileManager.default.fileExists(atPath: sqlite.path))
        #expect(SQLiteTestKit.entries(of: directory.url) == ["wide.json"])
    }
}
