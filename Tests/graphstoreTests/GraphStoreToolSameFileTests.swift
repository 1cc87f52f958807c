import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// `migrate` and `convert` whose destination is their source's own file, under any name (the
/// same path, a `./` in it, a symbolic link, another hard link), are refused before anything is
/// read, naming both paths, and leave every file as it was.
///
/// Rewriting a store from itself reads it before its lock is taken: an app that opens the store,
/// saves and closes meanwhile has its saves written over by the older contents read, although
/// it was told they were saved.
@Suite struct GraphStoreToolSameFileTests {
    /// Every file in `directory`, by name, with its bytes (a symbolic link as its target's).
    private static func files(in directory: TemporaryDirectory) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try directory.entries() { files[name] = try Data(contentsOf: directory.file(name)) }
        return files
    }

    /// The names a destination can give `store` in `directory`, made there.
    private static func otherNames(of store: URL, in directory: TemporaryDirectory) throws -> [(what: String, path: String)] {
        let symbolic = directory.file("link.json.gz"), hard = directory.file("hard.json.gz")
        try FileManager.default.createSymbolicLink(atPath: symbolic.path, withDestinationPath: store.lastPathComponent)
        try FileManager.default.linkItem(at: store, to: hard)
        return [
            ("the same path", store.path),
            ("a ./ in the path", directory.url.path + "/./" + store.lastPathComponent),
            ("a symbolic link", symbolic.path),
            ("another hard link", hard.path),
        ]
    }

    private static func noteTexts(_ url: URL) async throws -> Set<String> {
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        let texts = Set(try container.mainContext.fetch(FetchDescriptor<Note>()).map(\.text))
        try await container.close()
        return texts
    }

    @Test(arguments: ["migrate", "convert"])
    func aStoreIsNotRewrittenFromItself(command: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz")
        _ = try await GraphStoreToolSnapshotTests.makeStore(store)
        for (what, destination) in try Self.otherNames(of: store, in: directory) {
            let before = try Self.files(in: directory)
            let arguments = command == "migrate"
                ? ["migrate", store.path, destination, "--force"]
                : ["convert", store.path, "--format", "plist", "-o", destination, "--force"]
            let result = try await runProduct("graphstore", arguments)
            #expect(result.status == 1, "\(what): \(result.standardOutput)")
            let message = result.standardError
            #expect(message.contains("same file") && message.contains(store.path), "\(what): \(message)")
            #expect(message.split(separator: "\n").count == 1, "\(what): \(message)")
            #expect(try Self.files(in: directory) == before, "\(what): a file changed")
        }
        // Written the other way round, through the link as the source: refused too.
        let reversed = try await runProduct("graphstore", ["migrate", directory.file("link.json.gz").path, store.path, "--force"])
        #expect(reversed.status == 1 && reversed.standardError.contains("same file"), "\(reversed.standardError)")
    }

    /// `convert` to the same format and compression names its source as its destination.
    @Test func convertsDefaultDestinationIsItsSource() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz")
        _ = try await GraphStoreToolSnapshotTests.makeStore(store)
        let before = try Self.files(in: directory)
        let result = try await runProduct("graphstore", ["convert", store.path, "--format", "json", "--force"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("same file") && result.standardError.contains(store.path), "\(result.standardError)")
        #expect(try Self.files(in: directory) == before)
    }

    /// A GraphStore SQLite store migrated onto itself, as a snapshot or as SQLite.
    @Test func aSQLiteStoreIsNotRewrittenFromItself() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let snapshot = directory.file("store.json.gz"), sqlite = directory.file("store.sqlite")
        _ = try await GraphStoreToolSnapshotTests.makeStore(snapshot)
        let made = try await runProduct("graphstore", ["migrate", snapshot.path, sqlite.path])
        #expect(made.status == 0, "\(made.standardError)")
        let before = try Self.files(in: directory)
        for arguments in [["migrate", sqlite.path, sqlite.path, "--force"], ["migrate", sqlite.path, sqlite.path, "--to", "snapshot", "--force"]] {
            let result = try await runProduct("graphstore", arguments)
            #expect(result.status == 1 && result.standardError.contains("same file") && result.standardError.contains(sqlite.path), "\(result.standardError)")
            #expect(try Self.files(in: directory) == before)
        }
    }

    /// The saves a killed app left in the journal beside the store stay there, and the store
    /// file as it was: opening the store still gives them.
    @Test func aStoreWithSavesInItsJournalIsLeftAsItWas() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let running = live.file("store.json.gz"), store = directory.file("store.json.gz")
        _ = try await GraphStoreToolSnapshotTests.makeStore(running)
        let app = try GraphContainer(for: exampleModel, store: .file(running))
        app.mainContext.insert(Note(text: "told saved", createdAt: Fixtures.epoch, tagIDs: []))
        try app.mainContext.save()
        // The files as the app leaves them when killed: the save only in the journal.
        try FileManager.default.copyItem(at: running, to: store)
        try FileManager.default.copyItem(atPath: running.path + ".journal", toPath: store.path + ".journal")
        try await app.close()

        let before = try Self.files(in: directory)
        for arguments in [
            ["migrate", store.path, store.path, "--force"], ["convert", store.path, "--format", "json", "-o", store.path, "--force"],
        ] {
            let result = try await runProduct("graphstore", arguments)
            #expect(result.status == 1, "\(arguments[0]): \(result.standardOutput)")
            #expect(result.standardError.contains(store.path), "\(arguments[0]): \(result.standardError)")
            #expect(try Self.files(in: directory) == before, "\(arguments[0]): a file changed")
        }
        #expect(try await Self.noteTexts(store).contains("told saved"))
    }

    /// Two different files are migrated as before, also when one is a link's target.
    @Test func differentFilesAreStillMigrated() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz"), copy = directory.file("copy.json.gz")
        _ = try await GraphStoreToolSnapshotTests.makeStore(store)
        try FileManager.default.copyItem(at: store, to: copy)
        let result = try await runProduct("graphstore", ["migrate", store.path, copy.path, "--format", "plist", "--force"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try GenericSnapshot.read(from: copy).format == .binaryPropertyList)
    }
}
