import ExampleModel
import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A migration that cannot finish says why, and leaves no destination (or the old one, intact)
/// and no temporary file behind; it replaces an existing destination only when told to.
@Suite struct MigrationFailureTests {
    /// A small JSON snapshot of the example model in `directory`.
    private func makeSnapshot(in directory: TemporaryDirectory, name: String = "store.json.gz") async throws -> URL {
        let url = directory.file(name)
        let graph = SQLiteTestKit.exampleGraph(posts: 5, notes: 2)
        try await MigrationTestKit.write(MigrationTestKit.Graph(tags: graph.tags, posts: graph.posts, notes: graph.notes), to: .file(url))
        return url
    }

    @Test func anExistingDestinationIsKeptWithoutOverwrite() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try await makeSnapshot(in: directory)
        let destination = directory.file("store.sqlite")
        try Data("keep me".utf8).write(to: destination)
        let error = SQLiteTestKit.storeError { try Migration.snapshotToSQLite(from: source, to: destination) }
        guard case .fileOperationFailed(let path, _, let reason)? = error else {
            Issue.record("expected fileOperationFailed, got \(String(describing: error))")
            return
        }
        #expect(path == destination.path)
        #expect(reason.contains("exists"))
        #expect(try Data(contentsOf: destination) == Data("keep me".utf8))

        let snapshotDestination = directory.file("back.json.gz")
        try Data("keep me too".utf8).write(to: snapshotDestination)
        #expect(SQLiteTestKit.storeError { try Migration.sqliteToSnapshot(from: destination, to: snapshotDestination) } != nil)
        #expect(try Data(contentsOf: snapshotDestination) == Data("keep me too".utf8))

        try Migration.snapshotToSQLite(from: source, to: destination, options: MigrationOptions(overwrite: true))
        #expect(SQLiteStoreInfo.isSQLiteDatabase(at: destination))
        try Migration.sqliteToSnapshot(from: destination, to: snapshotDestination, options: MigrationOptions(overwrite: true))
        #expect(try GenericSnapshot.read(from: snapshotDestination).objects(of: "Post").count == 5)
        #expect(MigrationTestKit.files(in: directory.url) == ["store.json.gz", "store.sqlite", "back.json.gz"])
    }

    @Test func aFailureBeforeTheRenameLeavesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try await makeSnapshot(in: directory)
        struct Injected: Error {}
        var options = MigrationOptions()
        options.beforeRename = { temporary in
            #expect(SQLiteStoreInfo.isSQLiteDatabase(at: temporary) || FileManager.default.fileExists(atPath: temporary.path))
            throw Injected()
        }
        #expect(throws: Injected.self) { try Migration.snapshotToSQLite(from: source, to: directory.file("store.sqlite"), options: options) }
        #expect(MigrationTestKit.files(in: directory.url) == ["store.json.gz"])

        // Nor over an existing destination, which stays as it was.
        let sqlite = directory.file("good.sqlite")
        try Migration.snapshotToSQLite(from: source, to: sqlite)
        let before = try #require(SQLiteTestKit.contents(sqlite))
        options.overwrite = true
        #expect(throws: Injected.self) { try Migration.snapshotToSQLite(from: source, to: sqlite, options: options) }
        #expect(SQLiteTestKit.contents(sqlite) == before)
        #expect(throws: Injected.self) { try Migration.sqliteToSnapshot(from: sqlite, to: source, options: options) }
        #expect(MigrationTestKit.files(in: directory.url) == ["store.json.gz", "good.sqlite"])
        #expect(try GenericSnapshot.read(from: source).objects(of: "Post").count == 5)
    }

    /// An object that cannot be stored, half-way through, fails the migration with its entity
    /// and id; the rows before it are not left anywhere.
    @Test func aBadValueHalfWayLeavesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var objects = (0..<2_000).map { index in
            SnapshotValue.object(["id": .integer(Int64(index)), "bytes": .string(Data([UInt8(index % 256)]).base64EncodedString())])
        }
        objects[1_500] = .object(["id": .integer(1_500), "bytes": .string("not base64 ✗")])
        let header = SnapshotHeaderV1(
            modelVersion: "1", savedAt: Date(), storeVersion: 3, counts: ["Blob": objects.count], fieldTypes: ["Blob": ["bytes": "data"]])
        let snapshot = GenericSnapshot(header: header, entities: [("Blob", objects)])
        let destination = directory.file("store.sqlite")
        let error = SQLiteTestKit.storeError { try Migration.writeSQLite(snapshot, to: destination) }
        guard case .codingFailed(let path, let entity, let id, let reason)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(path == destination.path)
        #expect(entity == "Blob")
        #expect(id == "1500")
        #expect(reason.contains("bytes") && reason.contains("Base64"))
        #expect(MigrationTestKit.files(in: directory.url).isEmpty)
    }

    @Test func snapshotsSQLiteCannotHoldAreRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        func refusal(_ entities: [(name: String, objects: [SnapshotValue])]) -> GraphStoreError? {
            let header = SnapshotHeaderV1(modelVersion: "1", savedAt: Date(), storeVersion: 0, counts: [:])
            return SQLiteTestKit.storeError {
                try Migration.writeSQLite(GenericSnapshot(header: header, entities: entities), to: directory.file("store.sqlite"))
            }
        }
        let one: [SnapshotValue] = [.object(["id": .integer(1)])]
        let cases: [(entities: [(name: String, objects: [SnapshotValue])], expected: String)] = [
            ([("graphstore_metadata", one)], "reserved"),
            ([("sqlite_stat1", one)], "reserved"),
            ([("Tag", one), ("tag", one)], "only in case"),
            ([("Tag", [.object(["name": .string("no id")])])], "has no id"),
            ([("Tag", [.string("not an object")])], "not an object"),
            ([("Tag", one + one)], "two objects have this id"),
        ]
        for (entities, expected) in cases {
            let error = refusal(entities)
            guard case .codingFailed(_, _, _, let reason)? = error else {
                Issue.record("expected codingFailed for \(entities.map(\.name)), got \(String(describing: error))")
                continue
            }
            #expect(reason.contains(expected), "\(reason)")
            #expect(MigrationTestKit.files(in: directory.url).isEmpty)
        }
    }

    @Test func damagedAndForeignSourcesGiveClearErrors() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let good = directory.file("good.sqlite")
        try Migration.snapshotToSQLite(from: try await makeSnapshot(in: directory), to: good)
        let bytes = try #require(SQLiteTestKit.contents(good))

        func error(_ name: String, _ contents: Data?) -> GraphStoreError? {
            let url = directory.file(name)
            if let contents { try? contents.write(to: url) }
            let destination = directory.file(name + ".json")
            defer { try? FileManager.default.removeItem(at: destination) }
            return SQLiteTestKit.storeError { try Migration.sqliteToSnapshot(from: url, to: destination) }
        }
        // Missing.
        guard case .fileOperationFailed(_, _, let reason)? = error("absent.sqlite", nil) else {
            Issue.record("a missing file")
            return
        }
        #expect(reason.contains("no such file"))
        // Not SQLite at all, empty, truncated.
        for (name, contents, expected) in [
            ("text.sqlite", Data("hello, this is not a database at all".utf8), "not a SQLite database"),
            ("empty.sqlite", Data(), "empty"),
            ("truncated.sqlite", bytes.prefix(bytes.count / 2), "truncated"),
            ("header.sqlite", bytes.prefix(40), "header"),
        ] {
            guard case .damagedFile(let path, _, let reason)? = error(name, contents) else {
                Issue.record("\(name): expected damagedFile")
                continue
            }
            #expect(path.hasSuffix(name))
            #expect(reason.contains(expected), "\(name): \(reason)")
        }
        // A SQLite database that is not a GraphStore store.
        let plain = directory.file("plain.sqlite")
        let database = try DatabaseQueue(path: plain.path)
        try await database.write { db in try db.execute(sql: "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT)") }
        try database.close()
        guard case .damagedFile(_, _, let reason)? = error("plain.sqlite", nil) else {
            Issue.record("plain SQLite: expected damagedFile")
            return
        }
        #expect(reason.contains("not a GraphStore store") && reason.contains("people"))
        // A value that does not fit its column's kind.
        let tampered = directory.file("tampered.sqlite")
        try bytes.write(to: tampered)
        let writer = try DatabaseQueue(path: tampered.path)
        try await writer.write { db in try db.execute(sql: "UPDATE Note SET isArchived = 7 WHERE rowid = (SELECT min(rowid) FROM Note)") }
        try writer.close()
        guard case .codingFailed(_, let entity, let id, let reason)? = error("tampered.sqlite", nil) else {
            Issue.record("tampered: expected codingFailed")
            return
        }
        #expect(entity == "Note")
        #expect(id != nil)
        #expect(reason.contains("isArchived") && reason.contains("INTEGER 7"))
        #expect(MigrationTestKit.files(in: directory.url).allSatisfy { !$0.hasSuffix(".json") && !$0.contains("migrating") })
        // A damaged snapshot source.
        var snapshot = try Data(contentsOf: directory.file("store.json.gz"))
        snapshot[snapshot.count / 2] ^= 0x20
        try snapshot.write(to: directory.file("damaged.json.gz"))
        guard case .damagedFile? = SQLiteTestKit.storeError({
            try Migration.snapshotToSQLite(from: directory.file("damaged.json.gz"), to: directory.file("damaged.sqlite"))
        }) else {
            Issue.record("a damaged snapshot: expected damagedFile")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("damaged.sqlite").path))
    }

    @Test func verifyFindsDamageInspectDoesNotReadRows() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try Migration.snapshotToSQLite(from: try await makeSnapshot(in: directory), to: url)
        let info = try SQLiteStoreInfo.verify(url)
        #expect(info.format == "GraphStore SQLite" && info.formatVersion == 1 && info.storeVersion == 1 && info.isWriteAheadLog)
        #expect(info.entities.map(\.name) == ["Note", "Post", "Tag"])
        #expect(info.entities.map(\.rows) == [2, 5, Fixtures.tagNames.count])
        #expect(info.entities.allSatisfy { ($0.bytes ?? 0) > 0 })
        #expect(info.entities.first { $0.name == "Note" }?.columns.first { $0.name == "isArchived" }?.kind == "bool")

        // A table the store did not make is not an entity (the typed store ignores it too).
        let writer = try DatabaseQueue(path: url.path)
        try await writer.write { db in try db.execute(sql: "CREATE TABLE scratch (x)") }
        #expect(try SQLiteStoreInfo.verify(url).entities.map(\.name) == ["Note", "Post", "Tag"])
        #expect(try Migration.readSQLite(from: url).entities.map(\.name) == ["Note", "Post", "Tag"])
        // A column graphstore_columns does not know is damage.
        try await writer.write { db in try db.execute(sql: "ALTER TABLE Tag ADD COLUMN color TEXT") }
        guard case .damagedFile(_, _, let unknown)? = SQLiteTestKit.storeError({ _ = try SQLiteStoreInfo.inspect(url) }) else {
            Issue.record("expected damagedFile for an unknown column")
            return
        }
        #expect(unknown.contains("Tag.color"))
        try await writer.write { db in try db.execute(sql: "ALTER TABLE Tag DROP COLUMN color") }
        try await writer.write { db in try db.execute(sql: "UPDATE Post SET date = 'yesterday' WHERE id = 2") }
        try writer.close()
        #expect(try SQLiteStoreInfo.inspect(url).entities.map(\.rows) == [2, 5, Fixtures.tagNames.count])
        guard case .codingFailed(_, "Post", "2", let reason)? = SQLiteTestKit.storeError({ _ = try SQLiteStoreInfo.verify(url) }) else {
            Issue.record("expected codingFailed for Post 2")
            return
        }
        #expect(reason.contains("date"))
    }

    /// A destination with a rollback journal or a GraphStore journal beside it is refused even
    /// when overwriting: SQLite would apply the leftover rollback journal to the new file (and
    /// cut or overwrite its pages), and the journal's saves would be replayed onto, or refuse,
    /// the migrated store. Every file is left as it was.
    @Test(arguments: ["store.sqlite-journal", "store.sqlite.journal"])
    func aDestinationWithAJournalBesideItIsRefused(journal: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try await makeSnapshot(in: directory)
        let destination = directory.file("store.sqlite")
        try Data("old store".utf8).write(to: destination)
        try Data("leftover".utf8).write(to: directory.file(journal))

        let error = SQLiteTestKit.storeError { try Migration.snapshotToSQLite(from: source, to: destination, options: MigrationOptions(overwrite: true)) }
        guard case .fileOperationFailed(let path, _, let reason)? = error else {
            Issue.record("expected fileOperationFailed, got \(String(describing: error))")
            return
        }
        #expect(path == destination.path)
        #expect(reason.contains(journal))
        #expect(try Data(contentsOf: destination) == Data("old store".utf8))
        #expect(try Data(contentsOf: directory.file(journal)) == Data("leftover".utf8))
        #expect(MigrationTestKit.files(in: directory.url) == ["store.json.gz", "store.sqlite", journal])
    }

    /// A destination in a folder nothing can be written to says why, for either kind: the
    /// folder and the system's reason, not a bare "unable to open database file" or a lock file
    /// that "does not exist".
    @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
    func aDestinationThatCannotBeCreatedSaysWhy() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try await makeSnapshot(in: directory)
        let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 256)
        defer { tmpfs.unmount() }
        let failure = await tmpfs.remount(readOnly: true)
        try #require(failure == nil, "remount failed: errno \(failure ?? 0)")

        let sqlite = tmpfs.url.appendingPathComponent("store.sqlite")
        let sqliteError = try #require(SQLiteTestKit.storeError { try Migration.snapshotToSQLite(from: source, to: sqlite) })
        #expect(sqliteError.description.contains(sqlite.path), "\(sqliteError)")
        #expect(sqliteError.description.contains("Read-only file system") && sqliteError.description.contains(tmpfs.url.path), "\(sqliteError)")

        let snapshot = tmpfs.url.appendingPathComponent("store.json.gz")
        let snapshotError = try #require(SQLiteTestKit.storeError {
            try Migration.writeSnapshot(try GenericSnapshot.read(from: source), to: snapshot, format: .json, compression: .gzip)
        })
        #expect(snapshotError.description.contains("Read-only file system") && !snapshotError.description.contains("No such file"), "\(snapshotError)")
        #expect(MigrationTestKit.files(in: tmpfs.url).isEmpty)
        _ = await tmpfs.remount(readOnly: false)
    }
}
