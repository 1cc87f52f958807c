import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A migration told to overwrite its destination still never replaces a store that is open:
/// an app saving into it would go on writing the replaced file (SQLite) or write its next
/// snapshot over the migrated one (a snapshot store), and lose one or the other without an
/// error. The destination is locked as a container locks it, from before the new file is
/// built until it is in place.
@Suite struct MigrationDestinationLockTests {
    private func tagNames(_ container: GraphContainer) throws -> Set<String> {
        Set(try container.mainContext.fetch(FetchDescriptor<ExampleModel.Tag>()).map(\.name))
    }

    /// `store.sqlite` in `directory` holding the tag "before", and the snapshot of another
    /// store holding "other", to migrate over it.
    private func storeAndReplacement(in directory: TemporaryDirectory) async throws -> (url: URL, snapshot: GenericSnapshot) {
        let url = directory.file("store.sqlite"), other = directory.file("other.sqlite")
        try await SQLiteTestKit.makeStore(url, tag: "before")
        try await SQLiteTestKit.makeStore(other, tag: "other")
        return (url, try Migration.readSQLite(from: other))
    }

    /// The store at `url` holds `kept`; once closed, the migration of `snapshot` replaces it.
    private func expectKeptThenReplaced(_ url: URL, kept: Set<String>, by snapshot: GenericSnapshot) async throws {
        let reopened = try SQLiteTestKit.open(url)
        #expect(try tagNames(reopened) == kept)
        try await reopened.close()
        try Migration.writeSQLite(snapshot, to: url, options: MigrationOptions(overwrite: true))
        let replaced = try SQLiteTestKit.open(url)
        #expect(try tagNames(replaced) == ["other"])
        try await replaced.close()
    }

    @Test func anOpenSQLiteStoreIsNotReplaced() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, snapshot) = try await storeAndReplacement(in: directory)

        // Opened and not yet saved to: its write-ahead log is empty and it has no journal.
        let container = try SQLiteTestKit.open(url)
        let error = SQLiteTestKit.storeError { try Migration.writeSQLite(snapshot, to: url, options: MigrationOptions(overwrite: true)) }
        #expect(error == .storeLocked(path: url.path))
        let snapshotError = SQLiteTestKit.storeError {
            try Migration.writeSnapshot(snapshot, to: url, options: MigrationOptions(overwrite: true))
        }
        #expect(snapshotError == .storeLocked(path: url.path), "nor by a snapshot")
        container.mainContext.insert(ExampleModel.Tag(name: "after"))
        try container.mainContext.save()
        try await container.close()
        try await expectKeptThenReplaced(url, kept: ["before", "after"], by: snapshot)
    }

    @Test func anOpenSnapshotStoreIsNotReplaced() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz"), other = directory.file("other.sqlite")
        try await SQLiteTestKit.makeStore(other, tag: "migrated")
        let first = try GraphContainer(for: SQLiteTestKit.model, store: .file(url))
        first.mainContext.insert(ExampleModel.Tag(name: "before"))
        try first.mainContext.save()
        try await first.close()

        let container = try GraphContainer(for: SQLiteTestKit.model, store: .file(url))
        let error = SQLiteTestKit.storeError { try Migration.sqliteToSnapshot(from: other, to: url, options: MigrationOptions(overwrite: true)) }
        #expect(error == .storeLocked(path: url.path))
        let sqliteError = SQLiteTestKit.storeError { try Migration.writeSQLite(try Migration.readSQLite(from: other), to: url, options: MigrationOptions(overwrite: true)) }
        #expect(sqliteError == .storeLocked(path: url.path), "nor by a SQLite file")
        container.mainContext.insert(ExampleModel.Tag(name: "after"))
        try container.mainContext.save()
        try await container.close()

        let reopened = try GraphContainer(for: SQLiteTestKit.model, store: .file(url))
        #expect(try tagNames(reopened) == ["before", "after"])
        try await reopened.close()
    }

    /// While the migration builds the new file, the destination does not open: it would be
    /// replaced under the container.
    @Test(arguments: ["store.sqlite", "store.json.gz"])
    func aStoreDoesNotOpenWhileItIsReplaced(name: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file(name), other = directory.file("other.sqlite")
        try await SQLiteTestKit.makeStore(other, tag: "migrated")
        @Sendable func open() throws -> GraphContainer {
            name.hasSuffix(".sqlite") ? try SQLiteTestKit.open(url) : try GraphContainer(for: SQLiteTestKit.model, store: .file(url))
        }
        let first = try open()
        first.mainContext.insert(ExampleModel.Tag(name: "before"))
        try first.mainContext.save()
        try await first.close()

        let openedDuringTheMigration = Guarded<Result<Void, GraphStoreError>?>(nil)
        var options = MigrationOptions(overwrite: true)
        options.beforeRename = { _ in
            do {
                _ = try open()
                openedDuringTheMigration.withLock { $0 = .success(()) }
            } catch let error as GraphStoreError {
                openedDuringTheMigration.withLock { $0 = .failure(error) }
            }
        }
        let snapshot = try Migration.readSQLite(from: other)
        if name.hasSuffix(".sqlite") {
            try Migration.writeSQLite(snapshot, to: url, options: options)
        } else {
            try Migration.writeSnapshot(snapshot, to: url, options: options)
        }
        guard case .failure(.storeLocked)? = openedDuringTheMigration.withLock({ $0 }) else {
            Issue.record("the store opened while it was replaced: \(String(describing: openedDuringTheMigration.withLock { $0 }))")
            return
        }
        let replaced = try open()
        #expect(try tagNames(replaced) == ["migrated"])
        try await replaced.close()
    }

    /// A SQLite database another process holds as the SQLite store does (exclusive locking
    /// mode, in write-ahead logging) is refused, and replaced once that process is gone.
    @Test func aSQLiteStoreOpenInAnotherProcessIsNotReplaced() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, snapshot) = try await storeAndReplacement(in: directory)

        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("PRAGMA locking_mode = EXCLUSIVE")
            db.execute("SELECT count(*) FROM sqlite_master").fetchall()
            print("holding", flush=True)
            sys.stdin.read()
            db.close()
            """
        // Starting it, reading from it and waiting for it happen off the cooperative pool.
        let (holder, holding) = try await offCooperativePool {
            let holder = try ChildProcess(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, url.path],
                standardInput: .pipe, standardError: .inherit)
            return (holder, holder.waitForLine("holding"))
        }
        #expect(holding)

        let error = SQLiteTestKit.storeError { try Migration.writeSQLite(snapshot, to: url, options: MigrationOptions(overwrite: true)) }
        #expect(error == .storeLocked(path: url.path))
        holder.closeStandardInput()
        let termination = try await offCooperativePool { try holder.waitUntilExit() }
        #expect(termination == .exited(0))
        try await expectKeptThenReplaced(url, kept: ["before"], by: snapshot)
    }

    /// A destination given through a symbolic link is the store the link points to: an open
    /// one is refused, and the link is never replaced by a file.
    @Test func anOpenStoreIsNotReplacedThroughALink() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json"), link = directory.file("link.json"), other = directory.file("other.sqlite")
        try await SQLiteTestKit.makeStore(other, tag: "other")
        let container = try GraphContainer(for: SQLiteTestKit.model, store: .file(url, coalescingInterval: .seconds(3600)))
        container.mainContext.insert(ExampleModel.Tag(name: "before"))
        try container.mainContext.save()
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let snapshot = try Migration.readSQLite(from: other)

        // Refused for the store's journal (its saves are there until the next snapshot), or its lock.
        let error = SQLiteTestKit.storeError { try Migration.writeSnapshot(snapshot, to: link, options: MigrationOptions(overwrite: true)) }
        #expect(error != nil)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil, "the link was replaced by a file")
        try await container.close()
        try Migration.writeSnapshot(snapshot, to: link, options: MigrationOptions(overwrite: true))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil, "the link was replaced by a file")
        let replaced = try GraphContainer(for: SQLiteTestKit.model, store: .file(url))
        #expect(try tagNames(replaced) == ["other"])
        try await replaced.close()
    }

    /// A new snapshot store is locked as a container locks one, although no file is there yet:
    /// an app that opened the empty store meanwhile would write its first snapshot over the
    /// migrated one.
    @Test func aNewSnapshotStoreDoesNotOpenWhileItIsBuilt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("new.json.gz"), other = directory.file("other.sqlite")
        try await SQLiteTestKit.makeStore(other, tag: "migrated")
        let openedDuringTheMigration = Guarded<Result<GraphContainer, GraphStoreError>?>(nil)
        var options = MigrationOptions()
        options.beforeRename = { _ in
            do {
                let container = try GraphContainer(for: SQLiteTestKit.model, store: .file(url))
                openedDuringTheMigration.withLock { $0 = .success(container) }
            } catch let error as GraphStoreError {
                openedDuringTheMigration.withLock { $0 = .failure(error) }
            }
        }
        try Migration.writeSnapshot(try Migration.readSQLite(from: other), to: url, options: options)
        switch openedDuringTheMigration.withLock({ $0 }) {
        case .failure(let error)?:
            #expect(error == .storeLocked(path: url.path))
        case .success(let container)?:
            Issue.record("an empty store opened where the migration was building one")
            try await container.close()
        case nil:
            Issue.record("the hook did not run")
        }
        let migrated = try GraphContainer(for: SQLiteTestKit.model, store: .file(url))
        #expect(try tagNames(migrated) == ["migrated"])
        try await migrated.close()
    }

    /// A file another program creates at a destination that was free when the migration began
    /// (a SQLite app creating its database there) is never replaced, even with `overwrite`:
    /// the migration throws and removes its own file.
    @Test(arguments: ["new.sqlite", "new.json.gz"], [false, true])
    func aFileThatAppearsAtANewDestinationIsKept(name: String, overwrite: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file(name), other = directory.file("other.sqlite")
        try await SQLiteTestKit.makeStore(other, tag: "migrated")
        let theirs = Data("another program's file".utf8)
        var options = MigrationOptions(overwrite: overwrite)
        // With the empty log and shared memory an open SQLite database has beside it.
        options.beforeRename = { _ in
            try theirs.write(to: url)
            for suffix in ["-wal", "-shm"] { try Data().write(to: URL(fileURLWithPath: url.path + suffix)) }
        }
        let snapshot = try Migration.readSQLite(from: other)
        let error = SQLiteTestKit.storeError {
            if name.hasSuffix(".sqlite") {
                try Migration.writeSQLite(snapshot, to: url, options: options)
            } else {
                try Migration.writeSnapshot(snapshot, to: url, options: options)
            }
        }
        guard case .fileOperationFailed(let path, _, let reason)? = error else {
            Issue.record("expected the appeared file to be refused, got \(String(describing: error))")
            return
        }
        #expect(path == url.path)
        #expect(reason.contains("appeared"))
        #expect(try Data(contentsOf: url) == theirs, "the other program's file was replaced")
        for suffix in ["-wal", "-shm"] {
            #expect(FileManager.default.fileExists(atPath: url.path + suffix), "its \(suffix) file was removed from under it")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("migrating") }
        #expect(left.isEmpty, "the migration's temporary file stayed: \(left)")
    }
}
