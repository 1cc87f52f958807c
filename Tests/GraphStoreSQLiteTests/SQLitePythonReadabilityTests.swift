import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// The file is a plain SQLite database that an outside program (Python's `sqlite3`) reads:
/// the expected tables, declared column types, column kinds, metadata and row values.
@Suite struct SQLitePythonReadabilityTests {
    /// Prints the schema, the metadata and some rows of the database `sys.argv[1]` as JSON.
    /// BLOBs are hex strings, REALs are `repr` strings (so `inf` survives JSON).
    private static let inspect = """
        import json, sqlite3, sys
        db = sqlite3.connect(sys.argv[1])
        def show(value):
            if isinstance(value, bytes): return {"blob": value.hex()}
            if isinstance(value, float): return {"real": repr(value)}
            return value
        edge_columns = [c[1] for c in db.execute('PRAGMA table_info("SQLiteEdgeValues")')]
        def typed_row(where):
            select = ", ".join('typeof("%s"), "%s"' % (c, c) for c in edge_columns)
            row = db.execute("SELECT %s FROM SQLiteEdgeValues WHERE %s" % (select, where)).fetchone()
            return {c: [row[2 * i], show(row[2 * i + 1])] for i, c in enumerate(edge_columns)}
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        out = {
            "tables": tables,
            "columns": {t: [[c[1], c[2], c[5]] for c in db.execute('PRAGMA table_info("%s")' % t)] for t in tables},
            "kinds": {"%s.%s" % (e, c): k for e, c, k in db.execute('SELECT entity, "column", kind FROM graphstore_columns')},
            "metadata": {k: v for k, v in db.execute("SELECT key, value FROM graphstore_metadata")},
            "counts": {t: db.execute('SELECT count(*) FROM "%s"' % t).fetchone()[0] for t in tables},
            "tags": [[i, n] for i, n in db.execute("SELECT id, name FROM Tag ORDER BY name")],
            "post": {k: show(v) for k, v in zip([d[0] for d in db.execute("SELECT * FROM Post WHERE id = 1").description],
                                               db.execute("SELECT * FROM Post WHERE id = 1").fetchone())},
            "empties": typed_row("id = ''"),
            "extremes": typed_row("id != ''"),
            "journal": db.execute("PRAGMA journal_mode").fetchone()[0],
            "check": db.execute("PRAGMA integrity_check").fetchone()[0],
        }
        print(json.dumps(out))
        """

    @Test func pythonSeesTablesColumnsAndRows() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let graph = SQLiteTestKit.exampleGraph(posts: 6, notes: 3)
        let container = try SQLiteTestKit.open(url)
        try SQLiteTestKit.insert(graph, into: container)
        container.mainContext.insert(SQLiteEdgeValues.extremes)
        container.mainContext.insert(SQLiteEdgeValues.empties)
        try container.mainContext.save()
        let version = container.version
        try await container.close()
        // Closing checkpoints the write-ahead log: the database is one self-contained file.
        #expect(SQLiteTestKit.entries(of: directory.url) == ["store.sqlite"])

        let json = try #require(try await SQLiteTestKit.pythonJSON(Self.inspect, [url.path]) as? [String: Any])
        let tables = try #require(json["tables"] as? [String])
        #expect(tables == ["Note", "Post", "SQLiteEdgeValues", "Tag", "graphstore_columns", "graphstore_metadata"])
        #expect(json["check"] as? String == "ok")
        #expect(json["journal"] as? String == "wal")

        // Declared types, and `id` the primary key.
        let columns = try #require(json["columns"] as? [String: [[Any]]])
        func declared(_ table: String) -> [String] {
            (columns[table] ?? []).map { "\($0[0]) \($0[1])\(($0[2] as? Int) == 1 ? " PK" : "")" }
        }
        #expect(declared("Post") == [
            "id INTEGER PK", "blogName TEXT", "kind TEXT", "date REAL", "summary TEXT", "body TEXT", "noteCount INTEGER", "tagIDs TEXT",
        ])
        #expect(declared("Note") == ["id TEXT PK", "text TEXT", "createdAt REAL", "modifiedAt REAL", "isArchived INTEGER", "tagIDs TEXT"])
        #expect(declared("Tag") == ["id TEXT PK", "name TEXT"])
        #expect(declared("graphstore_metadata") == ["key TEXT PK", "value "])
        #expect(declared("graphstore_columns").map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == ["entity TEXT", "column TEXT", "kind TEXT"])

        // Column kinds.
        let kinds = try #require(json["kinds"] as? [String: String])
        #expect(kinds["Post.id"] == "integer")
        #expect(kinds["Post.date"] == "date")
        #expect(kinds["Post.kind"] == "text")
        #expect(kinds["Post.tagIDs"] == "json")
        #expect(kinds["Note.id"] == "text")
        #expect(kinds["Note.isArchived"] == "bool")
        #expect(kinds["SQLiteEdgeValues.data"] == "blob")
        #expect(kinds["SQLiteEdgeValues.nan"] == "real")
        #expect(kinds["SQLiteEdgeValues.stamp"] == "date")
        #expect(kinds["SQLiteEdgeValues.nested"] == "json")
        #expect(kinds["SQLiteEdgeValues.uuid"] == "text")
        #expect(kinds.count == (columns["Post"]?.count ?? 0) + (columns["Note"]?.count ?? 0) + (columns["Tag"]?.count ?? 0)
            + (columns["SQLiteEdgeValues"]?.count ?? 0))

        // Metadata.
        let metadata = try #require(json["metadata"] as? [String: Any])
        #expect(metadata["format"] as? String == "GraphStore SQLite")
        #expect(metadata["formatVersion"] as? Int == 1)
        #expect(metadata["modelVersion"] as? String == "1")
        #expect((metadata["storeVersion"] as? NSNumber)?.uint64Value == version)

        // Rows.
        let counts = try #require(json["counts"] as? [String: Int])
        #expect(counts["Post"] == 6 && counts["Note"] == 3 && counts["Tag"] == graph.tags.count && counts["SQLiteEdgeValues"] == 2)
        let tags = try #require(json["tags"] as? [[String]])
        #expect(tags == graph.tags.sorted { $0.name < $1.name }.map { [$0.id.uuidString, $0.name] })
        let post = try #require(json["post"] as? [String: Any])
        let written = try #require(graph.posts.first { $0.id == 1 })
        #expect(post["id"] as? Int == 1)
        #expect(post["kind"] as? String == written.kind.rawValue)
        #expect((post["date"] as? [String: String])?["real"] == "\(written.date.timeIntervalSinceReferenceDate)")
        let tagIDs = try JSONSerialization.jsonObject(with: Data(try #require(post["tagIDs"] as? String).utf8))
        #expect(tagIDs as? [String] == written.tagIDs.map(\.uuidString))

        // Values SQLite would change are BLOBs; the rest have their natural types.
        let empties = try #require(json["empties"] as? [String: [Any]])
        #expect(empties["emptyData"]?.first as? String == "blob")
        #expect(empties["emptyText"]?.first as? String == "text")
        #expect(empties["optionalText"]?.first as? String == "null")
        let row = try #require(json["extremes"] as? [String: [Any]])
        func type(_ column: String) -> String? { row[column]?.first as? String }
        func value(_ column: String) -> Any? { row[column]?.last }
        func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
        #expect(type("int64Min") == "integer" && (value("int64Min") as? NSNumber)?.int64Value == .min)
        #expect(type("int64Max") == "integer" && (value("int64Max") as? NSNumber)?.int64Value == .max)
        #expect((value("uint64Max") as? [String: String])?["blob"] == "ffffffffffffffff")
        #expect((value("negativeZero") as? [String: String])?["blob"] == "8000000000000000")
        #expect((value("nan") as? [String: String])?["blob"] == "7ff8000000000000")
        #expect(type("infinity") == "real" && (value("infinity") as? [String: String])?["real"] == "inf")
        #expect((value("data") as? [String: String])?["blob"] == hex(Data((0...255).map { UInt8($0) })))
        #expect(type("flag") == "integer" && value("flag") as? Int == 1)
        #expect(type("mood") == "text" && value("mood") as? String == "ünï 😀")
        #expect(value("uuid") as? String == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        #expect(type("date") == "real" && (value("date") as? [String: String])?["real"] == "\(SQLiteEdgeValues.extremes.date.timeIntervalSinceReferenceDate)")
        #expect(type("stamp") == "real")
        // A string holding NUL is the BLOB of its UTF-8; one without is TEXT.
        #expect((value("text") as? [String: String])?["blob"] == hex(Data(SQLiteEdgeValues.extremes.text.utf8)))
        #expect(type("nested") == "text")
        let nested = try JSONSerialization.jsonObject(with: Data(try #require(value("nested") as? String).utf8)) as? [String: Any]
        #expect((nested?["values"] as? [Any])?.first as? String == "Infinity")
    }
}
