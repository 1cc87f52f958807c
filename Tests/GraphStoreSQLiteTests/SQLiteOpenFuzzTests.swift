import ExampleModel
import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// Random damage to a real SQLite store and its journal: every mutated pair either opens (a
/// consistent graph) or is refused with a ``GraphStoreError`` that leaves the database file
/// byte for byte as it was. Never a crash or another error type. `swift test` runs a few
/// iterations; `scripts/fuzz-open.sh N` runs N.
@Suite struct SQLiteOpenFuzzTests {
    static let iterations = ProcessInfo.processInfo.environment["GRAPHSTORE_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 30
    static let seed = ProcessInfo.processInfo.environment["GRAPHSTORE_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x5EED

    /// A store of notes and tags, closed, and a journal of later saves its database does not
    /// hold (the database put back as it was before them).
    static func makeStore(in directory: TemporaryDirectory) async throws -> (database: Data, journal: Data) {
        let url = directory.file("seed.sqlite")
        let first = try GraphContainer(for: exampleModel, store: .sqlite(url))
        let tags = Fixtures.tagNames.map { ExampleModel.Tag(name: $0) }
        for tag in tags { first.mainContext.insert(tag) }
        for number in 0..<12 {
            first.mainContext.insert(Note(text: "note \(number) é", createdAt: Fixtures.epoch.addingTimeInterval(Double(number)), tagIDs: [tags[number % tags.count].id]))
        }
        try first.mainContext.save()
        try await first.close()
        try await SQLiteJournalTestKit.leaveInJournalOnly(url, model: exampleModel) { context in
            let notes = try context.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.text)]))
            for (index, var note) in notes.prefix(4).enumerated() {
                note.text += " edited \(index)"
                context.insert(note)
                try context.save()
            }
            context.delete(notes[5])
            try context.save()
        }
        return (try Data(contentsOf: url), try Data(contentsOf: SQLiteJournalTestKit.journal(of: url)))
    }

    /// Opens the pair; returns the notes' texts when it opened.
    @discardableResult
    static func openOnce(database: Data, journal: Data, label: String) async throws -> [String]? {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try database.write(to: url)
        try journal.write(to: URL(fileURLWithPath: url.path + ".journal"))
        return try await FileMutations.openOrRefused(label, files: [url: database]) {
            try GraphContainer(for: exampleModel, store: .sqlite(url))
        }
    }

    /// A metadata row holding NULL or a number where text belongs (as a damaged page can)
    /// is refused naming the file, not a trap in the row decoding (found by this fuzz test).
    /// A metadata key that is a number is a key the store does not know: the store opens.
    @Test(arguments: [
        // The table's NOT NULL is bypassed as damage would: a copy without it.
        """
        ALTER TABLE graphstore_columns RENAME TO damaged; CREATE TABLE graphstore_columns (entity, "column", kind);
        INSERT INTO graphstore_columns SELECT * FROM damaged; DROP TABLE damaged; UPDATE graphstore_columns SET entity = NULL
        """,
        "UPDATE graphstore_columns SET kind = 7",
        "UPDATE graphstore_metadata SET key = 5 WHERE key = 'fieldTypes'",
    ])
    func metadataOfAnotherTypeIsRefused(damage: String) async throws {
        let refused = !damage.contains("graphstore_metadata")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let container = try GraphContainer(for: exampleModel, store: .sqlite(url))
        container.mainContext.insert(Note(text: "one", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        try await container.close()
        let queue = try DatabaseQueue(path: url.path)
        try await queue.write { try $0.execute(sql: damage) }
        try queue.close()
        let damaged = try Data(contentsOf: url)
        do {
            let opened = try GraphContainer(for: exampleModel, store: .sqlite(url))
            #expect(!refused, "a store with damaged metadata opened")
            try await opened.close()
            return
        } catch let error as GraphStoreError {
            guard case .damagedFile(let path, _, _) = error else {
                Issue.record("not damagedFile: \(error)")
                return
            }
            #expect(path == url.path)
        }
        #expect(try Data(contentsOf: url) == damaged)
    }

    @Test func mutatedDatabasesAndJournalsOpenOrAreRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (database, journal) = try await Self.makeStore(in: directory)
        let texts = try #require(try await Self.openOnce(database: database, journal: journal, label: "unmutated"))
        #expect(texts.count == 11 && texts.filter { $0.contains("edited") }.count == 4)
        var random = SplitMix64(seed: Self.seed)
        for iteration in 0..<Self.iterations {
            let label = "iteration \(iteration) (seed \(Self.seed))"
            switch iteration % 3 {
            case 0: try await Self.openOnce(database: FileMutations.mutate(database, using: &random), journal: journal, label: label)
            case 1: try await Self.openOnce(database: database, journal: FileMutations.mutate(journal, using: &random), label: label)
            default:
                try await Self.openOnce(
                    database: FileMutations.mutate(database, using: &random), journal: FileMutations.mutate(journal, using: &random), label: label)
            }
        }
    }
}
