import ExampleModel
import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Shared helpers for the SQLite store's tests.
enum SQLiteTestKit {
    /// The example model plus the edge-value entity.
    static let model: [any Entity.Type] = exampleModel + [SQLiteEdgeValues.self]

    /// Opens a container on the SQLite file at `url`.
    static func open(_ url: URL, options: SQLiteStoreOptions = SQLiteStoreOptions(), model: [any Entity.Type] = model) throws -> GraphContainer {
        try GraphContainer(for: model, store: .sqlite(url, options: options))
    }

    /// A SQLite store at `url` holding the one tag `tag`, closed.
    static func makeStore(_ url: URL, tag: String) async throws {
        let container = try open(url)
        container.mainContext.insert(ExampleModel.Tag(name: tag))
        try container.mainContext.save()
        try await container.close()
    }

    /// A named pipe `store.sqlite` in `directory` and a symbolic link `link.sqlite` to it.
    static func pipeAndLink(in directory: TemporaryDirectory) throws -> (pipe: URL, link: URL) {
        let pipe = directory.file("store.sqlite"), link = directory.file("link.sqlite")
        try #require(mkfifo(pipe.path, 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: pipe.lastPathComponent)
        return (pipe, link)
    }

    /// Every object of `type`, sorted by `order`.
    static func fetchAll<E: Entity, Key: Comparable>(_ type: E.Type, from container: GraphContainer, by order: (E) -> Key) throws -> [E] {
        try container.mainContext.fetch(FetchDescriptor<E>()).sorted { order($0) < order($1) }
    }

    /// A small graph of the example model: tags, posts tagged with them, notes.
    static func exampleGraph(posts postCount: Int = 30, notes noteCount: Int = 10) -> (tags: [ExampleModel.Tag], posts: [Post], notes: [Note]) {
        let tags = Fixtures.tagNames.map { ExampleModel.Tag(name: $0) }
        let posts = Fixtures.posts(postCount, tags: tags.map(\.id))
        let notes = (0..<noteCount).map { index in
            Note(
                text: "Note \(index) — ünïcödé 🎉", createdAt: Fixtures.epoch.addingTimeInterval(Double(index) + 0.123_456_789),
                isArchived: index % 2 == 0, tagIDs: Array(tags.map(\.id).prefix(index % 3)))
        }
        return (tags, posts, notes)
    }

    /// Inserts the objects and saves.
    static func insert(_ graph: (tags: [ExampleModel.Tag], posts: [Post], notes: [Note]), into container: GraphContainer) throws {
        let context = container.mainContext
        for tag in graph.tags { context.insert(tag) }
        for post in graph.posts { context.insert(post) }
        for note in graph.notes { context.insert(note) }
        try context.save()
    }

    // MARK: - Files

    /// The names in `directory`.
    static func entries(of directory: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
    }

    /// The file's bytes, or `nil` when it does not exist.
    static func contents(_ url: URL) -> Data? {
        try? Data(contentsOf: url)
    }

    // MARK: - Python

    /// Runs `script` with `python3` and decodes its standard output as JSON.
    static func pythonJSON(_ script: String, _ arguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) async throws -> Any {
        let result = try await runPython(script, arguments)
        try #require(result.status == 0, "python3 failed: \(result.standardError)", sourceLocation: sourceLocation)
        return try JSONSerialization.jsonObject(with: result.output)
    }

    /// Another process counts the rows of `table` in the store at `url`; returns the result.
    static func countFromAnotherProcess(_ url: URL, table: String) async throws -> ProcessResult {
        try await runPython(
            "import sqlite3, sys\nprint(sqlite3.connect(sys.argv[1], timeout=0).execute('SELECT count(*) FROM \(table)').fetchone()[0])", [url.path])
    }

    /// Expects another process to be refused reading the store at `url`: it is locked.
    static func expectLockedAgainstOtherProcesses(_ url: URL, table: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let result = try await countFromAnotherProcess(url, table: table)
        #expect(result.status != 0, "another process read the open store: \(result.standardOutput)", sourceLocation: sourceLocation)
        #expect(result.standardError.contains("database is locked"), sourceLocation: sourceLocation)
    }

    // MARK: - Errors

    /// The error `body` throws, as a `GraphStoreError`.
    static func storeError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> GraphStoreError? {
        do {
            try body()
            Issue.record("expected a GraphStoreError, nothing was thrown", sourceLocation: sourceLocation)
            return nil
        } catch let error as GraphStoreError {
            return error
        } catch {
            Issue.record("expected a GraphStoreError, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }
}

// MARK: - RowChangeLog

/// Counts the rows SQLite itself reports changed, through its update hook (a GRDB
/// `TransactionObserver` on the writer's connection); only committed transactions count.
final class RowChangeLog: TransactionObserver, Sendable {
    struct Change: Hashable, Sendable, CustomStringConvertible {
        let table: String
        let kind: String
        var description: String { "\(kind) \(table)" }
    }

    private let pending = Guarded<[Change]>([])
    private let committed = Guarded<[[Change]]>([])

    /// Options whose writer connection reports to this log. Without a journal by default, so
    /// that `flush()` returns once a transaction holds the rows (with a journal it returns once
    /// the journal is fsynced, and the rows may still be on their way).
    func installing(in options: SQLiteStoreOptions = SQLiteStoreOptions(durability: .coalesced)) -> SQLiteStoreOptions {
        var options = options
        options.didOpen = { [self] db in db.add(transactionObserver: self, extent: .databaseLifetime) }
        return options
    }

    /// The changes of each committed transaction, in order.
    var transactions: [[Change]] { committed.value }

    /// How many rows of `table` committed transactions changed, by kind.
    func counts(in table: String, transactions range: Range<Int>? = nil) -> [String: Int] {
        let all = committed.value
        let chosen = range.map { Array(all[$0]) } ?? all
        return chosen.joined().filter { $0.table == table }.reduce(into: [:]) { $0[$1.kind, default: 0] += 1 }
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }

    func databaseDidChange(with event: DatabaseEvent) {
        let kind = switch event.kind {
        case .insert: "insert"
        case .update: "update"
        case .delete: "delete"
        }
        pending.withLock { $0.append(Change(table: event.tableName, kind: kind)) }
    }

    func databaseDidCommit(_ db: Database) {
        let changes = pending.withLock { pending in
            defer { pending = [] }
            return pending
        }
        committed.withLock { $0.append(changes) }
    }

    func databaseDidRollback(_ db: Database) {
        pending.withLock { $0 = [] }
    }
}

// MARK: - Gate

/// A gate the writer's `beforeTransaction` hook waits at while it is closed: holds a write
/// without sleeping, so a test can commit while the writer is busy.
final class WriterGate: Sendable {
    private let isOpen = Guarded(true)
    private let reached = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)

    func close() { isOpen.withLock { $0 = false } }

    func open() {
        let wasClosed = isOpen.withLock { isOpen in
            defer { isOpen = true }
            return !isOpen
        }
        if wasClosed { opened.signal() }
    }

    /// Called by the hook on the writer's thread.
    func pass() {
        guard !isOpen.value else { return }
        reached.signal()
        opened.wait()
    }

    /// Waits until the writer is held at the gate.
    func waitUntilReached() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.reached.wait()
                continuation.resume()
            }
        }
    }
}
