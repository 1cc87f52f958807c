import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// The tools' reading of a snapshot store (`inspect`, `dump`, `verify`, `convert`, `migrate`)
/// is refused while a container has the store open: under `.coalesced` its file can lack
/// saves the app was told are saved, and nothing else would tell.
@Suite struct GenericSnapshotLockTests {
    @Test func aStoreAContainerHoldsIsRefusedThenReadOnceClosed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let container = try GraphContainer(
            for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600), durability: .coalesced))
        container.mainContext.insert(Note(text: "first", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        try await container.flush()
        container.mainContext.insert(Note(text: "not in the file yet", createdAt: Fixtures.epoch))
        try container.mainContext.save()

        #expect(throws: GraphStoreError.storeLocked(path: url.path)) { try GenericSnapshot.read(from: url) }
        // What the refusal protects from: the file alone lacks the second save.
        #expect(try GenericSnapshot.readFileCopy(of: url).objects(of: "Note").count == 1)

        try await container.close()
        #expect(try GenericSnapshot.read(from: url).objects(of: "Note").count == 2)
        // Reading took no lock and left none: the store opens again.
        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(reopened.count(of: Note.self) == 2)
        try await reopened.close()
    }
}
