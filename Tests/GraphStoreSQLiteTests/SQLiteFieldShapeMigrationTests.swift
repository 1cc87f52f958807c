import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A SQLite store whose objects hold URLs, decimals (one longer than a double holds) and
/// optional dates and data (``BookmarkModels``) migrates to the app's next model version with
/// every value, and `migrate` carries them between snapshot files and SQLite.
@Suite struct SQLiteFieldShapeMigrationTests {
    typealias V1 = BookmarkModels.V1
    typealias V2 = BookmarkModels.V2

    static func fetch<E: Entity>(_ type: E.Type, _ store: StoreConfiguration) async throws -> [E] {
        let container = try GraphContainer(for: [type], store: store, version: 1)
        let objects = try container.mainContext.fetch(FetchDescriptor<E>())
        try await container.close()
        return objects
    }

    /// `migrate` from a snapshot file of either format to SQLite and back to JSON: the app
    /// opens every file with the values it saved. (Back to a property list, a URL or decimal
    /// field cannot be told from a string or a number: the SQLite store keeps no type hints.)
    @Test(arguments: SnapshotFormat.allCases)
    func theMigrateToolCarriesTheValues(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let snapshot = directory.file("bookmarks.\(format.fileExtension).gz")
        let container = try GraphContainer(for: [V1.self], store: .file(snapshot, format: format), version: 1)
        container.mainContext.insert(contentsOf: BookmarkModels.bookmarks)
        try container.mainContext.save()
        try await container.close()
        let sqlite = directory.file("bookmarks.sqlite")
        try Migration.snapshotToSQLite(from: snapshot, to: sqlite)
        #expect(try await Self.fetch(V1.self, .sqlite(sqlite)).sorted { $0.id < $1.id } == BookmarkModels.bookmarks)
        let back = directory.file("back.json.gz")
        try Migration.sqliteToSnapshot(from: sqlite, to: back, format: .json)
        #expect(try await Self.fetch(V1.self, .file(back)).sorted { $0.id < $1.id } == BookmarkModels.bookmarks)
    }

    @Test func aModelMigrationKeepsTheValues() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("bookmarks.sqlite")
        let old = try GraphContainer(for: [V1.self], store: .sqlite(url), version: 1)
        old.mainContext.insert(contentsOf: BookmarkModels.bookmarks)
        try old.mainContext.save()
        try await old.close()
        let container = try GraphContainer(for: [V2.self], store: .sqlite(url), version: 2, migrations: BookmarkModels.migrations)
        #expect(try container.mainContext.fetch(FetchDescriptor<V2>(sortBy: [SortDescriptor(\.id)]))
            == BookmarkModels.bookmarks.map(BookmarkModels.migrated))
        try await container.close()
    }

    /// A `String` field whose only values are `"NaN"`: JSON writes it as a non-finite double's
    /// name, and SQLite keeps no NaN (it binds as NULL), so only the type hints keep it text.
    @Test(arguments: [[NonFiniteModels.Reading(id: 1, label: "NaN", value: 2)], NonFiniteModels.readings])
    func theMigrateToolKeepsNonFiniteNamesAsText(readings: [NonFiniteModels.Reading]) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let snapshot = directory.file("readings.json.gz")
        let container = try GraphContainer(for: [NonFiniteModels.Reading.self], store: .file(snapshot, format: .json), version: 1)
        container.mainContext.insert(contentsOf: readings)
        try container.mainContext.save()
        try await container.close()
        let sqlite = directory.file("readings.sqlite")
        try Migration.snapshotToSQLite(from: snapshot, to: sqlite)
        #expect(NonFiniteModels.match(try await Self.fetch(NonFiniteModels.Reading.self, .sqlite(sqlite)), readings))
    }
}
