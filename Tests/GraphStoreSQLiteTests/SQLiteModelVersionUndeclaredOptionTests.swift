import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A container that declares no model version takes the number its SQLite store's
/// model-version option names as the app's version: a store of a lower number needs a
/// migration such a container cannot declare, so it is refused as a missing link, every file
/// as it was.
@Suite struct SQLiteModelVersionUndeclaredOptionTests {
    /// A container that declares no version, whose model-version option names 2, opening a
    /// store of model version 1: refused as a missing link, every file as it was.
    @Test func anUndeclaredNewerOptionWithoutMigrationsIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try SQLiteMigrationTestKit.copyFixture(to: directory)
        let before = SQLiteMigrationTestKit.files(in: directory.url)
        try await expectUndeclaredNewerOptionRefused(.sqlite(url, options: SQLiteStoreOptions(modelVersion: "2")), path: url.path)
        #expect(SQLiteMigrationTestKit.files(in: directory.url) == before)
    }
}
