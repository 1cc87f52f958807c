import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// Helpers for the journaled SQLite store's tests: what a killed process leaves on disk, and
/// waiting for the background writer through its events (never by time).
enum SQLiteJournalTestKit {
    /// The files of the store at `url`: the database, SQLite's write-ahead log and the journal.
    static func storeFiles(_ url: URL) -> [URL] {
        [url, URL(fileURLWithPath: url.path + "-wal"), URL(fileURLWithPath: url.path + "-shm"), journal(of: url)]
    }

    /// The journal beside the store at `url`.
    static func journal(of url: URL) -> URL {
        URL(fileURLWithPath: url.path + ".journal")
    }

    /// Runs `change` on a new container of the closed store at `url` with its writer held at
    /// a gate, so that the saves are in the journal only, and leaves the files as a process
    /// killed then would: the database as it was before, beside the journal of those saves.
    static func leaveInJournalOnly(
        _ url: URL, model: [any Entity.Type], _ change: (GraphContext) throws -> Void
    ) async throws {
        let database = try Data(contentsOf: url)
        let gate = WriterGate()
        var options = SQLiteStoreOptions()
        options.beforeTransaction = { _ in gate.pass() }
        let container = try GraphContainer(for: model, store: .sqlite(url, options: options))
        gate.close()
        let journalBytes: Data
        do {
            defer { gate.open() }
            try change(container.mainContext)
            journalBytes = try Data(contentsOf: journal(of: url))
        }
        try await container.close()
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        try database.write(to: url)
        try journalBytes.write(to: journal(of: url))
    }

    /// Copies the store's files, as they are now, to `directory` under the same names: what the
    /// process would leave if it were killed at this instant. Call it while nothing writes the
    /// files (the writer held at a ``WriterGate``, or idle); returns the copied database's URL.
    @discardableResult
    static func crashCopy(of url: URL, to directory: URL) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for file in storeFiles(url) where FileManager.default.fileExists(atPath: file.path) {
            try FileManager.default.copyItem(at: file, to: directory.appendingPathComponent(file.lastPathComponent))
        }
        return directory.appendingPathComponent(url.lastPathComponent)
    }

    /// Waits until the writer reports a write that holds `version`.
    static func waitUntilWritten(_ version: UInt64, events: inout AsyncStream<StoreEvent>.Iterator, sourceLocation: SourceLocation = #_sourceLocation) async {
        while let event = await events.next() {
            if case .wrote(let written, _, _) = event, written >= version { return }
        }
        Issue.record("the event stream ended before version \(version) was written", sourceLocation: sourceLocation)
    }

    /// Waits for the writer's next failed write and returns its error and announced retry delay.
    static func nextFailure(_ events: inout AsyncStream<StoreEvent>.Iterator, sourceLocation: SourceLocation = #_sourceLocation) async -> (error: GraphStoreError, retryIn: Duration)? {
        while let event = await events.next() {
            if case .writeFailed(let error, let retryIn) = event { return (error, retryIn) }
        }
        Issue.record("the event stream ended without a failed write", sourceLocation: sourceLocation)
        return nil
    }

    /// Each note's text, sorted.
    static func noteTexts(_ container: GraphContainer) throws -> [String] {
        try container.mainContext.fetch(FetchDescriptor<Note>()).map(\.text).sorted()
    }

    /// Inserts one note and saves: one commit, one journal record.
    static func saveNote(_ text: String, in context: GraphContext) throws {
        context.insert(Note(text: text, createdAt: Fixtures.epoch, isArchived: false, tagIDs: []))
        try context.save()
    }

    /// The note texts of the rows in the database at `url`, as Python's `sqlite3` reads them.
    static func pythonNoteTexts(_ url: URL, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        let script = """
            import json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            print(json.dumps(sorted(row[0] for row in db.execute('SELECT text FROM Note'))))
            """
        let texts = try await SQLiteTestKit.pythonJSON(script, [url.path], sourceLocation: sourceLocation)
        return try #require(texts as? [String], sourceLocation: sourceLocation)
    }

    /// The bytes of every file in `directory`, by name.
    static func snapshot(of directory: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        for name in SQLiteTestKit.entries(of: directory) {
            files[name] = SQLiteTestKit.contents(directory.appendingPathComponent(name))
        }
        return files
    }
}
