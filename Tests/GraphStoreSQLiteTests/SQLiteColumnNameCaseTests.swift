import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// SQLite compares column names ignoring case: an entity with two fields whose names differ
/// only in case (`url` and `URL`) cannot be a table. A snapshot store holds it; the SQLite
/// store and `snapshotToSQLite` refuse it with an error that names the entity and both fields,
/// where the write used to fail with SQLite's "duplicate column name" and be retried forever.
@Suite struct SQLiteColumnNameCaseTests {
    struct Link: Entity {
        var id: UUID = UUID()
        var address: String
        var shout: String?

        enum CodingKeys: String, CodingKey {
            case id
            case address = "url"
            case shout = "URL"
        }
    }

    /// Its code is stored under `ID`, which SQLite takes for the `id` primary key.
    struct Badge: Entity {
        var id: Int
        var code: String

        enum CodingKeys: String, CodingKey {
            case id
            case code = "ID"
        }
    }

    static func expectCaseClash(_ error: GraphStoreError?, entity expected: String, fields: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .codingFailed(_, let entity, _, let reason)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(entity == expected, sourceLocation: sourceLocation)
        for field in fields { #expect(reason.contains("\"\(field)\""), "\(reason)", sourceLocation: sourceLocation) }
        #expect(reason.contains("case"), "\(reason)", sourceLocation: sourceLocation)
    }

    /// The error of the first write that fails (the save that returned is in the journal, so
    /// `flush()` may return before the write fails).
    static func writeFailure(_ events: AsyncStream<StoreEvent>) async -> GraphStoreError? {
        for await event in events {
            if case .writeFailed(let error, _) = event { return error }
        }
        return nil
    }

    /// The save that returned stays in the journal; the write, every later save, closing and
    /// the next open say what is wrong, instead of retrying forever.
    @Test func fieldsDifferingOnlyInCaseAreRefusedNamingThem() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let container = try SQLiteTestKit.open(url, model: [Link.self])
        let events = container.storeEvents
        container.mainContext.insert(Link(address: "https://example.com", shout: "HTTPS://EXAMPLE.COM"))
        try container.mainContext.save()
        Self.expectCaseClash(await Self.writeFailure(events), entity: "Link", fields: ["url", "URL"])
        container.mainContext.insert(Link(address: "https://example.org"))
        Self.expectCaseClash(SQLiteTestKit.storeError { try container.mainContext.save() }, entity: "Link", fields: ["url", "URL"])
        await #expect(throws: GraphStoreError.self) { try await container.close() }

        // The journal keeps the save; opening replays it and refuses for the same reason.
        #expect(SQLiteTestKit.entries(of: directory.url).contains { $0.hasSuffix(".journal") })
        Self.expectCaseClash(SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url, model: [Link.self]) }, entity: "Link", fields: ["url", "URL"])
    }

    @Test func aFieldSpelledAsTheIDInAnotherCaseIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let container = try SQLiteTestKit.open(directory.file("store.sqlite"), model: [Badge.self])
        let events = container.storeEvents
        container.mainContext.insert(Badge(id: 1, code: "gold"))
        try container.mainContext.save()
        Self.expectCaseClash(await Self.writeFailure(events), entity: "Badge", fields: ["id", "ID"])
        _ = try? await container.close()
    }

    /// A snapshot store holds such an entity; migrating it to SQLite is refused before
    /// anything is written, naming the fields.
    @Test func migratingSuchASnapshotToSQLiteIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("links.json.gz")
        let snapshot = try GraphContainer(for: [Link.self], store: .file(source))
        snapshot.mainContext.insert(Link(address: "https://example.com", shout: "LOUD"))
        try snapshot.mainContext.save()
        try await snapshot.close()
        let destination = directory.file("links.sqlite")
        Self.expectCaseClash(SQLiteTestKit.storeError { try Migration.snapshotToSQLite(from: source, to: destination) }, entity: "Link", fields: ["url", "URL"])
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }
}
