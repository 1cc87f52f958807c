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
        do {
            let container = try GraphContainer(for: ModelV1.types, store: .sqlite(url, options: SQLiteStoreOptions(modelVersion: "2")))
            try await container.close()
            Issue.record("the store opened")
        } catch let error as GraphStoreError {
            guard case .migrationFailed(let path, 1, 2, nil, nil, nil, let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(path == url.path)
            #expect(reason.contains("declares no migrations"))
        }
        #expect(SQLiteMigrationTestKit.files(in: directory.url) == before)
    }
}
