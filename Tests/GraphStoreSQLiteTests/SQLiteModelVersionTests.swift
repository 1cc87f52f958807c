import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A SQLite store of a newer model version than the app's, or an older one without the
/// migrations from its version, is refused at open, untouched.
@Suite struct SQLiteModelVersionTests {
    static func files(_ directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where !name.hasSuffix(".lock") {
            files[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return files
    }

    @Test func olderAndNewerStoresAreRefusedAndLeftAsTheyWere() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let container = try GraphContainer(for: exampleModel, store: .sqlite(url), version: 2)
        container.mainContext.insert(Tag(name: "swift"))
        try container.mainContext.save()
        try await container.close()
        let before = try Self.files(directory.url)

        #expect {
            _ = try GraphContainer(for: exampleModel, store: .sqlite(url))
        } throws: { error in
            error as? GraphStoreError == .newerModelVersion(path: url.path, found: 2, supported: 1)
        }
        #expect {
            _ = try GraphContainer(
                for: exampleModel, store: .sqlite(url), version: 4,
                migrations: [SchemaMigration(from: 3, to: 4, [.addField("x", in: "Tag", default: .null)])])
        } throws: { error in
            guard case .migrationFailed(let path, 2, 4, _, _, _, let reason) = error as? GraphStoreError else { return false }
            return path == url.path && reason.contains("no migration starts from model version 2")
        }
        #expect(try Self.files(directory.url) == before)

        let same = try GraphContainer(for: exampleModel, store: .sqlite(url), version: 2)
        #expect(same.count(of: Tag.self) == 1)
        try await same.close()
    }
}
