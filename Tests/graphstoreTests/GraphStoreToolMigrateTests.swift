import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// `graphstore migrate`, and `inspect` / `verify` / `dump` on SQLite files, run as a process:
/// output, exit status, and the files the typed containers then open.
@Suite struct GraphStoreToolMigrateTests {
    /// Every post, note and tag a container on `store` holds.
    static func contents(of store: StoreConfiguration) async throws -> (posts: Set<Post>, notes: Set<Note>, tags: Set<Tag>) {
        let container = try GraphContainer(for: exampleModel, store: store)
        let context = container.mainContext
        let contents = (
            Set(try context.fetch(FetchDescriptor<Post>())), Set(try context.fetch(FetchDescriptor<Note>())),
            Set(try context.fetch(FetchDescriptor<Tag>())))
        try container.checkInvariants()
        try await container.close()
        return contents
    }

    /// Runs `python3 -c script arguments…` and expects it to succeed.
    static func python(_ script: String, _ arguments: [String]) async throws {
        let result = try await runPython(script, arguments)
        try #require(result.status == 0, "python3 failed: \(result.standardError)")
    }

    @Test func migratesASnapshotToSQLiteAndBack() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("store.json.gz")
        let made = try await GraphStoreToolSnapshotTests.makeStore(source)

        let sqlite = directory.file("store.sqlite")
        let there = try await runProduct("graphstore", ["migrate", source.path, sqlite.path])
        #expect(there.status == 0, "\(there.standardError)")
        // Not a terminal: no progress on stderr, only the summary on stdout.
        #expect(there.standardError.isEmpty)
        #expect(there.standardOutput.contains("(snapshot) to \(sqlite.path) (SQLite)"))
        #expect(there.standardOutput.contains("objects/s"))
        let lines = there.standardOutput.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("Post ") && $0.hasSuffix(" 25") })
        #expect(lines.contains { $0.hasPrefix("Note ") && $0.hasSuffix(" 7") })
        #expect(there.standardOutput.contains("37 objects in"))
        let fromSQLite = try await Self.contents(of: .sqlite(sqlite))
        #expect(fromSQLite.posts == Set(made.posts) && fromSQLite.notes == Set(made.notes) && fromSQLite.tags == Set(made.tags))

        for (name, format, compression) in [
            ("back.plist.gz", SnapshotFormat.binaryPropertyList, Compression.gzip), ("back.json", .json, .none), ("back.plist", .binaryPropertyList, .none),
        ] {
            let back = directory.file(name)
            let result = try await runProduct("graphstore", ["migrate", sqlite.path, back.path])
            #expect(result.status == 0, "\(name): \(result.standardError)")
            let snapshot = try GenericSnapshot.read(from: back)
            #expect(snapshot.format == format && snapshot.compression == compression, "\(name)")
            let reopened = try await Self.contents(of: .file(back, format: format, compression: compression))
            #expect(reopened.posts == Set(made.posts) && reopened.notes == Set(made.notes) && reopened.tags == Set(made.tags), "\(name)")
        }
    }

    @Test func flagsOverrideTheNames() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let snapshot = directory.file("store.json.gz")
        let made = try await GraphStoreToolSnapshotTests.makeStore(snapshot)
        // A source without a known extension is recognized by its first bytes.
        let source = directory.file("export.bin")
        try FileManager.default.copyItem(at: snapshot, to: source)
        let sqlite = directory.file("store.data")
        let there = try await runProduct("graphstore", ["migrate", source.path, sqlite.path, "--to", "sqlite"])
        #expect(there.status == 0, "\(there.standardError)")
        #expect(SQLiteStoreInfo.isSQLiteDatabase(at: sqlite))
        let back = directory.file("back.json.gz")
        let result = try await runProduct("graphstore", ["migrate", sqlite.path, back.path, "--from", "sqlite", "--format", "plist", "--compression", "none"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("binary property list snapshot, none"))
        let read = try GenericSnapshot.read(from: back)
        #expect(read.format == .binaryPropertyList && read.compression == Compression.none)
        let reopened = try await Self.contents(of: .file(back, format: .binaryPropertyList, compression: .none))
        #expect(reopened.notes == Set(made.notes))
    }

    @Test func anExistingDestinationNeedsForce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("store.json.gz")
        _ = try await GraphStoreToolSnapshotTests.makeStore(source)
        let destination = directory.file("store.sqlite")
        try Data("keep me".utf8).write(to: destination)
        let refused = try await runProduct("graphstore", ["migrate", source.path, destination.path])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("--force"))
        #expect(refused.standardError.split(separator: "\n").count == 1)
        #expect(try Data(contentsOf: destination) == Data("keep me".utf8))
        let forced = try await runProduct("graphstore", ["migrate", source.path, destination.path, "--force"])
        #expect(forced.status == 0, "\(forced.standardError)")
        #expect(SQLiteStoreInfo.isSQLiteDatabase(at: destination))
        // The other way too.
        let refusedBack = try await runProduct("graphstore", ["migrate", destination.path, source.path])
        #expect(refusedBack.status == 1)
        #expect(refusedBack.standardError.contains("--force"))
        // Nothing else was left in the directory.
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path)).filter { !$0.hasSuffix(".lock") }
        #expect(names == ["store.json.gz", "store.sqlite"])
    }

    @Test func badArgumentsAndSourcesAreRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("store.json.gz")
        _ = try await GraphStoreToolSnapshotTests.makeStore(source)

        let unknownFrom = try await runProduct("graphstore", ["migrate", source.path, directory.file("x.sqlite").path, "--from", "yaml"])
        #expect(unknownFrom.status != 0)
        #expect(unknownFrom.standardError.contains("yaml"))
        let formatForSQLite = try await runProduct("graphstore", ["migrate", source.path, directory.file("x.sqlite").path, "--format", "json"])
        #expect(formatForSQLite.status != 0)
        #expect(formatForSQLite.standardError.contains("--format and --compression apply to a snapshot destination"))
        let unknownDestination = try await runProduct("graphstore", ["migrate", source.path, directory.file("x.out").path])
        #expect(unknownDestination.status == 1)
        #expect(unknownDestination.standardError.contains("--to"))
        let missingArgument = try await runProduct("graphstore", ["migrate", source.path])
        #expect(missingArgument.status != 0)
        let absent = try await runProduct("graphstore", ["migrate", directory.file("absent.json.gz").path, directory.file("x.sqlite").path])
        #expect(absent.status == 1)
        #expect(absent.standardError.contains("no such file"))
        // A file that is not SQLite, named as one.
        let fake = directory.file("fake.sqlite")
        try Data("not a database, just text".utf8).write(to: fake)
        let notSQLite = try await runProduct("graphstore", ["migrate", fake.path, directory.file("x.json").path])
        #expect(notSQLite.status == 1)
        #expect(notSQLite.standardError.contains("not a SQLite database") && !notSQLite.standardError.contains("damaged"))
        #expect(notSQLite.standardError.split(separator: "\n").count == 1)
        // A SQLite database that is not a GraphStore store is recognised as plain SQLite and imported.
        let plain = directory.file("legacy.sqlite")
        try await Self.python("import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute('CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT)'); db.execute(\"INSERT INTO people VALUES (1, 'Ada')\"); db.commit()", [plain.path])
        let foreign = try await runProduct("graphstore", ["migrate", plain.path, directory.file("x.json").path])
        #expect(foreign.status == 0, "\(foreign.standardError)")
        #expect(foreign.standardOutput.contains("(plain-sqlite)"))
        #expect(!foreign.standardError.contains("damaged"))
        try FileManager.default.removeItem(at: directory.file("x.json"))
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path)).filter { !$0.hasSuffix(".lock") }
        #expect(names == ["store.json.gz", "fake.sqlite", "legacy.sqlite"])
    }

    @Test func importsAPlainSQLiteDatabase() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let plain = directory.file("legacy.db")
        try await Self.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute('CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, photo BLOB)')
            db.executemany('INSERT INTO people VALUES (?, ?, ?)', [(i, 'person %d ✓' % i, bytes([i])) for i in range(1, 51)])
            db.execute('CREATE TABLE log (line TEXT)')
            db.commit()
            """, [plain.path])
        let snapshot = directory.file("people.json.gz")
        let result = try await runProduct("graphstore", ["migrate", plain.path, snapshot.path, "--from", "plain-sqlite"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("skipped table log"))
        let read = try GenericSnapshot.read(from: snapshot)
        #expect(read.objects(of: "people").count == 50)
        // And on to SQLite.
        let sqlite = directory.file("people.sqlite")
        let onward = try await runProduct("graphstore", ["migrate", plain.path, sqlite.path, "--from", "plain-sqlite"])
        #expect(onward.status == 0, "\(onward.standardError)")
        let verify = try await runProduct("graphstore", ["verify", sqlite.path])
        #expect(verify.status == 0)
        #expect(verify.standardOutput.contains("1 entities, 50 objects"))
    }

    @Test func inspectVerifyAndDumpReadSQLiteFiles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("store.json.gz")
        let made = try await GraphStoreToolSnapshotTests.makeStore(source)
        let sqlite = directory.file("store.sqlite")
        #expect(try await runProduct("graphstore", ["migrate", source.path, sqlite.path]).status == 0)

        let inspect = try await runProduct("graphstore", ["inspect", sqlite.path])
        #expect(inspect.status == 0, "\(inspect.standardError)")
        #expect(inspect.standardOutput.contains("kind:            SQLite, write-ahead log"))
        #expect(inspect.standardOutput.contains("format:          GraphStore SQLite 1"))
        #expect(inspect.standardOutput.contains("store version:   1"))
        let rows = inspect.standardOutput.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(rows.contains { $0.first == "Post" && $0[1] == "25" && (Int($0[2]) ?? 0) > 0 })
        #expect(rows.contains { $0.first == "Note" && $0[1] == "7" && $0.contains("isArchived:bool") })
        #expect(rows.contains { $0.first == "Tag" && $0[1] == "\(made.tags.count)" })

        let verify = try await runProduct("graphstore", ["verify", sqlite.path])
        #expect(verify.status == 0)
        #expect(verify.standardOutput.contains("OK (SQLite, 3 entities, \(25 + 7 + made.tags.count) objects, store version 1)"))

        let dump = try await runProduct("graphstore", ["dump", sqlite.path])
        #expect(dump.status == 0)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(dump.standardOutput.utf8)) as? [String: Any])
        let header = try #require(document["header"] as? [String: Any])
        #expect(header["format"] as? String == "GraphStore")
        #expect((header["counts"] as? [String: Int])?["Post"] == 25)
        #expect((header["fieldTypes"] as? [String: [String: String]])?["Note"] == ["createdAt": "date", "modifiedAt": "date", "id": "string", "text": "string"])
        let entities = try #require(document["entities"] as? [String: [[String: Any]]])
        let note = try #require(entities["Note"]?.first { ($0["id"] as? String) == made.notes[0].id.uuidString })
        #expect((note["createdAt"] as? Double)?.bitPattern == made.notes[0].createdAt.timeIntervalSinceReferenceDate.bitPattern)
        #expect(note["text"] as? String == made.notes[0].text)
        let tags = try await runProduct("graphstore", ["dump", sqlite.path, "--entity", "Tag"])
        let array = try #require(try JSONSerialization.jsonObject(with: Data(tags.standardOutput.utf8)) as? [[String: Any]])
        #expect(Set(array.compactMap { $0["name"] as? String }) == Set(made.tags.map(\.name)))

        // A damaged SQLite file: verify says so in one line and exits 1; the file is untouched.
        var bytes = try Data(contentsOf: sqlite)
        let damaged = directory.file("damaged.sqlite")
        bytes = bytes.prefix(bytes.count - 4096)
        try bytes.write(to: damaged)
        let bad = try await runProduct("graphstore", ["verify", damaged.path])
        #expect(bad.status == 1)
        #expect(bad.standardError.split(separator: "\n").count == 1)
        #expect(bad.standardError.contains(damaged.path))
        #expect(try Data(contentsOf: damaged) == bytes)
    }
}
