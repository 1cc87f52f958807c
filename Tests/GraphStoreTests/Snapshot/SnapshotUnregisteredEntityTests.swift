import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A file holding an entity the container does not register is refused, not silently dropped.
@Suite struct SnapshotUnregisteredEntityTests {
    @Test func openingWithoutAnEntityThatHasObjectsIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        container.mainContext.insert(Note(text: "keep me"))
        try container.mainContext.save()
        try await container.close()
        let before = try Data(contentsOf: url)

        #expect {
            _ = try GraphContainer(for: [Post.self, ExampleModel.Tag.self], store: .file(url))
        } throws: { error in
            guard case .codingFailed(let path, let entity, _, let reason) = error as? GraphStoreError else { return false }
            return path == url.path && entity == "Note" && reason.contains("does not register")
        }
        #expect(try Data(contentsOf: url) == before)

        // An entity whose array is empty may be dropped from the model.
        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        try reopened.mainContext.delete(model: Note.self)
        try reopened.mainContext.save()
        try await reopened.close()
        let smaller = try GraphContainer(for: [Post.self, ExampleModel.Tag.self], store: .file(url))
        #expect(smaller.count(of: Post.self) == 0)
        try await smaller.close()
    }
}
