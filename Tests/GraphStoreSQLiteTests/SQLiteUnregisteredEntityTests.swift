import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A SQLite store holding rows of an entity the app no longer registers is refused at open, as
/// a snapshot store is: opened, its rows would be outside every delete rule, and a cascade that
/// could not run would leave the store unopenable once the entity is registered again.
@Suite struct SQLiteUnregisteredEntityTests {
    struct Note: Entity, Equatable {
        var id: Int
        var text: String
    }

    struct Draft: Entity, Equatable {
        var id: Int
        var noteID: Int?
        static var relationships: [Relationship<Draft>] { [.toOne(\.noteID, Note.self, deleteRule: .cascade)] }
    }

    @Test func rowsOfAnUnregisteredEntityAreRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("notes.sqlite")
        let first = try SQLiteTestKit.open(url, model: [Note.self, Draft.self])
        first.mainContext.insert(Note(id: 1, text: "hello"))
        first.mainContext.insert(Draft(id: 1, noteID: 1))
        try first.mainContext.save()
        try await first.close()

        let error = SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url, model: [Note.self]) }
        guard case .codingFailed(let path, let entity, _, let reason)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(path == url.path)
        #expect(entity == "Draft")
        #expect(reason.contains("1 Draft object(s)"))

        let again = try SQLiteTestKit.open(url, model: [Note.self, Draft.self])
        #expect(again.mainContext.model(Draft.self, id: 1)?.noteID == 1)
        // Once its rows are gone, the entity's empty table does not stop an app without it.
        again.mainContext.delete(Draft.self, id: 1)
        try again.mainContext.save()
        try await again.close()
        let without = try SQLiteTestKit.open(url, model: [Note.self])
        #expect(without.mainContext.model(Note.self, id: 1)?.text == "hello")
        try await without.close()
    }
}
