import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A container that declares no model version takes the number its store's model-version
/// option names as the app's version: a file of a lower number needs a migration, which such a
/// container cannot declare, so it is refused as a missing link, every file as it was.
@Suite struct ModelVersionUndeclaredOptionTests {
    @Test(arguments: [["v1.json.gz"], ["v1.plist"], ["v1-crashed.json.gz", "v1-crashed.json.gz.journal"]])
    func anUndeclaredNewerOptionWithoutMigrationsIsRefused(names: [String]) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try ModelVersionRefusalTests.store(names, in: directory)
        var options = SnapshotOptions()
        options.modelVersion = "2"
        try await expectUndeclaredNewerOptionRefused(.file(url, options: options), path: url.path, saysUntouched: true)
        #expect(try ModelVersionRefusalTests.contents(of: directory.url) == before)
    }

    /// The same option naming the file's own number opens the store as before.
    @Test func anUndeclaredOptionOfTheFilesNumberOpens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, _) = try ModelVersionRefusalTests.store(in: directory)
        var options = SnapshotOptions()
        options.modelVersion = "1"
        let container = try GraphContainer(for: ModelV1.types, store: .file(url, options: options))
        #expect(container.count(of: ModelV1.Tag.self) > 0)
        try await container.close()
    }
}
