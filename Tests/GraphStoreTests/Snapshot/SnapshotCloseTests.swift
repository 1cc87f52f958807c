import ExampleModel
import Foundation
@testable import GraphStore
import GraphStoreTestSupport
import Testing

/// What `close()` leaves behind when the last write fails.
@Suite struct SnapshotCloseTests {
    /// A failed close writes nothing afterwards. A journaled store keeps its journal, so the next
    /// container finds every save; a coalesced one finds the last snapshot.
    @Test(arguments: [Durability.coalesced, .journaled])
    func nothingIsWrittenAfterAFailedClose(durability: Durability) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let fileSystem = FaultInjectingFileSystem()
        var options = SnapshotOptions()
        options.fileSystem = fileSystem
        let container = try GraphContainer(for: exampleModel, store: .file(url, durability: durability, options: options))
        container.mainContext.insert(Note(text: "first"))
        try container.mainContext.save()
        try await container.flush()
        let before = try? Data(contentsOf: url)

        fileSystem.inject(.open(errno: ENOSPC))
        container.mainContext.insert(Note(text: "second"))
        try container.mainContext.save()
        await #expect(throws: GraphStoreError.self) { try await container.close() }
        fileSystem.clearFaults()

        // The lock is released now; a later flush must not write behind another owner's back.
        await #expect(throws: GraphStoreError.containerClosed) { try await container.flush() }
        #expect((try? Data(contentsOf: url)) == before)
        #expect(throws: GraphStoreError.containerClosed) {
            container.mainContext.insert(Note(text: "third"))
            try container.mainContext.save()
        }
        // Another container can take the store over and finds the last durable state.
        let next = try GraphContainer(for: exampleModel, store: .file(url))
        let expected = durability == .coalesced ? ["first"] : ["first", "second"]
        #expect(try next.mainContext.fetch(FetchDescriptor<Note>()).map(\.text).sorted() == expected)
        try await next.close()
    }
}
