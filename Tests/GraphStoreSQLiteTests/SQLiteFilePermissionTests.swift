import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files that hold a SQLite store's data have the database file's permissions: the
/// GraphStore journal beside it, and a database a migration writes over it.
@Suite struct SQLiteFilePermissionTests {
    private func mode(_ path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    /// A closed SQLite store at `url` holding the tag `name`.
    private func makeStore(_ url: URL, tag name: String) async throws {
        let container = try SQLiteTestKit.open(url)
        container.mainContext.insert(ExampleModel.Tag(name: name))
        try container.mainContext.save()
        try await container.close()
    }

    @Test(arguments: [0o600, 0o640] as [mode_t])
    func theJournalHasTheDatabasesMode(permissions: mode_t) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await makeStore(url, tag: "one")
        #expect(chmod(url.path, permissions) == 0)

        let container = try SQLiteTestKit.open(url)
        container.mainContext.insert(ExampleModel.Tag(name: "two"))
        try container.mainContext.save()
        let journal = mode(url.path + ".journal")
        try await container.close()
        #expect(journal == permissions, "journal: \(journal.map { String($0, radix: 8) } ?? "missing")")
        #expect(mode(url.path) == permissions)
    }

    /// A migration told to overwrite a private store leaves a private store.
    @Test func aStoreAMigrationReplacesKeepsItsMode() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite"), other = directory.file("other.sqlite")
        try await makeStore(url, tag: "before")
        try await makeStore(other, tag: "other")
        #expect(chmod(url.path, 0o600) == 0)

        try Migration.writeSQLite(try Migration.readSQLite(from: other), to: url, options: MigrationOptions(overwrite: true))
        #expect(mode(url.path) == 0o600, "\(mode(url.path).map { String($0, radix: 8) } ?? "missing")")
        let replaced = try SQLiteTestKit.open(url)
        #expect(Set(try replaced.mainContext.fetch(FetchDescriptor<ExampleModel.Tag>()).map(\.name)) == ["other"])
        try await replaced.close()
    }
}
