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

    /// A SQLite store's journal records are JSON: a migration step sees a text column's "NaN"
    /// in one as the string it is, as in the table.
    @Test func aMigrationStepSeesJournalStringsOfASQLiteStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("readings.sqlite")
        let first = try GraphContainer(for: [NonFiniteModels.Reading.self], store: .sqlite(url), version: 1)
        first.mainContext.insert(contentsOf: NonFiniteModels.readings.dropFirst(3))
        try first.mainContext.save()
        try await first.close()

        // The readings labelled with the non-finite names, saved while the writer is held: after
        // a crash, in the journal only.
        let gate = WriterGate()
        var options = SQLiteStoreOptions()
        options.beforeTransaction = { _ in gate.pass() }
        let old = try GraphContainer(for: [NonFiniteModels.Reading.self], store: .sqlite(url, options: options), version: 1)
        gate.close()
        old.mainContext.insert(contentsOf: NonFiniteModels.readings.prefix(3))
        try old.mainContext.save()
        await gate.waitUntilReached()
        let crashed = try SQLiteJournalTestKit.crashCopy(of: url, to: directory.file("crashed"))
        gate.open()
        try await old.close()

        let container = try GraphContainer(
            for: [NonFiniteModels.CappedReading.self], store: .sqlite(crashed), version: 2, migrations: NonFiniteModels.CappedReading.migrations)
        let migrated = try container.mainContext.fetch(FetchDescriptor<NonFiniteModels.CappedReading>())
        try await container.close()
        #expect(NonFiniteModels.match(migrated.map(\.reading), NonFiniteModels.capped(NonFiniteModels.readings)))
    }
}
