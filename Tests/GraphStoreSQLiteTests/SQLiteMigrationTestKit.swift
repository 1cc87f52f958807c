import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// The committed version-1 SQLite fixture and what the migration tests do with it.
enum SQLiteMigrationTestKit {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/ModelVersions")

    /// A copy of `v1.sqlite` in `directory`, as `store.sqlite`.
    static func copyFixture(to directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("store.sqlite")
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("v1.sqlite"), to: url)
        return url
    }

    /// Opens the store at `url` with version 3 of the model and `migrations`.
    static func open(
        _ url: URL, version: Int = 3, migrations: [SchemaMigration] = ModelV3.migrations, types: [any Entity.Type] = ModelV3.types,
        options: SQLiteStoreOptions = SQLiteStoreOptions()
    ) throws -> GraphContainer {
        try GraphContainer(for: types, store: .sqlite(url, options: options), version: version, migrations: migrations)
    }

    /// The notes, sorted by body.
    static func notes(_ container: GraphContainer) throws -> [ModelV3.Note] {
        try container.mainContext.fetch(FetchDescriptor<ModelV3.Note>(sortBy: [SortDescriptor(\.body)]))
    }

    /// The bytes of every file in `directory` (the database, its `-wal` and `-shm` when there
    /// are, the journal), by name.
    static func files(in directory: URL) -> [String: Data] {
        SQLiteJournalTestKit.snapshot(of: directory)
    }

    /// Opens `url` expecting a refusal; returns the error after checking that it names the file
    /// and says the store was left untouched.
    static func refused(
        _ url: URL, version: Int = 3, migrations: [SchemaMigration], types: [any Entity.Type] = ModelV3.types,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> GraphStoreError? {
        do {
            let container = try open(url, version: version, migrations: migrations, types: types)
            Issue.record("the store opened", sourceLocation: sourceLocation)
            _ = container
        } catch let error as GraphStoreError {
            #expect(error.description.contains(url.path), sourceLocation: sourceLocation)
            return error
        } catch {
            Issue.record("not a GraphStoreError: \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }
}
