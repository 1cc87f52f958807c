import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A store that `migrate` or `convert` replaces with another store keeps nothing of the old
/// one that opening or recovering the new one would take for its own: the old store's previous
/// snapshot (`<file>.previous`) goes with it, and its journal makes the replacement refused.
///
/// Recovery (``SnapshotOptions/recoverFromPreviousSnapshot``) opens `<file>.previous` when the
/// store file is damaged; a previous snapshot of the replaced store would bring its old objects
/// back in place of the new store's.
@Suite struct GraphStoreToolReplacedStoreTests {
    private static let recovering = SnapshotOptions(recoverFromPreviousSnapshot: true)

    private static func previous(_ url: URL) -> URL { URL(fileURLWithPath: url.path + ".previous") }

    /// A store saved in two runs, so that it has a previous snapshot, holding notes "old 1"
    /// and "old 2".
    private static func makeOldStore(_ url: URL) async throws {
        for text in ["old 1", "old 2"] {
            let container = try GraphContainer(for: exampleModel, store: .file(url))
            container.mainContext.insert(Note(text: text, createdAt: Fixtures.epoch))
            try container.mainContext.save()
            try await container.close()
        }
        #expect(FileManager.default.fileExists(atPath: previous(url).path))
    }

    /// A store of another lineage holding the note "new".
    private static func makeNewStore(_ url: URL) async throws {
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        container.mainContext.insert(Note(text: "new", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        try await container.close()
    }

    private static func noteTexts(_ container: GraphContainer) throws -> Set<String> {
        Set(try container.mainContext.fetch(FetchDescriptor<Note>()).map(\.text))
    }

    /// Cuts the file at `url` in half.
    private static func truncate(_ url: URL) throws {
        let bytes = try Data(contentsOf: url)
        try bytes.prefix(bytes.count / 2).write(to: url)
    }

    /// The ways the tool puts another store at `store` (`other` and `sqlite` are that store).
    private static func replacements(of store: URL, other: URL, sqlite: URL) -> [[String]] {
        [
            ["migrate", other.path, store.path, "--force"],
            ["convert", other.path, "--format", "plist", "-o", store.path, "--force"],
            ["migrate", sqlite.path, store.path, "--force"],
        ]
    }

    @Test(arguments: 0..<3)
    func theReplacedStoresPreviousSnapshotIsNotRecoveredInto(replacement: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz"), other = directory.file("other.json.gz"), sqlite = directory.file("other.sqlite")
        try await Self.makeOldStore(store)
        try await Self.makeNewStore(other)
        let toSQLite = try await runProduct("graphstore", ["migrate", other.path, sqlite.path])
        #expect(toSQLite.status == 0, "\(toSQLite.standardError)")

        let arguments = Self.replacements(of: store, other: other, sqlite: sqlite)[replacement]
        let result = try await runProduct("graphstore", arguments)
        #expect(result.status == 0, "\(arguments): \(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: Self.previous(store).path), "the replaced store's previous snapshot is still there")
        let opened = try GraphContainer(for: exampleModel, store: .file(store))
        #expect(try Self.noteTexts(opened) == ["new"])
        try await opened.close()
        // The app wrote a snapshot on close: its previous snapshot is the migrated file now.

        // Damaged before the app ever wrote it: nothing to recover from, rather than the old
        // store's objects.
        let again = try await runProduct("graphstore", arguments)
        #expect(again.status == 0, "\(arguments): \(again.standardError)")
        #expect(!FileManager.default.fileExists(atPath: Self.previous(store).path))
        try Self.truncate(store)
        let error = try #require(throws: GraphStoreError.self) {
            let recovered = try GraphContainer(for: exampleModel, store: .file(store, options: Self.recovering))
            Issue.record("recovered into \(try Self.noteTexts(recovered))")
        }
        guard case .damagedFile(let path, _, _) = error else {
            Issue.record("not a damaged file: \(error)")
            return
        }
        #expect(path == store.path)
    }

    /// A previous snapshot whose store file is gone (removed by hand) is the only copy of that
    /// store: a destination beside it is refused without `--force`, naming it, and with
    /// `--force` the new store does not inherit it.
    @Test func aPreviousSnapshotWithoutItsStoreNeedsForce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz"), other = directory.file("other.json.gz")
        try await Self.makeOldStore(store)
        try await Self.makeNewStore(other)
        try FileManager.default.removeItem(at: store)
        let kept = try Data(contentsOf: Self.previous(store))

        for arguments in [["migrate", other.path, store.path], ["convert", other.path, "--format", "json", "-o", store.path]] {
            let refused = try await runProduct("graphstore", arguments)
            #expect(refused.status == 1, "\(arguments[0])")
            #expect(refused.standardError.contains(Self.previous(store).path) && refused.standardError.contains("--force"), "\(refused.standardError)")
            #expect(!FileManager.default.fileExists(atPath: store.path))
            #expect(try Data(contentsOf: Self.previous(store)) == kept)
        }
        let forced = try await runProduct("graphstore", ["migrate", other.path, store.path, "--force"])
        #expect(forced.status == 0, "\(forced.standardError)")
        #expect(!FileManager.default.fileExists(atPath: Self.previous(store).path))
        try Self.truncate(store)
        #expect(throws: GraphStoreError.self) { _ = try GraphContainer(for: exampleModel, store: .file(store, options: Self.recovering)) }
    }

    /// The old store's journal is never taken for the new store's: a destination with one is
    /// not replaced (even when its saves are all in the file), and a journal of the old store
    /// put back beside the new one is refused at open, not replayed.
    @Test func theReplacedStoresJournalIsNeverReplayed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let store = directory.file("store.json.gz"), other = directory.file("other.json.gz"), running = live.file("store.json.gz")
        try await Self.makeOldStore(running)
        try await Self.makeNewStore(other)
        // The files as an app killed after a snapshot leaves them: a journal with no newer saves.
        let app = try GraphContainer(for: exampleModel, store: .file(running, coalescingInterval: .milliseconds(10)))
        app.mainContext.insert(Note(text: "old 3", createdAt: Fixtures.epoch))
        try app.mainContext.save()
        while app.storeStatus.writesCompleted == 0 { try await Task.sleep(for: .milliseconds(10)) }
        for suffix in ["", ".previous", ".journal"] {
            try FileManager.default.copyItem(atPath: running.path + suffix, toPath: store.path + suffix)
        }
        try await app.close()
        let journal = URL(fileURLWithPath: store.path + ".journal")
        let journalBytes = try Data(contentsOf: journal), storeBytes = try Data(contentsOf: store)

        let refused = try await runProduct("graphstore", ["migrate", other.path, store.path, "--force"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains(journal.lastPathComponent), "\(refused.standardError)")
        #expect(try Data(contentsOf: journal) == journalBytes && Data(contentsOf: store) == storeBytes)

        // Moved away by hand, the store is replaced; put back, the journal is refused.
        let aside = directory.file("old.journal")
        try FileManager.default.moveItem(at: journal, to: aside)
        let replaced = try await runProduct("graphstore", ["migrate", other.path, store.path, "--force"])
        #expect(replaced.status == 0, "\(replaced.standardError)")
        try FileManager.default.copyItem(at: aside, to: journal)
        #expect {
            _ = try GraphContainer(for: exampleModel, store: .file(store))
        } throws: { error in
            guard case .damagedFile(let path, _, let reason)? = error as? GraphStoreError else { return false }
            return path == journal.path && reason.contains("another store")
        }
        try FileManager.default.removeItem(at: journal)
        let opened = try GraphContainer(for: exampleModel, store: .file(store))
        #expect(try Self.noteTexts(opened) == ["new"])
        try await opened.close()
    }
}
