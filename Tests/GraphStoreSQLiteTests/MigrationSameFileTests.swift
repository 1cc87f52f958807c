import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A migration given a source and a destination that are one file, under any name, is refused
/// before it reads: it would read the store before taking its lock, and write what it read
/// over the saves an app made meanwhile.
@Suite struct MigrationSameFileTests {
    /// A snapshot store holding one tag, closed.
    private func makeStore(_ url: URL) async throws {
        let container = try GraphContainer(for: SQLiteTestKit.model, store: .file(url))
        container.mainContext.insert(ExampleModel.Tag(name: "kept"))
        try container.mainContext.save()
        try await container.close()
    }

    @Test func aStoreIsNotMigratedOntoItself() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz"), link = directory.file("link.json.gz"), sqlite = directory.file("store.sqlite")
        try await makeStore(store)
        try Migration.snapshotToSQLite(from: store, to: sqlite)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: store.lastPathComponent)
        let overwrite = MigrationOptions(overwrite: true)
        let storeBytes = try Data(contentsOf: store), sqliteBytes = try Data(contentsOf: sqlite)
        let names = MigrationTestKit.files(in: directory.url)
        for (source, destination, migrate) in [
            (store, link, { try Migration.snapshotToSQLite(from: store, to: link, options: overwrite) }),
            (sqlite, sqlite, { try Migration.sqliteToSnapshot(from: sqlite, to: sqlite, options: overwrite) }),
        ] as [(URL, URL, () throws -> MigrationSummary)] {
            let error = SQLiteTestKit.storeError { _ = try migrate() }
            guard case .fileOperationFailed(let path, _, let reason)? = error else {
                Issue.record("expected fileOperationFailed, got \(String(describing: error))")
                continue
            }
            #expect(path == destination.path)
            #expect(reason.contains("same file") && reason.contains(source.path), "\(reason)")
        }
        #expect(try Data(contentsOf: store) == storeBytes && Data(contentsOf: sqlite) == sqliteBytes)
        #expect(MigrationTestKit.files(in: directory.url) == names, "a file appeared or vanished")
    }
}
