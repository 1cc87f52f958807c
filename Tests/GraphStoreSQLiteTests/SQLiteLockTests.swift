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

    /// A second container refused in this process must not weaken the first one's lock: the
    /// refused open touched the database file with a descriptor of its own, and closing any
    /// descriptor of a file drops every POSIX lock the process holds on it, so another process
    /// could then open and write the store under the open container.
    @Test func aRefusedSecondContainerLeavesTheFirstLockedAgainstOtherProcesses() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let container = try SQLiteTestKit.open(url)
        container.mainContext.insert(ExampleModel.Tag(name: "swift"))
        try container.mainContext.save()
        try await container.flush()
        #expect(SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url) } == .storeLocked(path: url.path))

        let read = "import sqlite3, sys\nprint(sqlite3.connect(sys.argv[1], timeout=0).execute('SELECT count(*) FROM Tag').fetchone()[0])"
        let whileOpen = try await runPython(read, [url.path])
        #expect(whileOpen.status != 0, "another process read the open store: \(whileOpen.standardOutput)")
        #expect(whileOpen.standardError.contains("database is locked"))
        try await container.close()
    }

    @Test func anotherProcessCannotReadTheOpenStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let container = try SQLiteTestKit.open(url)
        container.mainContext.insert(ExampleModel.Tag(name: "swift"))
        try container.mainContext.save()
        try await container.flush()

        let read = "import sqlite3, sys\nprint(sqlite3.connect(sys.argv[1], timeout=0).execute('SELECT count(*) FROM Tag').fetchone()[0])"
        let whileOpen = try await runPython(read, [url.path])
        #expect(whileOpen.status != 0)
        #expect(whileOpen.standardError.contains("database is locked"))

        try await container.close()
        let afterClose = try await runPython(read, [url.path])
        #expect(afterClose.status == 0)
        #expect(afterClose.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
    }

    @Test func aStoreLockedByAnotherProcessIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let container = try SQLiteTestKit.open(url)
        container.mainContext.insert(ExampleModel.Tag(name: "swift"))
        try container.mainContext.save()
        try await container.close()

        // A process that takes an exclusive lock and keeps it until its input closes.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = ["python3", "-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN EXCLUSIVE")
            print("locked", flush=True)
            sys.stdin.read()
            db.execute("ROLLBACK")
            """, url.path]
        let input = Pipe()
        let output = Pipe()
        holder.standardInput = input
        holder.standardOutput = output
        // Starting it, reading from it and waiting for it happen off the cooperative pool.
        let line = try await offCooperativePool {
            try holder.run()
            return output.fileHandleForReading.availableData
        }
        #expect(String(decoding: line, as: UTF8.self).hasPrefix("locked"))

        let error = SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url) }
        #expect(error == .storeLocked(path: url.path))

        try input.fileHandleForWriting.close()
        try await offCooperativePool { holder.waitUntilExit() }
        let reopened = try SQLiteTestKit.open(url)
        #expect(reopened.count(of: ExampleModel.Tag.self) == 1)
        try await reopened.close()
    }
}
