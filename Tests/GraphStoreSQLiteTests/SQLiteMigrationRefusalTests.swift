import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// Every way migrating a SQLite store at open can fail is a `GraphStoreError` naming the file,
/// the versions and where it failed, and leaves the database, its `-wal` and `-shm` (when there
/// are) and its journal byte for byte as they were, with no copy of the old file left behind.
@Suite struct SQLiteMigrationRefusalTests {
    typealias Kit = SQLiteMigrationTestKit

    struct Failed: Error, CustomStringConvertible {
        var description: String { "no body to migrate" }
    }

    /// A copy of the fixture and the bytes of every file beside it.
    static func store(in directory: TemporaryDirectory) throws -> (URL, [String: Data]) {
        let url = try Kit.copyFixture(to: directory)
        return (url, Kit.files(in: directory.url))
    }

    @Test func aMissingLinkInTheChain() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(in: directory)
        let error = Kit.refused(url, migrations: [ModelV3.twoToThree])
        guard case .migrationFailed(let path, 1, 3, nil, nil, nil, let reason)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(path == url.path)
        #expect(reason.contains("no migration starts from model version 1"))
        #expect(Kit.files(in: directory.url) == before)
    }

    @Test func aThrowingTransformNamesTheObject() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(in: directory)
        let throwing = SchemaMigration(from: 2, to: 3, [
            .removeField("legacy", in: "Note"), .removeEntity("Draft"),
            .transform("Note") { object in
                if object["id"] == .string(ModelV1.uuid(102).uuidString) { throw Failed() }
                object["title"] = .string("t")
            },
        ])
        let error = Kit.refused(url, migrations: [ModelV3.oneToTwo, throwing])
        guard case .migrationFailed(_, 2, 3, "Note", nil, let id, let reason)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(id == ModelV1.uuid(102).uuidString)
        #expect(reason.contains("no body to migrate"))
        #expect(Kit.files(in: directory.url) == before)
    }

    @Test func aResultThatDoesNotDecodeNamesTheFieldAndTheStep() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(in: directory)
        let withoutPinned = SchemaMigration(from: 1, to: 2, [.renameEntity("Memo", to: "Note"), .renameField("text", to: "body", in: "Note")])
        let error = Kit.refused(url, migrations: [withoutPinned, ModelV3.twoToThree])
        guard case .migrationFailed(_, 1, 3, "Note", "pinned", let id, let reason)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(id != nil)
        #expect(reason.contains(".addField(\"pinned\", in: \"Note\""))
        #expect(Kit.files(in: directory.url) == before)
    }

    @Test func aUniqueConstraintViolatedByTheMigratedData() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(in: directory)
        let sameNames = SchemaMigration(from: 2, to: 3, ModelV3.twoToThree.steps + [.transform("Tag") { $0["name"] = .string("same") }])
        let error = Kit.refused(url, migrations: [ModelV3.oneToTwo, sameNames])
        guard case .migrationFailed(_, 1, 3, _, _, _, let reason)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(reason.contains("Tag"))
        #expect(reason.contains("same"))
        #expect(Kit.files(in: directory.url) == before)
    }

    @Test func aRemovedEntityStillReferencedIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(in: directory)
        let dropTags = SchemaMigration(from: 2, to: 3, ModelV3.twoToThree.steps + [.removeEntity("Tag")])
        let error = Kit.refused(url, migrations: [ModelV3.oneToTwo, dropTags])
        guard case .migrationFailed(_, 1, 3, _, _, _, let reason)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(reason.contains("Tag"))
        #expect(Kit.files(in: directory.url) == before)
    }

    @Test func aFieldTheAppWouldDropIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(in: directory)
        let keepingLegacy = SchemaMigration(from: 2, to: 3, [
            .removeEntity("Draft"),
            .transform("Note") { object in object["title"] = .string("t") },
        ])
        let error = Kit.refused(url, migrations: [ModelV3.oneToTwo, keepingLegacy])
        guard case .migrationFailed(_, 1, 3, "Note", "legacy", _, let reason)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(reason.contains(".removeField(\"legacy\", in: \"Note\")"))
        #expect(Kit.files(in: directory.url) == before)
    }

    @Test func aNewerStoreIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try Kit.copyFixture(to: directory)
        let container = try Kit.open(url)
        try await container.close()
        let before = Kit.files(in: directory.url)
        let error = Kit.refused(url, version: 2, migrations: [ModelV3.oneToTwo])
        #expect(error == .newerModelVersion(path: url.path, found: 3, supported: 2))
        #expect(Kit.files(in: directory.url) == before)
    }

    /// A copy of the version-1 fixture as a process killed at this point leaves it: what
    /// `logged` saved written to the write-ahead log, and a tag saved to the journal only.
    static func crashedStore(in directory: TemporaryDirectory, logged: (GraphContext) -> Void) async throws -> URL {
        let url = try Kit.copyFixture(to: directory)
        let gate = WriterGate()
        var options = SQLiteStoreOptions()
        options.beforeTransaction = { _ in gate.pass() }
        let old = try GraphContainer(for: ModelV1.types, store: .sqlite(url, options: options))
        var events = old.storeEvents.makeAsyncIterator()
        logged(old.mainContext)
        try old.mainContext.save()
        await SQLiteJournalTestKit.waitUntilWritten(2, events: &events)
        gate.close()
        old.mainContext.insert(ModelV1.Tag(id: ModelV1.uuid(4), name: "in the journal"))
        try old.mainContext.save()
        await gate.waitUntilReached()
        let crashed = try SQLiteJournalTestKit.crashCopy(of: url, to: directory.file("crashed"))
        gate.open()
        try await old.close()
        return crashed
    }

    /// A store a version-1 process left with saves in its write-ahead log and its journal:
    /// a refused migration leaves all three files as they were.
    @Test func aStoreLeftByACrashIsLeftAsItWas() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let crashed = try await Self.crashedStore(in: directory) { context in
            context.insert(ModelV1.Tag(id: ModelV1.uuid(3), name: "in the log"))
        }
        let before = Kit.files(in: directory.file("crashed"))
        #expect(before["store.sqlite.journal"] != nil)

        let error = Kit.refused(crashed, migrations: [ModelV3.twoToThree])
        guard case .migrationFailed(_, 1, 3, _, _, _, _)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(Kit.files(in: directory.file("crashed")) == before)

        // Opened with the migrations, both saves are there.
        let container = try Kit.open(crashed)
        let names = try container.mainContext.fetch(FetchDescriptor<ModelV3.Tag>()).map(\.name).sorted()
        #expect(names == ["in the journal", "in the log", "linux", "swift"])
        try await container.close()
    }
}

/// The migration's transaction: the copy of the old file is durable before it commits, and a
/// failure before the commit rolls the rewritten tables back and removes the copy.
@Suite struct SQLiteMigrationTransactionTests {
    typealias Kit = SQLiteMigrationTestKit

    struct Interrupted: Error {}

    @Test func theOldFileIsCopiedBeforeTheTransactionCommits() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try Kit.copyFixture(to: directory)
        let original = try Data(contentsOf: url)
        let copy = directory.file("store.sqlite.v1")
        let seen = Guarded<Data?>(nil)
        let tables = Guarded<[String]>([])
        var options = SQLiteStoreOptions()
        options.beforeMigrationCommit = { db in
            seen.withLock { $0 = try? Data(contentsOf: copy) }
            let names = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('Memo', 'Draft', 'Note')")
            tables.withLock { $0 = names }
        }
        let container = try Kit.open(url, options: options)
        try await container.close()
        #expect(seen.value == original)
        // Inside the transaction the tables were already the new model's.
        #expect(tables.value == ["Note"])
    }

    @Test func aFailureBeforeTheCommitRollsBackAndRemovesTheCopy() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try Kit.copyFixture(to: directory)
        let before = Kit.files(in: directory.url)
        var options = SQLiteStoreOptions()
        options.beforeMigrationCommit = { _ in throw Interrupted() }
        #expect(throws: (any Error).self) {
            _ = try Kit.open(url, options: options)
        }
        #expect(Kit.files(in: directory.url) == before)

        // Nothing of the rolled-back migration is left: the next open migrates again.
        let container = try Kit.open(url)
        #expect(try Kit.notes(container).count == 4)
        try await container.close()
        #expect(try Data(contentsOf: directory.file("store.sqlite.v1")) == before["store.sqlite"])
    }

    /// A large store that a crash left with commits in its write-ahead log: the migration's
    /// rewrite is larger than SQLite's page cache, whose overflow SQLite used to write to the
    /// log before the commit. A failure then rolled the transaction back but left the log
    /// larger (never to shrink, on a full disk too); now the log is left byte for byte.
    @Test func aFailedLargeMigrationLeavesTheLogAsItWas() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let text = String(repeating: "x", count: 1_500)
        let crashed = try await SQLiteMigrationRefusalTests.crashedStore(in: directory) { context in
            for n in 0..<2_500 {
                context.insert(ModelV1.Memo(
                    id: ModelV1.uuid(10_000 + n), text: "\(n) \(text)", createdAt: ModelV1.epoch, legacy: "l", attachment: Data([1]), tagIDs: []))
            }
        }
        let before = Kit.files(in: directory.file("crashed"))
        try #require(before["store.sqlite-wal"] != nil)

        var failing = SQLiteStoreOptions()
        failing.beforeMigrationCommit = { _ in throw Interrupted() }
        #expect(throws: (any Error).self) {
            _ = try Kit.open(crashed, options: failing)
        }
        #expect(Kit.files(in: directory.file("crashed")) == before)
        // The version-1 app still reads everything, the journal's save included.
        let again = try GraphContainer(for: ModelV1.types, store: .sqlite(crashed))
        #expect(again.count(of: ModelV1.Memo.self) == 2_504)
        #expect(again.mainContext.model(ModelV1.Tag.self, id: ModelV1.uuid(4))?.name == "in the journal")
        try await again.close()
    }
}
