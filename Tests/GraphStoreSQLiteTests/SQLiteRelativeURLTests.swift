import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// URLs with a base (``RelativeURLModels``) read back `==` from a SQLite store (its `json`
/// columns hold the URL's `Codable` form, `{"relative": …, "base": …}`), from its journal after
/// a crash, through `migrate` between snapshot files and SQLite, and through a model migration;
/// a URL without a base keeps the column text stores have always held.
@Suite struct SQLiteRelativeURLTests {
    typealias Models = RelativeURLModels
    typealias V1 = RelativeURLModels.V1
    typealias V2 = RelativeURLModels.V2

    /// A closed version-1 SQLite store holding ``RelativeURLModels/links``.
    static func write(_ url: URL) async throws {
        let container = try GraphContainer(for: [V1.self], store: .sqlite(url), version: 1)
        container.mainContext.insert(contentsOf: Models.links)
        try container.mainContext.save()
        try await container.close()
    }

    @Test func aSQLiteStoreReadsBackEveryURL() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("links.sqlite")
        try await Self.write(url)
        #expect(try await Models.fetch(V1.self, .sqlite(url)) == Models.links)

        // The column text: a URL without a base as `JSONEncoder` writes it, as before.
        let texts = try await DatabaseQueue(path: url.path).read { db in
            try String.fetchAll(db, sql: "SELECT link FROM \("Link".quotedDatabaseIdentifier) ORDER BY id")
        }
        #expect(texts.count == Models.links.count)
        for (text, link) in zip(texts, Models.links) {
            if let base = link.link.baseURL {
                let form = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]
                #expect(form == ["relative": link.link.relativeString, "base": base.absoluteString])
            } else {
                #expect(text == String(decoding: try JSONEncoder().encode(link.link), as: UTF8.self))
            }
        }
    }

    /// The saves a crash left in the journal only are replayed with every URL as saved.
    @Test func theJournalReplaysEveryURL() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("links.sqlite")
        let first = try GraphContainer(for: [V1.self], store: .sqlite(url), version: 1)
        first.mainContext.insert(Models.link(100))
        try first.mainContext.save()
        try await first.close()

        let gate = WriterGate()
        var options = SQLiteStoreOptions()
        options.beforeTransaction = { _ in gate.pass() }
        let live = try GraphContainer(for: [V1.self], store: .sqlite(url, options: options), version: 1)
        gate.close()
        live.mainContext.insert(contentsOf: Models.links)
        try live.mainContext.save()
        await gate.waitUntilReached()
        let crashed = try SQLiteJournalTestKit.crashCopy(of: url, to: directory.file("crashed"))
        gate.open()
        try await live.close()

        #expect(try await Models.fetch(V1.self, .sqlite(crashed)) == Models.links + [Models.link(100)])
        #expect(try await Models.fetch(V1.self, .sqlite(crashed)) == Models.links + [Models.link(100)])
    }

    /// `migrate` from a snapshot file of either format to SQLite, and back to either format
    /// (a property list's URLs are dictionaries, where the field types the SQLite file records
    /// from the snapshot's header say).
    @Test(arguments: SnapshotFormat.allCases)
    func theMigrateToolCarriesEveryURL(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let snapshot = directory.file("links.\(format.fileExtension).gz")
        let container = try GraphContainer(for: [V1.self], store: .file(snapshot, format: format), version: 1)
        container.mainContext.insert(contentsOf: Models.links)
        try container.mainContext.save()
        try await container.close()

        let sqlite = directory.file("links.sqlite")
        try Migration.snapshotToSQLite(from: snapshot, to: sqlite)
        #expect(try await Models.fetch(V1.self, .sqlite(sqlite)) == Models.links)
        for other in SnapshotFormat.allCases {
            let back = directory.file("back.\(other.fileExtension).gz")
            try Migration.sqliteToSnapshot(from: sqlite, to: back, format: other)
            #expect(try await Models.fetch(V1.self, .file(back, format: other)) == Models.links, "\(format) → SQLite → \(other)")
        }
    }

    /// The same from a store the app wrote: it records the field types itself.
    @Test func aTypedStoreMigratesToEitherFormat() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("links.sqlite")
        try await Self.write(url)
        for format in SnapshotFormat.allCases {
            let snapshot = directory.file("links.\(format.fileExtension).gz")
            try Migration.sqliteToSnapshot(from: url, to: snapshot, format: format)
            #expect(try await Models.fetch(V1.self, .file(snapshot, format: format)) == Models.links, "\(format)")
        }
    }

    @Test func aModelMigrationKeepsEveryURL() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("links.sqlite")
        try await Self.write(url)
        let expected = Models.links.map(Models.migrated)
        #expect(try await Models.fetch(V2.self, .sqlite(url), version: 2, migrations: Models.migrations) == expected)
        #expect(try await Models.fetch(V2.self, .sqlite(url), version: 2, migrations: Models.migrations) == expected)
    }

    /// `origin` renamed without a new model version: the check decodes a row holding URLs with
    /// a base as the store does, and refuses the store rather than letting the row pass.
    @Test func aColumnRenamedBesideAURLWithABaseIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("links.sqlite")
        try await Self.write(url)
        let error = SQLiteTestKit.storeError { _ = try GraphContainer(for: [Models.Renamed.self], store: .sqlite(url), version: 1) }
        guard case .codingFailed(_, let entity, _, let reason)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(entity == "Link")
        #expect(reason.contains("Link.origin"))
        #expect(try await Models.fetch(V1.self, .sqlite(url)) == Models.links)
    }
}
