import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A fetch of every object, made while the context holds a change of one of them, shows that
/// change, not the stored object: the stored object is not read. So once the change is dropped
/// (`rollback()`), a held copy is still based on what the context saw before, and a save
/// another context made meanwhile is a conflict, not overwritten (nor an object it deleted
/// brought back).
@Suite struct FetchAllOverPendingChangeTests {
    @Test(arguments: [false, true])
    func aHeldCopyAfterRollbackConflictsWithTheOtherSave(failedSaveFirst: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let container = try GraphContainer(for: exampleModel, store: .file(directory.file("notes.json.gz")))
        let id = UUID()
        container.mainContext.insert(Note(id: id, text: "v1", createdAt: Fixtures.epoch))
        try container.mainContext.save()

        let editor = container.newBackgroundContext(), other = container.newBackgroundContext()
        var copy = try #require(editor.model(Note.self, id: id))
        copy.text = "editor draft"
        editor.insert(copy)
        var theirs = try #require(other.model(Note.self, id: id))
        theirs.text = "other's save"
        other.insert(theirs)
        try other.save()

        #expect(try editor.fetch(FetchDescriptor<Note>()).first { $0.id == id }?.text == "editor draft")
        if failedSaveFirst {
            #expect(throws: GraphStoreError.self) { try editor.save() }
        }
        editor.rollback()
        copy.text = "editor again"
        editor.insert(copy)
        #expect(throws: GraphStoreError.self, "the other save was overwritten") { try editor.save() }
        #expect(container.mainContext.model(Note.self, id: id)?.text == "other's save")
        // Reading the object again takes the other save as the base.
        editor.rollback()
        var fresh = try #require(editor.model(Note.self, id: id))
        fresh.text = "after reading again"
        editor.insert(fresh)
        try editor.save()
        #expect(container.mainContext.model(Note.self, id: id)?.text == "after reading again")
    }

    @Test func aHeldCopyAfterRollbackDoesNotBringBackADeletedObject() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let id = UUID()
        let editor = container.newBackgroundContext(), other = container.newBackgroundContext()
        var copy = Note(id: id, text: "v1", createdAt: Fixtures.epoch)
        editor.insert(copy)
        try editor.save()
        copy.text = "draft"
        editor.insert(copy)
        other.delete(Note.self, id: id)
        try other.save()
        _ = try editor.fetch(FetchDescriptor<Note>())
        editor.rollback()
        editor.insert(copy)
        #expect(throws: GraphStoreError.self, "an object deleted elsewhere came back") { try editor.save() }
        #expect(container.mainContext.model(Note.self, id: id) == nil)
    }

    /// The same through a child context: its held copy, saved into the parent after the
    /// child's rollback, conflicts when the parent saves.
    @Test func aChildsHeldCopyAfterRollbackConflictsWithTheOtherSave() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let id = UUID()
        container.mainContext.insert(Note(id: id, text: "v1", createdAt: Fixtures.epoch))
        try container.mainContext.save()

        let parent = container.newBackgroundContext(), other = container.newBackgroundContext()
        let child = parent.newChildContext()
        var copy = try #require(child.model(Note.self, id: id))
        copy.text = "child draft"
        child.insert(copy)
        var theirs = try #require(other.model(Note.self, id: id))
        theirs.text = "other's save"
        other.insert(theirs)
        try other.save()

        #expect(try child.fetch(FetchDescriptor<Note>()).first { $0.id == id }?.text == "child draft")
        child.rollback()
        child.insert(copy)
        try child.save()
        #expect(throws: GraphStoreError.self, "the other save was overwritten") { try parent.save() }
        #expect(container.mainContext.model(Note.self, id: id)?.text == "other's save")
    }

    /// While a `delete(model:)` is pending, a fetch of every object shows none of the marked
    /// objects: after a rollback, a held copy is based on what the context read before, so the
    /// other save is a conflict, with or without that fetch.
    @Test(arguments: [false, true])
    func aFetchOverAPendingDeleteAllKeepsWhatTheContextKnew(fetchOverMarker: Bool) throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let id = UUID()
        container.mainContext.insert(Note(id: id, text: "v1", createdAt: Fixtures.epoch))
        try container.mainContext.save()

        let editor = container.newBackgroundContext(), other = container.newBackgroundContext()
        var copy = try #require(editor.fetch(FetchDescriptor<Note>()).first { $0.id == id })
        var theirs = try #require(other.model(Note.self, id: id))
        theirs.text = "other's save"
        other.insert(theirs)
        try other.save()

        try editor.delete(model: Note.self)
        if fetchOverMarker {
            #expect(try editor.fetch(FetchDescriptor<Note>()).isEmpty)
        }
        editor.rollback()
        copy.text = "editor's edit"
        editor.insert(copy)
        #expect(throws: GraphStoreError.self, "the other save was overwritten") { try editor.save() }
        #expect(container.mainContext.model(Note.self, id: id)?.text == "other's save")
    }

    /// A change made after a `delete(model:)` of an object the marker covers is based on the
    /// marker's version, not on one the context read: a fetch over the marker does not make it
    /// the base of a later change either.
    @Test(arguments: [false, true], [false, true])
    func aChangeOverAPendingDeleteAllKeepsWhatTheContextKnew(fetchOverMarker: Bool, deletes: Bool) throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let id = UUID()
        container.mainContext.insert(Note(id: id, text: "v1", createdAt: Fixtures.epoch))
        try container.mainContext.save()

        let editor = container.newBackgroundContext(), other = container.newBackgroundContext()
        var copy = try #require(editor.model(Note.self, id: id))
        var theirs = try #require(other.model(Note.self, id: id))
        theirs.text = "other's save"
        other.insert(theirs)
        try other.save()

        try editor.delete(model: Note.self)
        if deletes {
            editor.delete(Note.self, id: id)
        } else {
            var draft = copy
            draft.text = "draft over the marker"
            editor.insert(draft)
        }
        if fetchOverMarker { _ = try editor.fetch(FetchDescriptor<Note>()) }
        editor.rollback()
        copy.text = "editor's edit"
        editor.insert(copy)
        #expect(throws: GraphStoreError.self, "the other save was overwritten") { try editor.save() }
        #expect(container.mainContext.model(Note.self, id: id)?.text == "other's save")
    }
}
