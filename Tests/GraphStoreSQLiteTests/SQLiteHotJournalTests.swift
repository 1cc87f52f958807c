import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A store left by a process killed while committing in rollback-journal mode (a new file's
/// first transaction runs in it, before the store turns to write-ahead logging): its header may
/// already count pages the file does not hold yet, and the hot journal beside it is what undoes
/// that. Such a file opens, rolled back by SQLite, instead of being refused as truncated.
@Suite struct SQLiteHotJournalTests {
    /// Turns the store at `argv[1]` to rollback mode; a child process begins a transaction that
    /// writes page 1 and spills pages to the file, and is killed; then the header is made to
    /// count more pages than the file has, as a commit killed between its first and last page
    /// leaves it. SQLite itself rolls this file back to the committed store.
    static let killedCommit = """
        import os, signal, sqlite3, struct, sys
        path = sys.argv[1]
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA journal_mode=DELETE")
        db.close()
        pid = os.fork()
        if pid == 0:
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA cache_size=2")
            db.execute("BEGIN")
            db.execute("CREATE TABLE junk(x)")
            for i in range(400):
                db.execute("INSERT INTO junk VALUES (?)", ("x" * 500,))
            os.kill(os.getpid(), signal.SIGKILL)
        os.waitpid(pid, 0)
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            header = bytearray(f.read(100))
            page = struct.unpack(">H", header[16:18])[0]
            counter = struct.unpack(">I", header[24:28])[0]
            header[28:32] = struct.pack(">I", size // page + 10)
            header[92:96] = struct.pack(">I", counter)
            f.seek(0)
            f.write(header)
        assert os.path.getsize(path + "-journal") > 0
        """

    @Test func aCommitKilledInRollbackModeOpensRolledBack() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let graph = SQLiteTestKit.exampleGraph(posts: 5, notes: 2)
        let container = try SQLiteTestKit.open(url)
        try SQLiteTestKit.insert(graph, into: container)
        try await container.close()
        let result = try await runPython(Self.killedCommit, [url.path])
        try #require(result.status == 0, "python3 failed: \(result.standardError)")

        let reopened = try SQLiteTestKit.open(url)
        #expect(try SQLiteTestKit.fetchAll(Post.self, from: reopened, by: \.id) == graph.posts.sorted { $0.id < $1.id })
        #expect(try reopened.mainContext.fetchCount(FetchDescriptor<Note>()) == graph.notes.count)
        try reopened.checkInvariants()
        try await reopened.close()
    }

    /// A plain SQLite database whose writer was killed mid-transaction leaves a hot rollback
    /// journal, which a read-only reader cannot roll back: reading it for a migration says so,
    /// naming the journal, and changes nothing (SQLite's own message was "attempt to write a
    /// readonly database").
    @Test func aSourceWithAHotRollbackJournalIsRefusedSayingWhy() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("legacy.db")
        let script = """
            import os, signal, sqlite3, sys
            path = sys.argv[1]
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA journal_mode=DELETE")
            db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT)")
            db.execute("INSERT INTO item VALUES (1, 'kept')")
            db.close()
            pid = os.fork()
            if pid == 0:
                db = sqlite3.connect(path, isolation_level=None)
                db.execute("PRAGMA cache_size=2")
                db.execute("BEGIN")
                for i in range(2, 400):
                    db.execute("INSERT INTO item VALUES (?, ?)", (i, "x" * 500))
                os.kill(os.getpid(), signal.SIGKILL)
            os.waitpid(pid, 0)
            assert os.path.getsize(path + "-journal") > 0
            """
        let result = try await runPython(script, [url.path])
        try #require(result.status == 0, "python3 failed: \(result.standardError)")
        let before = [try Data(contentsOf: url), try Data(contentsOf: URL(fileURLWithPath: url.path + "-journal"))]

        let error = SQLiteTestKit.storeError { _ = try Migration.readStore(from: url) }
        guard case .fileOperationFailed(_, _, let reason)? = error else {
            Issue.record("expected fileOperationFailed, got \(String(describing: error))")
            return
        }
        #expect(reason.contains(url.path + "-journal"), "\(reason)")
        #expect(reason.contains("stopped in the middle"), "\(reason)")
        #expect([try Data(contentsOf: url), try Data(contentsOf: URL(fileURLWithPath: url.path + "-journal"))] == before)
    }
}
