import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// Ids that are equal in Swift but encode to other bytes ("é" precomposed or decomposed) name
/// one object in the graph and one row in the
/// database, which compares ids byte by byte: an update or a deletion through the other
/// spelling must reach that row, through the background write and through the journal's replay
/// at open alike.
@Suite struct SQLiteIDSpellingTests {
    struct Named: Entity, Equatable {
        static var entityName: String { "Named" }
        var id: String
        var value: Int
    }

    static let precomposed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    /// Whether the save is written by the background writer (`false`) or left only in the
    /// journal, as by a process killed before the write, and replayed at the next open.
    static let journalOnly = [false, true]

    /// Saves `first`, closes; then runs `change` in a new container and closes it, or, when
    /// `journalOnly`, puts the database back as it was before the change beside the journal
    /// the change left.
    static func save(
        _ first: [any Entity], then change: (GraphContext) throws -> Void, at url: URL, model: [any Entity.Type], journalOnly: Bool
    ) async throws {
        let container = try GraphContainer(for: model, store: .sqlite(url))
        for object in first { container.mainContext.insert(object) }
        try container.mainContext.save()
        try await container.close()
        if journalOnly {
            try await SQLiteJournalTestKit.leaveInJournalOnly(url, model: model, change)
            return
        }
        let second = try GraphContainer(for: model, store: .sqlite(url))
        try change(second.mainContext)
        try await second.close()
    }

    /// The values of every object, sorted, after opening and closing the store.
    static func values<E: Entity>(_ type: E.Type, _ url: URL, _ value: (E) -> Int) async throws -> [Int] {
        let container = try GraphContainer(for: [type], store: .sqlite(url))
        let found = try container.mainContext.fetch(FetchDescriptor<E>()).map(value).sorted()
        try await container.close()
        return found
    }

    /// The rows of `table`, as an outside program reads them: (id bytes as hex, value).
    static func rows(_ table: String, _ url: URL) async throws -> [String] {
        let output = try await SQLiteTestKit.pythonJSON(
            "import json, sqlite3, sys\nrows = sqlite3.connect(sys.argv[1]).execute('SELECT id, value FROM \(table) ORDER BY value').fetchall()\nprint(json.dumps([str(i.encode('utf-8').hex()) + ':' + str(v) for i, v in rows]))",
            [url.path])
        return (output as? [String]) ?? []
    }

    @Test(arguments: journalOnly)
    func anUpdateThroughAnotherSpellingReplacesTheRow(journalOnly: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("named.sqlite")
        try await Self.save([Named(id: Self.precomposed, value: 1)], then: { context in
            context.insert(Named(id: Self.decomposed, value: 2))
            try context.save()
            #expect(try context.fetch(FetchDescriptor<Named>()).map(\.value) == [2])
        }, at: url, model: [Named.self], journalOnly: journalOnly)
        // Twice: the first open after a crash replays the journal and writes its rows.
        #expect(try await Self.values(Named.self, url, \.value) == [2])
        #expect(try await Self.values(Named.self, url, \.value) == [2])
        // One row, spelled as the update spelled it.
        #expect(try await Self.rows("Named", url) == [Data(Self.decomposed.utf8).map { String(format: "%02x", $0) }.joined() + ":2"])
    }

    @Test(arguments: journalOnly)
    func aDeletionThroughAnotherSpellingDeletesTheRow(journalOnly: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("named.sqlite")
        try await Self.save([Named(id: Self.precomposed, value: 1), Named(id: "other", value: 3)], then: { context in
            context.delete(Named.self, id: Self.decomposed)
            try context.save()
            #expect(try context.fetch(FetchDescriptor<Named>()).map(\.value) == [3])
        }, at: url, model: [Named.self], journalOnly: journalOnly)
        #expect(try await Self.values(Named.self, url, \.value) == [3])
        #expect(try await Self.values(Named.self, url, \.value) == [3])
    }

    struct Tagged: Entity, Equatable {
        static var entityName: String { "Tagged" }
        var id: UUID
        var value: Int
    }

    static let lowercaseIDs = ["1b4e28ba-2fa1-11d2-883f-0016d3cca427", "2b4e28ba-2fa1-11d2-883f-0016d3cca427", "3b4e28ba-2fa1-11d2-883f-0016d3cca427"]

    /// A store whose UUID ids are spelled in lowercase, as a migration from another program's
    /// file (an import, a hand-written snapshot) leaves them; the store writes UUIDs in capitals.
    static func lowercaseStore(_ url: URL, in directory: TemporaryDirectory) throws {
        let objects = lowercaseIDs.enumerated().map { #"{"id":"\#($0.element)","value":\#($0.offset + 1)}"# }
        let source = directory.file("lowercase.json")
        try Data("""
            {"header":{"format":"GraphStore","formatVersion":1,"modelVersion":"1","savedAt":0,"storeVersion":1,\
            "counts":{"Tagged":3},"dateEncoding":"secondsSince2001","fieldTypes":null},\
            "entities":{"Tagged":[\(objects.joined(separator: ","))]}}
            """.utf8).write(to: source)
        try Migration.snapshotToSQLite(from: source, to: url)
    }

    /// The app updates one object and deletes another of such a store: each reaches its row,
    /// so the store opens again with one row per object (before, the update added a second row,
    /// "the id appears twice", and the deleted object stayed).
    @Test(arguments: journalOnly)
    func aLowercaseUUIDRowIsUpdatedAndDeleted(journalOnly: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("tagged.sqlite")
        try Self.lowercaseStore(url, in: directory)
        #expect(try await Self.rows("Tagged", url).count == 3)
        let ids = Self.lowercaseIDs.map { UUID(uuidString: $0)! }
        let change: (GraphContext) throws -> Void = { context in
            context.insert(Tagged(id: ids[0], value: 10))
            context.delete(Tagged.self, id: ids[1])
            try context.save()
        }
        if journalOnly {
            try await SQLiteJournalTestKit.leaveInJournalOnly(url, model: [Tagged.self], change)
        } else {
            let container = try GraphContainer(for: [Tagged.self], store: .sqlite(url))
            try change(container.mainContext)
            try await container.close()
        }
        #expect(try await Self.values(Tagged.self, url, \.value) == [3, 10])
        #expect(try await Self.values(Tagged.self, url, \.value) == [3, 10])
        // Every row spelled as the store writes it.
        let rows = try await SQLiteTestKit.pythonJSON(
            "import json, sqlite3, sys\nprint(json.dumps(sorted(r[0] for r in sqlite3.connect(sys.argv[1]).execute('SELECT id FROM Tagged'))))",
            [url.path]) as? [String]
        #expect(rows == [ids[0], ids[2]].map(\.uuidString).sorted())
    }
}
