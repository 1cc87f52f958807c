import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// Recovering a store by hand from its previous snapshot: the previous snapshot is the
/// migration's source, read and never removed.
@Suite struct GraphStoreToolRecoveryFromPreviousTests {
    private static func previous(_ url: URL) -> URL { URL(fileURLWithPath: url.path + ".previous") }

    private static func makeStore(_ url: URL, texts: [String]) async throws {
        for text in texts {
            let container = try GraphContainer(for: exampleModel, store: .file(url))
            container.mainContext.insert(Note(text: text, createdAt: Fixtures.epoch))
            try container.mainContext.save()
            try await container.close()
        }
    }

    /// Recovering by hand, as the refusal suggests: the previous snapshot migrated (or
    /// converted) back to the store's name with --force. The source of the migration is removed.
    @Test(arguments: [0, 1, 2, 3]) func migratingAPreviousSnapshotBackToItsStoreDeletesTheSource(command: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz")
        try await Self.makeStore(store, texts: ["one", "two"])
        try FileManager.default.removeItem(at: store)  // or damaged
        let source = Self.previous(store)
        let before = try Data(contentsOf: source)
        var arguments = command % 2 == 0
            ? ["migrate", source.path, store.path, "--to", "snapshot"]
            : ["convert", source.path, "--format", "json", "-o", store.path]
        if command >= 2 { arguments.append("--force") }
        let result = try await runProduct("graphstore", arguments)
                #expect(result.status == 0, "\(result.standardError)")
        #expect(FileManager.default.fileExists(atPath: source.path), "the migration's source \(source.path) was deleted (it was \(before.count) bytes)")
    }
}

extension GraphStoreToolRecoveryFromPreviousTests {
    /// A `.previous` that cannot be unlinked (here a directory: EISDIR; in a sticky directory,
    /// another user's file: EPERM) makes the migration fail after it replaced the destination.
    @Test func aFailedRemovalFailsTheMigrationAfterTheReplacement() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("store.json.gz"), other = directory.file("other.json.gz")
        try await Self.makeStore(store, texts: ["old"])
        try await Self.makeStore(other, texts: ["new"])
        try FileManager.default.createDirectory(atPath: store.path + ".previous", withIntermediateDirectories: false)
        let before = try Data(contentsOf: store)
        let result = try await runProduct("graphstore", ["migrate", other.path, store.path, "--force"])
                let after = try Data(contentsOf: store)
        // Reported, naming the previous snapshot and saying the new file is in place.
        #expect(result.status == 1 && after != before)
        #expect(result.standardError.contains(".previous") && result.standardError.contains("in place"))
    }
}
