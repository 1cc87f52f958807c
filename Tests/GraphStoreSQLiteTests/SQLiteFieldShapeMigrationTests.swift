import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A SQLite store whose objects hold URLs, decimals (one longer than a double holds) and
/// optional dates and data migrates to the app's next model version with every value.
@Suite struct SQLiteFieldShapeMigrationTests {
    struct Old: Entity, Equatable {
        var id: Int
        var link: URL
        var price: Decimal
        var visited: Date?
        var icon: Data?
        var links: [URL]
        static var entityName: String { "Bookmark" }
    }

    struct New: Entity, Equatable {
        var id: Int
        var link: URL
        var price: Decimal
        var visited: Date?
        var icon: Data?
        var links: [URL]
        var note: String
        static var entityName: String { "Bookmark" }
    }

    static func bookmark(_ n: Int) -> Old {
        let price = Decimal(string: n == 0 ? "12345678901234567890.123456789" : "\(n).25", locale: Locale(identifier: "en_US_POSIX"))!
        let visited: Date? = n >= 70 ? Date(timeIntervalSinceReferenceDate: 800_000_000.5 + Double(n)) : nil
        let icon: Data? = n >= 70 ? Data([UInt8(n), 0, 255]) : nil
        let links: [URL] = n % 3 == 0 ? [URL(string: "file:///tmp/\(n)")!] : []
        return Old(id: n, link: URL(string: "https://example.com/\(n)")!, price: price, visited: visited, icon: icon, links: links)
    }

    /// Eighty bookmarks, the optional fields set only after the objects a header's hints sample.
    static let bookmarks = (0..<80).map(bookmark)

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
        let container = try GraphContainer(for: [Old.self], store: .file(snapshot, format: format), version: 1)
        container.mainContext.insert(contentsOf: Self.bookmarks)
        try container.mainContext.save()
        try await container.close()
        let sqlite = directory.file("bookmarks.sqlite")
        try Migration.snapshotToSQLite(from: snapshot, to: sqlite)
        #expect(try await Self.fetch(Old.self, .sqlite(sqlite)).sorted { $0.id < $1.id } == Self.bookmarks)
        let back = directory.file("back.json.gz")
        try Migration.sqliteToSnapshot(from: sqlite, to: back, format: .json)
        #expect(try await Self.fetch(Old.self, .file(back)).sorted { $0.id < $1.id } == Self.bookmarks)
    }

    @Test func aModelMigrationKeepsTheValues() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("bookmarks.sqlite")
        let bookmarks = Self.bookmarks
        let old = try GraphContainer(for: [Old.self], store: .sqlite(url), version: 1)
        old.mainContext.insert(contentsOf: bookmarks)
        try old.mainContext.save()
        try await old.close()
        let migrations = [SchemaMigration(from: 1, to: 2, [.addField("note", in: "Bookmark", default: .string(""))])]
        let container = try GraphContainer(for: [New.self], store: .sqlite(url), version: 2, migrations: migrations)
        let expected = bookmarks.map {
            New(id: $0.id, link: $0.link, price: $0.price, visited: $0.visited, icon: $0.icon, links: $0.links, note: "")
        }
        #expect(try container.mainContext.fetch(FetchDescriptor<New>(sortBy: [SortDescriptor(\.id)])) == expected)
        try await container.close()
    }
}
