import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A migration killed while it wrote (`kill -9` of `graphstore migrate`) leaves its temporary
/// file beside the destination; a later migration to that destination removes it once it has
/// gone a minute unwritten, and never a live migration's file or any other.
@Suite struct MigrationLeftoverTests {
    /// The id of a process that has exited.
    static func exitedProcessID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    /// Writes a small file at `url` and sets its modification time `secondsAgo` back.
    static func write(_ url: URL, secondsAgo: TimeInterval) throws {
        try Data("partial".utf8).write(to: url)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -secondsAgo)], ofItemAtPath: url.path)
    }

    @Test func aKilledMigrationsTemporaryFilesAreRemovedByTheNextMigration() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("source.json.gz")
        let graph = SQLiteTestKit.exampleGraph(posts: 5, notes: 2)
        try await MigrationTestKit.write(MigrationTestKit.Graph(tags: graph.tags, posts: graph.posts, notes: graph.notes), to: .file(source))
        let dead = try Self.exitedProcessID()
        try #require(kill(dead, 0) != 0 && errno == ESRCH, "process \(dead) was reused")

        let left = [
            // A SQLite destination's temporary file and SQLite's rollback journal beside it.
            ".store.sqlite.migrating-\(dead)-2a", ".store.sqlite.migrating-\(dead)-2a-journal",
            // A snapshot destination's, and the snapshot writer's own temporary file for it.
            ".store.json.migrating-\(dead)-1f", "..store.json.migrating-\(dead)-3b.tmp-\(dead)-44",
        ]
        let kept = [
            // This process's and a live one's (process 1), names without a process id, and
            // another destination's.
            ".store.json.migrating-\(getpid())-5c", ".store.json.migrating-1-6d", ".store.json.migrating-7e", ".store.json.migrating-x-7e",
            ".other.json.migrating-\(dead)-8f", "notes.txt",
        ]
        // Written two minutes ago; one of a process that is gone, written just now, stays too.
        let recent = ".store.json.migrating-\(dead)-9a"
        for name in left + kept { try Self.write(directory.file(name), secondsAgo: 120) }
        try Self.write(directory.file(recent), secondsAgo: 0)

        try Migration.snapshotToSQLite(from: source, to: directory.file("store.sqlite"))
        try Migration.sqliteToSnapshot(from: directory.file("store.sqlite"), to: directory.file("store.json"))

        let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path))
        #expect(names == Set(kept + [recent, "source.json.gz", "store.sqlite", "store.json"]).union(names.filter { $0.hasSuffix(".lock") }))
        #expect(try GenericSnapshot.read(from: directory.file("store.json")).objects(of: "Post").count == 5)
    }
}
