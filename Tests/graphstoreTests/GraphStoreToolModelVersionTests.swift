import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// `inspect` shows a store's model version, and `convert` and `migrate` keep it.
@Suite struct GraphStoreToolModelVersionTests {
    @Test func theModelVersionSurvivesConvertAndMigrate() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(url), version: 4)
        container.mainContext.insert(Tag(name: "swift"))
        try container.mainContext.save()
        try await container.close()

        let inspected = try await runProduct("graphstore", ["inspect", url.path])
        #expect(inspected.status == 0)
        #expect(inspected.standardOutput.contains("model version:   4"))

        let plist = directory.file("store.plist.gz")
        #expect(try await runProduct("graphstore", ["convert", url.path, "--format", "plist", "--compression", "gzip"]).status == 0)
        #expect(try GenericSnapshot.read(from: plist).header.modelVersion == "4")

        let sqlite = directory.file("store.sqlite")
        let migrated = try await runProduct("graphstore", ["migrate", plist.path, sqlite.path])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        let sqliteInspected = try await runProduct("graphstore", ["inspect", sqlite.path])
        #expect(sqliteInspected.standardOutput.contains("model version:   4"))
        // The app at version 4 opens what the tool made.
        let reopened = try GraphContainer(for: exampleModel, store: .file(plist, format: .binaryPropertyList), version: 4)
        #expect(reopened.count(of: Tag.self) == 1)
        try await reopened.close()
    }
}
