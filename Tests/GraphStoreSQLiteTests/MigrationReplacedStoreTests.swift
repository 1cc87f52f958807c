import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// What a migration does to the store it replaces besides its file: the replaced store's
/// previous snapshot (`<file>.previous`) goes only once a new snapshot store is in place, so
/// that recovering the new store never opens it, and a failed migration leaves it as it was.
@Suite struct MigrationReplacedStoreTests {
    private static func previous(_ url: URL) -> URL { URL(fileURLWithPath: url.path + ".previous") }

    /// A snapshot store saved in two runs (so that it has a previous snapshot), holding `tag`.
    private func makeStore(_ url: URL, tag: String) async throws {
        for run in 1...2 {
            let container = try GraphContainer(for: SQLiteTestKit.model, store: .file(url))
            container.mainContext.insert(ExampleModel.Tag(name: "\(tag) \(run)"))
            try container.mainContext.save()
            try await container.close()
        }
        #expect(FileManager.default.fileExists(atPath: Self.previous(url).path))
    }

    @Test func theReplacedStoresPreviousSnapshotGoesOnlyWithASuccessfulMigration() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz"), other = directory.file("other.json.gz")
        try await makeStore(store, tag: "old")
        try await makeStore(other, tag: "new")
        let snapshot = try GenericSnapshot.read(from: other)
        let previousBytes = try Data(contentsOf: Self.previous(store)), storeBytes = try Data(contentsOf: store)

        struct Injected: Error {}
        var failing = MigrationOptions(overwrite: true)
        failing.beforeRename = { _ in throw Injected() }
        #expect(throws: Injected.self) { try Migration.writeSnapshot(snapshot, to: store, options: failing) }
        #expect(throws: Injected.self) { try Migration.writeSQLite(snapshot, to: store, options: failing) }
        #expect(try Data(contentsOf: Self.previous(store)) == previousBytes)
        #expect(try Data(contentsOf: store) == storeBytes)

        try Migration.writeSnapshot(snapshot, to: store, options: MigrationOptions(overwrite: true))
        #expect(!FileManager.default.fileExists(atPath: Self.previous(store).path))
        #expect(try GenericSnapshot.read(from: store).objects(of: "Tag").count == 2)
    }

    /// Through a symbolic link, the previous snapshot beside the file it points to is the
    /// store's, and goes; nothing is done beside the link.
    @Test func throughASymbolicLinkThePreviousSnapshotOfTheFileGoes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz"), link = directory.file("link.json.gz"), other = directory.file("other.json.gz")
        try await makeStore(store, tag: "old")
        try await makeStore(other, tag: "new")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: store.lastPathComponent)
        try Data("a file of the user's".utf8).write(to: Self.previous(link))
        try Migration.writeSnapshot(try GenericSnapshot.read(from: other), to: link, options: MigrationOptions(overwrite: true))
        #expect(!FileManager.default.fileExists(atPath: Self.previous(store).path))
        #expect(FileManager.default.fileExists(atPath: Self.previous(link).path))
        #expect(try GenericSnapshot.read(from: store).objects(of: "Tag").count == 2)
    }

    /// A SQLite store never reads a previous snapshot: one beside a database the migration
    /// writes is someone's copy, neither removed nor a reason to refuse.
    @Test func aSQLiteDestinationLeavesAPreviousSnapshotAlone() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz"), other = directory.file("other.json.gz")
        try await makeStore(store, tag: "old")
        try await makeStore(other, tag: "new")
        let kept = try Data(contentsOf: Self.previous(store))
        let snapshot = try GenericSnapshot.read(from: other)
        try Migration.writeSQLite(snapshot, to: store, options: MigrationOptions(overwrite: true))
        #expect(SQLiteStoreInfo.isSQLiteDatabase(at: store))
        #expect(try Data(contentsOf: Self.previous(store)) == kept)
        // Without a store file, the previous snapshot is no reason to refuse a database there.
        try FileManager.default.removeItem(at: store)
        try Migration.writeSQLite(snapshot, to: store)
        #expect(SQLiteStoreInfo.isSQLiteDatabase(at: store))
        #expect(try Data(contentsOf: Self.previous(store)) == kept)
    }

    /// A previous snapshot left without its store file is refused as an existing destination
    /// is, without overwriting: it is the last copy of that store.
    @Test func aPreviousSnapshotWithoutItsStoreIsKeptWithoutOverwrite() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz"), other = directory.file("other.json.gz")
        try await makeStore(store, tag: "old")
        try await makeStore(other, tag: "new")
        try FileManager.default.removeItem(at: store)
        let kept = try Data(contentsOf: Self.previous(store))
        let snapshot = try GenericSnapshot.read(from: other)
        for write in [
            { try Migration.writeSnapshot(snapshot, to: store) },
            { try Migration.sqliteToSnapshot(from: directory.file("none.sqlite"), to: store) },
        ] as [() throws -> Void] {
            let error = SQLiteTestKit.storeError { try write() }
            guard case .fileOperationFailed(let path, _, let reason)? = error else {
                Issue.record("expected fileOperationFailed, got \(String(describing: error))")
                continue
            }
            #expect(path == store.path)
            #expect(reason.contains(Self.previous(store).lastPathComponent), "\(reason)")
            #expect(!FileManager.default.fileExists(atPath: store.path))
            #expect(try Data(contentsOf: Self.previous(store)) == kept)
        }
        try Migration.writeSnapshot(snapshot, to: store, options: MigrationOptions(overwrite: true))
        #expect(!FileManager.default.fileExists(atPath: Self.previous(store).path))
    }
}
