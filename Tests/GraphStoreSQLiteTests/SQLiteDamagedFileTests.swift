import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A file that is not a (good) GraphStore SQLite store is refused with an error naming it, and
/// is left exactly as it was: same bytes, no file added beside it.
@Suite struct SQLiteDamagedFileTests {
    @Test func randomBytesAreNotADatabase() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try SplitMix64.bytes(4096).write(to: url)

        let error = try expectRefused(url, in: directory)
        guard case .damagedFile(_, let offset, let reason) = error else { throw Unexpected(error) }
        #expect(offset == 0)
        #expect(reason.contains("not a SQLite database"))
    }

    @Test func aTruncatedFileIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await Self.makeStore(at: url, posts: 300)
        let full = try #require(SQLiteTestKit.contents(url))
        try full.prefix(full.count / 2).write(to: url)

        let error = try expectRefused(url, in: directory)
        guard case .damagedFile(_, let offset, let reason) = error else { throw Unexpected(error) }
        #expect(offset == full.count / 2)
        #expect(reason.contains("truncated"))
    }

    @Test func aFileCutInsideTheHeaderIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await Self.makeStore(at: url, posts: 1)
        try #require(SQLiteTestKit.contents(url)).prefix(50).write(to: url)

        let error = try expectRefused(url, in: directory)
        guard case .damagedFile(_, let offset, _) = error else { throw Unexpected(error) }
        #expect(offset == 50)
    }

    @Test func aMalformedTablePageIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await Self.makeStore(at: url, posts: 300)
        try await Self.corruptRootPage(of: "Post", at: url)

        let error = try expectRefused(url, in: directory)
        guard case .damagedFile(_, _, let reason) = error else { throw Unexpected(error) }
        #expect(reason.contains("malformed"))
    }

    @Test func integrityCheckOnOpenFindsDamageOutsideTheRows() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await Self.makeStore(at: url, posts: 300)
        // The primary-key index of Tag is not read when the rows load.
        try await Self.corruptRootPage(of: "sqlite_autoindex_Tag_1", at: url)
        let damaged = try #require(SQLiteTestKit.contents(url))

        let unchecked = try SQLiteTestKit.open(url)
        try await unchecked.close()
        #expect(SQLiteTestKit.contents(url) == damaged)

        let error = try expectRefused(url, in: directory, options: SQLiteStoreOptions(checksIntegrityOnOpen: true))
        guard case .damagedFile(_, _, let reason) = error else { throw Unexpected(error) }
        #expect(reason.contains("quick_check"))
    }

    /// The same damage with saves waiting in the journal: the check runs before the opening
    /// transaction writes them, so the refused file is left byte for byte as it was. (It ran
    /// after that transaction had committed the replayed rows through the damaged index.)
    @Test func integrityCheckOnOpenRunsBeforeTheJournalIsReplayed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await Self.makeStore(at: url, posts: 300)
        let gate = WriterGate()
        var options = SQLiteStoreOptions()
        options.beforeTransaction = { _ in gate.pass() }
        let container = try SQLiteTestKit.open(url, options: options)
        gate.close()
        container.mainContext.insert(ExampleModel.Tag(name: "journaled"))
        try container.mainContext.save()
        await gate.waitUntilReached()
        let crashed = try SQLiteJournalTestKit.crashCopy(of: url, to: directory.file("crashed"))
        gate.open()
        try await container.close()
        try await Self.corruptRootPage(of: "sqlite_autoindex_Tag_1", at: crashed)
        let files = SQLiteJournalTestKit.storeFiles(crashed).map { SQLiteTestKit.contents($0) }
        #expect(files[3] != nil, "the crash copy holds a journal")

        let entries = SQLiteTestKit.entries(of: crashed.deletingLastPathComponent())
        let error = try #require(SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(crashed, options: SQLiteStoreOptions(checksIntegrityOnOpen: true)) })
        #expect(SQLiteTestKit.entries(of: crashed.deletingLastPathComponent()) == entries, "files appeared or vanished")
        guard case .damagedFile(_, _, let reason) = error else { throw Unexpected(error) }
        #expect(reason.contains("quick_check"))
        #expect(SQLiteJournalTestKit.storeFiles(crashed).map { SQLiteTestKit.contents($0) } == files)
    }

    @Test func aPlainSQLiteDatabaseIsNotAStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("other.sqlite")
        try await Self.python("db.execute('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)'); db.execute(\"INSERT INTO notes VALUES (1, 'hi')\")", url)

        let error = try expectRefused(url, in: directory)
        guard case .damagedFile(_, _, let reason) = error else { throw Unexpected(error) }
        #expect(reason.contains("not a GraphStore store"))
        #expect(reason.contains("graphstore_metadata"))
    }

    @Test func aNewerFormatVersionIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await Self.makeStore(at: url, posts: 3)
        try await Self.python("db.execute(\"UPDATE graphstore_metadata SET value = 2 WHERE key = 'formatVersion'\")", url)

        let error = try expectRefused(url, in: directory)
        #expect(error == .unsupportedFormatVersion(path: url.path, found: 2, supported: 1))
        #expect(error.description.contains("newer"))
    }

    @Test func anotherFormatNameIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await Self.makeStore(at: url, posts: 3)
        try await Self.python("db.execute(\"UPDATE graphstore_metadata SET value = 'Something Else' WHERE key = 'format'\")", url)

        let error = try expectRefused(url, in: directory)
        guard case .damagedFile(_, _, let reason) = error else { throw Unexpected(error) }
        #expect(reason.contains("Something Else"))
    }

    @Test func aValueOfTheWrongTypeNamesTheObject() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await Self.makeStore(at: url, posts: 3)
        try await Self.python("db.execute(\"UPDATE Post SET noteCount = 'many' WHERE id = 2\")", url)

        let error = try expectRefused(url, in: directory)
        guard case .codingFailed(let path, let entity, let id, let reason) = error else { throw Unexpected(error) }
        #expect(path == url.path)
        #expect(entity == "Post")
        #expect(id == "2")
        #expect(reason.contains("noteCount"))
    }

    @Test func aDanglingReferenceIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await Self.makeStore(at: url, posts: 10)
        try await Self.python("db.execute('DELETE FROM Tag')", url)

        let error = try expectRefused(url, in: directory)
        guard case .damagedFile(_, _, let reason) = error else { throw Unexpected(error) }
        #expect(reason.contains("not in the file"))
    }

    // MARK: - Helpers

    struct Unexpected: Error, CustomStringConvertible {
        let error: GraphStoreError
        init(_ error: GraphStoreError) { self.error = error }
        var description: String { "unexpected error: \(error)" }
    }

    /// Opens the store at `url`, expecting a `GraphStoreError` that names the file, and checks
    /// that the file and its directory are unchanged.
    private func expectRefused(
        _ url: URL, in directory: TemporaryDirectory, options: SQLiteStoreOptions = SQLiteStoreOptions(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> GraphStoreError {
        let before = SQLiteTestKit.contents(url)
        let entries = SQLiteTestKit.entries(of: directory.url)
        let error = try #require(SQLiteTestKit.storeError(sourceLocation: sourceLocation) { _ = try SQLiteTestKit.open(url, options: options) })
        #expect(error.description.contains(url.path), "\(error)", sourceLocation: sourceLocation)
        #expect(SQLiteTestKit.contents(url) == before, "the file changed", sourceLocation: sourceLocation)
        #expect(SQLiteTestKit.entries(of: directory.url) == entries, "files appeared or vanished", sourceLocation: sourceLocation)
        return error
    }

    /// A closed store with `posts` posts, their tags and a few notes.
    private static func makeStore(at url: URL, posts: Int) async throws {
        let container = try SQLiteTestKit.open(url)
        try SQLiteTestKit.insert(SQLiteTestKit.exampleGraph(posts: posts, notes: 3), into: container)
        try await container.close()
    }

    /// Runs Python statements with `db`, a connection to `url`, then commits.
    private static func python(_ statements: String, _ url: URL) async throws {
        let result = try await runPython("import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\n\(statements)\ndb.commit()\ndb.close()", [url.path])
        try #require(result.status == 0, "python3 failed: \(result.standardError)")
    }

    /// Overwrites the b-tree page type of the root page of `name` (a table or index) with an
    /// invalid value.
    private static func corruptRootPage(of name: String, at url: URL) async throws {
        let result = try await runPython("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            page_size = db.execute("PRAGMA page_size").fetchone()[0]
            root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (sys.argv[2],)).fetchone()[0]
            db.close()
            with open(sys.argv[1], "r+b") as f:
                f.seek((root - 1) * page_size)
                f.write(bytes([0x01]))
            """, [url.path, name])
        try #require(result.status == 0, "python3 failed: \(result.standardError)")
    }
}
