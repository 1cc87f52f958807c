import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// Copies from `observe` are read by no context: the documented way to save a user's edit of a
/// shown object is to read it through the saving context and apply the edit to that value.
@Suite struct ObservedCopyEditTests {
    /// A background context saves the note; a list observes it and shows it.
    static func shownNote(in container: GraphContainer) async throws -> Note {
        let note = Note(text: "v0", createdAt: Fixtures.epoch)
        try await container.performBackgroundTask { context in
            context.insert(note)
            try context.save()
        }
        var iterator = container.observe(FetchDescriptor<Note>()).makeAsyncIterator()
        return try #require(try await iterator.next()?.first)
    }

    /// Another context saves the note after the list showed it.
    static func backgroundSaves(_ note: Note, in container: GraphContainer) async throws {
        try await container.performBackgroundTask { context in
            var current = try #require(context.model(Note.self, id: note.id))
            current.text = "from background"
            context.insert(current)
            try context.save()
        }
    }

    /// The edit applied to the object read through the main context keeps the other save.
    @Test func anEditAppliedToAFreshReadKeepsAnotherContextsSave() async throws {
        let container = try Fixtures.inMemoryContainer()
        let shown = try await Self.shownNote(in: container)
        try await Self.backgroundSaves(shown, in: container)

        let main = container.mainContext
        var note = try #require(main.model(Note.self, id: shown.id))
        note.isArchived = true
        main.insert(note)
        try main.save()
        let stored = container.newBackgroundContext().model(Note.self, id: shown.id)
        #expect(stored?.text == "from background")
        #expect(stored?.isArchived == true)
    }

    /// A main context that saved the object itself bases the shown copy on that save: saving
    /// the stale copy after another context's save is a conflict, not an overwrite.
    @Test func aStaleShownCopyOfAnObjectTheContextSavedConflicts() async throws {
        let container = try Fixtures.inMemoryContainer()
        let main = container.mainContext
        let note = Note(text: "v0", createdAt: Fixtures.epoch)
        main.insert(note)
        try main.save()
        var iterator = container.observe(FetchDescriptor<Note>()).makeAsyncIterator()
        var shown = try #require(try await iterator.next()?.first)
        try await Self.backgroundSaves(shown, in: container)

        shown.isArchived = true
        main.insert(shown)
        #expect {
            try main.save()
        } throws: { error in
            guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
            return conflicts.map(\.kind) == [.updatedElsewhere]
        }
        #expect(container.newBackgroundContext().model(Note.self, id: note.id)?.text == "from background")
    }
}
