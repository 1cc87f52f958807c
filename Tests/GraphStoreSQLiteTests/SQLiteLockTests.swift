import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// An open store holds an exclusive SQLite lock on its file: a second container, in this
/// process or another, gets a clear error instead of a second writer.
@Suite struct SQLiteLockTests {
    @Test func aSecondContainerIsRefusedUntilTheFirstCloses() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let first = try SQLiteTestKit.open(url)
        first.mainContext.insert(ExampleModel.Tag(name: "swift"))
        try first.mainContext.save()
        try await first.flush()

        let error = SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url) }
        #expect(error == .storeLocked(path: url.path))
        #expect(error?.description.contains("open in another container or process") == true)
        // The refused container did not disturb the first one.
        first.mainContext.insert(ExampleModel.Tag(name: "linux"))
        try first.mainContext.save()
        try await first.close()

        let second = try SQLiteTestKit.open(url)
        #expect(second.count(of: ExampleModel.Tag.self) == 2)
        try await second.close()
    }

    /// Another process is refused while the store is open. Also after a second container was
    /// refused in this process: that open must not weaken the first one's lock (it read the
    /// database file with a descriptor of its own, and closing any descriptor of a file drops
    /// every POSIX lock the process holds on it, so another process could then open and write
    /// the store under the open container).
    @Test(arguments: [false, true])
    func anotherProcessCannotReadTheOpenStore(afterARefusedSecondContainer: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let container = try SQLiteTestKit.open(url)
        container.mainContext.insert(ExampleModel.Tag(name: "swift"))
        try container.mainContext.save()
        try await container.flush()
        if afterARefusedSecondContainer {
            #expect(SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url) } == .storeLocked(path: url.path))
        }

        try await SQLiteTestKit.expectLockedAgainstOtherProcesses(url, table: "Tag")
        try await container.close()
        let afterClose = try await SQLiteTestKit.countFromAnotherProcess(url, table: "Tag")
        #expect(afterClose.status == 0)
        #expect(afterClose.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
    }

    /// A closed store in `directory` holding one tag.
    static func storeWithOneTag(in directory: TemporaryDirectory) async throws -> URL {
        let url = directory.file("store.sqlite")
        let container = try SQLiteTestKit.open(url)
        container.mainContext.insert(ExampleModel.Tag(name: "swift"))
        try container.mainContext.save()
        try await container.close()
        return url
    }

    /// A Python process that connects to the database at `url`, runs `python` (statements on
    /// `db`) to take its lock, and keeps it until its input closes; and whether it got there.
    /// Starting it, reading from it and waiting for it happen off the cooperative pool.
    static func holdLock(of url: URL, python: String) async throws -> (ChildProcess, Bool) {
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            \(python)
            print("locked", flush=True)
            sys.stdin.read()
            """
        return try await offCooperativePool {
            let holder = try ChildProcess(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, url.path],
                standardInput: .pipe, standardError: .inherit)
            return (holder, holder.waitForLine("locked"))
        }
    }

    /// Telling the kind of a store this process has open reads none of its file: closing a
    /// descriptor of it would drop every lock the process holds on it, the container's too.
    @Test func detectingTheKindOfAnOpenStoreKeepsItsLock() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let container = try SQLiteTestKit.open(url)
        container.mainContext.insert(ExampleModel.Tag(name: "swift"))
        try container.mainContext.save()
        try await container.flush()
        #expect(try StoreKind.detect(at: url) == .graphStoreSQLite)
        #expect(SQLiteTestKit.storeError { _ = try Migration.readStore(from: url) } == .storeLocked(path: url.path))
        try await SQLiteTestKit.expectLockedAgainstOtherProcesses(url, table: "Tag")
        try await container.close()
    }

    /// Another process holds the store as an open GraphStore store does (exclusive locking,
    /// write-ahead log, nothing written since it opened, so the `-wal` is empty): reading it
    /// is refused, not done without a lock (an immutable connection takes none).
    @Test func readingAStoreAnotherProcessHoldsIsRefusedAlsoWithAnEmptyLog() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.storeWithOneTag(in: directory)
        let (holder, locked) = try await Self.holdLock(of: url, python: """
            db.execute("PRAGMA locking_mode = EXCLUSIVE")
            db.execute("BEGIN EXCLUSIVE")
            db.execute("ROLLBACK")
            db.execute("SELECT count(*) FROM Tag").fetchone()
            """)
        #expect(locked)
        #expect((try? Data(contentsOf: URL(fileURLWithPath: url.path + "-wal")).isEmpty) ?? true)
        #expect(SQLiteTestKit.storeError { _ = try Migration.readStore(from: url) } == .storeLocked(path: url.path))
        #expect(SQLiteTestKit.storeError { _ = try SQLiteStoreInfo.inspect(url) } == .storeLocked(path: url.path))

        holder.closeStandardInput()
        _ = try await offCooperativePool { try holder.waitUntilExit() }
        let read = try Migration.readStore(from: url)
        #expect(read.snapshot.objects(of: "Tag").count == 1)
    }

    @Test func aStoreLockedByAnotherProcessIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.storeWithOneTag(in: directory)
        let (holder, locked) = try await Self.holdLock(of: url, python: #"db.execute("BEGIN EXCLUSIVE")"#)
        #expect(locked)

        let error = SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url) }
        #expect(error == .storeLocked(path: url.path))

        holder.closeStandardInput()
        _ = try await offCooperativePool { try holder.waitUntilExit() }
        let reopened = try SQLiteTestKit.open(url)
        #expect(reopened.count(of: ExampleModel.Tag.self) == 1)
        try await reopened.close()
    }
}
