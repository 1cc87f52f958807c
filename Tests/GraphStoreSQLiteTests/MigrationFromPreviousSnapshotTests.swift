import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A migration whose source is the destination's previous snapshot (a store recovered by hand)
/// reads it and keeps it.
@Suite struct MigrationFromPreviousSnapshotTests {
    @Test func aMigrationFromTheDestinationsPreviousSnapshotKeepsIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz"), previous = URL(fileURLWithPath: store.path + ".previous")
        for run in 1...2 {
            let container = try GraphContainer(for: SQLiteTestKit.model, store: .file(store))
            container.mainContext.insert(ExampleModel.Tag(name: "t \(run)"))
            try container.mainContext.save()
            try await container.close()
        }
        let kept = try Data(contentsOf: previous)
        try Data("damaged".utf8).write(to: store)
        try Migration.snapshotToSQLite(from: previous, to: store, options: MigrationOptions(overwrite: true))
        #expect(SQLiteStoreInfo.isSQLiteDatabase(at: store))
        #expect((try? Data(contentsOf: previous)) == kept, "the migration's source was removed")
    }
}
