import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import NotesCore
import Testing

/// The notes tool's version 2 opens a version-1 store (committed, as a snapshot file and as a
/// SQLite store) through its migration.
@Suite struct NotesModelVersionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let fixture = fixtures.appendingPathComponent("notes-v1.json.gz")

    @Test func aVersionOneStoreOpensWithItsPinnedTagTurnedIntoPins() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("notes.json.gz")
        try FileManager.default.copyItem(at: Self.fixture, to: url)
        let original = try Data(contentsOf: url)

        let container = try NotesModel.container(at: url)
        let library = NotesLibrary(container: container)
        #expect(try library.pinned().map(\.text) == ["Call the plumber", "Wi-Fi password: hunter2"])
        #expect(try library.tagCounts().map(\.name) == ["errands"])
        #expect(try library.list(tag: "errands").map(\.text) == ["Call the plumber", "Buy oat milk"])
        try container.checkInvariants()
        // Pinning keeps working on the migrated store.
        try library.pin("00000000-0000-0000-0000-000000000001", at: Date(timeIntervalSinceReferenceDate: 900_000_000))
        #expect(try library.pinned().first?.text == "Buy oat milk")
        try await container.close()

        #expect(try GenericSnapshot.read(from: url).header.modelVersion == "2")
        #expect(try Data(contentsOf: directory.file("notes.json.gz.v1")) == original)
        let reopened = try NotesModel.container(at: url)
        #expect(reopened.count(of: Pin.self) == 3)
        try await reopened.close()
    }

    @Test func aVersionOneSQLiteStoreOpensWithTheSameMigration() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("notes.sqlite")
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent("notes-v1.sqlite"), to: url)
        let original = try Data(contentsOf: url)
        func open() throws -> GraphContainer {
            try GraphContainer(for: NotesModel.entities, store: .sqlite(url), version: NotesModel.version, migrations: NotesModel.migrations)
        }

        let container = try open()
        let library = NotesLibrary(container: container)
        #expect(try library.pinned().map(\.text) == ["Call the plumber", "Wi-Fi password: hunter2"])
        #expect(try library.tagCounts().map(\.name) == ["errands"])
        try container.checkInvariants()
        try await container.close()

        #expect(try Data(contentsOf: directory.file("notes.sqlite.v1")) == original)
        let reopened = try open()
        #expect(reopened.count(of: Pin.self) == 2)
        try await reopened.close()
    }
}
