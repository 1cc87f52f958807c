import ExampleModel
import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A migrated SQLite file is the file the typed store writes for the same graph: the same
/// metadata, tables, column kinds and stored values; and Python's `sqlite3` reads it.
@Suite struct MigrationFileFormatTests {
    /// Everything in a GraphStore SQLite file that must match: metadata, column kinds, and each
    /// row's values by id (`json` columns parsed, since key order is free).
    struct Layout: Equatable, CustomStringConvertible {
        var metadata: [String: DatabaseValue] = [:]
        var kinds: [String: String] = [:]
        var declaredTypes: [String: String] = [:]
        var rows: [String: [String: String]] = [:]

        var description: String { "metadata \(metadata), kinds \(kinds.count), rows \(rows.count)" }

        static func read(_ url: URL) throws -> Layout {
            var configuration = Configuration()
            configuration.readonly = true
            let database = try DatabaseQueue(path: url.path, configuration: configuration)
            defer { try? database.close() }
            return try database.read { db in
                var layout = Layout()
                for row in try Row.fetchAll(db, sql: "SELECT key, value FROM graphstore_metadata") {
                    layout.metadata[row[0]] = row[1] as DatabaseValue
                }
                // The lineage names one store: every file has its own, so it is compared only
                // for being there.
                let lineage = layout.metadata.removeValue(forKey: "lineage")
                layout.metadata["lineage"] = (lineage.flatMap { String.fromDatabaseValue($0) }.flatMap(UUID.init(uuidString:)) != nil).databaseValue
                for row in try Row.fetchAll(db, sql: "SELECT entity, \"column\", kind FROM graphstore_columns") {
                    layout.kinds["\(row[0] as String).\(row[1] as String)"] = row[2]
                }
                let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'graphstore_%'")
                for table in tables {
                    for column in try db.columns(in: table) {
                        layout.declaredTypes["\(table).\(column.name)"] = column.type + (column.primaryKeyIndex > 0 ? " PK" : "")
                    }
                    for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedDatabaseIdentifier)") {
                        var values: [String: String] = [:]
                        for (column, value) in row {
                            values[column] = describe(value, isJSON: layout.kinds["\(table).\(column)"] == "json")
                        }
                        layout.rows["\(table) \(values["id"] ?? "?")"] = values
                    }
                }
                return layout
            }
        }

        /// The stored value with its storage class; JSON text parsed, in canonical form.
        static func describe(_ value: DatabaseValue, isJSON: Bool) -> String {
            switch value.storage {
            case .null: return "NULL"
            case .int64(let number): return "INTEGER \(number)"
            case .double(let number): return "REAL \(number.bitPattern)"
            case .blob(let bytes): return "BLOB \(bytes.base64EncodedString())"
            case .string(let text):
                guard isJSON, let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed) else {
                    return "TEXT \(text)"
                }
                return "JSON \(canonicalJSON(parsed))"
            }
        }

        /// JSON values with sorted keys. JSON does not say whether `9223372036854775808` and
        /// `9.223372036854776e+18` are an integer or a double, and a decoder reads both as the
        /// same `Double`: a whole double is written as the integer it equals, so both compare equal.
        static func canonicalJSON(_ value: Any) -> String {
            switch value {
            case let fields as [String: Any]:
                return "{" + fields.keys.sorted().map { "\($0.unicodeScalars.map(\.value)):\(canonicalJSON(fields[$0]!))" }.joined(separator: ",") + "}"
            case let values as [Any]:
                return "[" + values.map(canonicalJSON).joined(separator: ",") + "]"
            case let text as String:
                return "s\(text.unicodeScalars.map(\.value))"
            case let number as NSNumber:
                let type = String(cString: number.objCType)
                guard type == "d" || type == "f" else {
                    // Upper-case Objective-C type codes are the unsigned integers.
                    return type == type.uppercased() ? "\(number.uint64Value)" : "\(number.int64Value)"
                }
                let double = number.doubleValue
                if double == double.rounded(), !(double == 0 && double.sign == .minus) {
                    if let signed = Int64(exactly: double) { return "\(signed)" }
                    if let unsigned = UInt64(exactly: double) { return "\(unsigned)" }
                }
                return "d\(double.bitPattern)"
            default:
                return "\(value)"
            }
        }
    }

    /// From a property list (whose doubles, dates and data are native) the migrated file holds
    /// exactly the typed store's values.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func migratedFileEqualsTheTypedStoresFile(seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let snapshot = directory.file("store.plist.gz")
        try await MigrationTestKit.write(MigrationTestKit.randomGraph(seed: seed), to: .file(snapshot, format: .binaryPropertyList))
        // The typed store gets what the property list holds (its encoder writes one object for
        // equal values, so -0.0 may read back as 0.0 and 0.0 as -0.0).
        let typed = directory.file("typed.sqlite")
        try await MigrationTestKit.write(try await MigrationTestKit.read(.file(snapshot, format: .binaryPropertyList)), to: .sqlite(typed))
        let migrated = directory.file("migrated.sqlite")
        try Migration.snapshotToSQLite(from: snapshot, to: migrated)

        let expected = try Layout.read(typed)
        let actual = try Layout.read(migrated)
        #expect(actual.metadata == expected.metadata)
        #expect(actual.kinds == expected.kinds)
        #expect(actual.declaredTypes == expected.declaredTypes)
        #expect(actual.rows.count == expected.rows.count)
        for (key, row) in expected.rows {
            let migratedRow = try #require(actual.rows[key], "\(key)")
            #expect(migratedRow.keys.sorted() == row.keys.sorted(), "\(key)")
            for (column, value) in row {
                #expect(migratedRow[column] == value, "\(key).\(column)")
            }
        }
    }

    /// From JSON the kinds are the same too (the header's `real` field types say which numbers
    /// are doubles); a `Float` is stored as the double its decimal text reads as, which the
    /// typed store decodes to the same `Float`.
    @Test func fromJSONTheKindsAreTheTypedStoresKinds() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let graph = MigrationTestKit.randomGraph(seed: 4)
        let typed = directory.file("typed.sqlite")
        try await MigrationTestKit.write(graph, to: .sqlite(typed))
        let snapshot = directory.file("store.json.gz")
        try await MigrationTestKit.write(graph, to: .file(snapshot))
        let migrated = directory.file("migrated.sqlite")
        try Migration.snapshotToSQLite(from: snapshot, to: migrated)
        // The typed snapshot's header names its top-level doubles (and only those).
        let types = try #require(try GenericSnapshot.read(from: snapshot).header.fieldTypes?["SQLiteEdgeValues"])
        #expect(types["double"] == "real" && types["float"] == "real" && types["nan"] == "real")
        #expect(types["nested.when"] == "date" && types["nested.values[]"] == nil && types["int64Min"] == nil)

        let expected = try Layout.read(typed)
        let actual = try Layout.read(migrated)
        #expect(actual.metadata == expected.metadata)
        #expect(actual.kinds == expected.kinds)
        #expect(actual.declaredTypes == expected.declaredTypes)
        let floatColumns: Set<String> = ["float", "floatNegativeZero"]
        for (key, row) in expected.rows {
            let migratedRow = try #require(actual.rows[key], "\(key)")
            for (column, value) in row where !floatColumns.contains(column) || !key.hasPrefix("SQLiteEdgeValues") {
                #expect(migratedRow[column] == value, "\(key).\(column)")
            }
        }
    }

    /// Python's `sqlite3` sees the tables, declared types, kinds, metadata and rows.
    @Test func pythonReadsTheMigratedFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let graph = SQLiteTestKit.exampleGraph(posts: 8, notes: 4)
        let snapshot = directory.file("store.json.gz")
        try await MigrationTestKit.write(MigrationTestKit.Graph(tags: graph.tags, posts: graph.posts, notes: graph.notes), to: .file(snapshot))
        let sqlite = directory.file("store.sqlite")
        try Migration.snapshotToSQLite(from: snapshot, to: sqlite)
        #expect(MigrationTestKit.files(in: directory.url) == ["store.json.gz", "store.sqlite"])

        let script = """
            import json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
            print(json.dumps({
                "tables": tables,
                "columns": {t: sorted("%s %s%s" % (c[1], c[2], " PK" if c[5] else "") for c in db.execute('PRAGMA table_info("%s")' % t)) for t in tables},
                "kinds": {"%s.%s" % (e, c): k for e, c, k in db.execute('SELECT entity, "column", kind FROM graphstore_columns')},
                "metadata": {k: v for k, v in db.execute("SELECT key, value FROM graphstore_metadata")},
                "counts": {t: db.execute('SELECT count(*) FROM "%s"' % t).fetchone()[0] for t in tables},
                "post": list(db.execute("SELECT id, blogName, kind, date, summary, body, noteCount, tagIDs FROM Post WHERE id = 1").fetchone()),
                "journal": db.execute("PRAGMA journal_mode").fetchone()[0],
                "check": db.execute("PRAGMA integrity_check").fetchone()[0],
            }))
            """
        let json = try #require(try await SQLiteTestKit.pythonJSON(script, [sqlite.path]) as? [String: Any])
        #expect(json["tables"] as? [String] == ["Note", "Post", "Tag", "graphstore_columns", "graphstore_metadata"])
        #expect(json["check"] as? String == "ok")
        #expect(json["journal"] as? String == "wal")
        let columns = try #require(json["columns"] as? [String: [String]])
        #expect(columns["Post"] == [
            "blogName TEXT", "body TEXT", "date REAL", "id INTEGER PK", "kind TEXT", "noteCount INTEGER", "summary TEXT", "tagIDs TEXT",
        ])
        #expect(columns["Note"] == ["createdAt REAL", "id TEXT PK", "isArchived INTEGER", "modifiedAt REAL", "tagIDs TEXT", "text TEXT"])
        #expect(columns["Tag"] == ["id TEXT PK", "name TEXT"])
        let kinds = try #require(json["kinds"] as? [String: String])
        #expect(kinds == [
            "Post.id": "integer", "Post.blogName": "text", "Post.kind": "text", "Post.date": "date", "Post.summary": "text",
            "Post.body": "text", "Post.noteCount": "integer", "Post.tagIDs": "json",
            "Note.id": "text", "Note.text": "text", "Note.createdAt": "date", "Note.modifiedAt": "date", "Note.isArchived": "bool",
            "Note.tagIDs": "json", "Tag.id": "text", "Tag.name": "text",
        ])
        let metadata = try #require(json["metadata"] as? [String: Any])
        #expect(metadata["format"] as? String == "GraphStore SQLite")
        #expect(metadata["formatVersion"] as? Int == 1)
        #expect(metadata["modelVersion"] as? String == "1")
        #expect(metadata["storeVersion"] as? Int == 1)
        #expect(metadata["dateEncoding"] as? String == "secondsSince2001")
        // The snapshot header's field types, as JSON text.
        #expect(metadata["fieldTypesVersion"] as? Int == SnapshotHeaderV1.currentFieldTypesVersion)
        let fieldTypes = try JSONSerialization.jsonObject(with: Data(try #require(metadata["fieldTypes"] as? String).utf8)) as? [String: [String: String]]
        #expect(fieldTypes == (try GenericSnapshot.read(from: snapshot).header.fieldTypes))
        #expect(json["counts"] as? [String: Int] == ["Post": 8, "Note": 4, "Tag": graph.tags.count, "graphstore_columns": 16, "graphstore_metadata": 8])
        let post = try #require(json["post"] as? [Any])
        let written = try #require(graph.posts.first { $0.id == 1 })
        #expect(post[0] as? Int == 1)
        #expect(post[1] as? String == written.blogName)
        #expect(post[2] as? String == written.kind.rawValue)
        #expect((post[3] as? Double)?.bitPattern == written.date.timeIntervalSinceReferenceDate.bitPattern)
        #expect(post[4] as? String == written.summary)
        #expect(post[5] as? String == written.body)
        #expect(post[6] as? Int == written.noteCount)
        let tagIDs = try JSONSerialization.jsonObject(with: Data(try #require(post[7] as? String).utf8))
        #expect(tagIDs as? [String] == written.tagIDs.map(\.uuidString))
    }
}
