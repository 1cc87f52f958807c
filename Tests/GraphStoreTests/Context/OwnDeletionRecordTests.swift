import ExampleModel
import Foundation
@testable import GraphStore
import GraphStoreTestSupport
import Testing

/// What a context's own save deleted stays what it knows of those ids, however many records
/// it keeps: a copy it holds of an object it deleted, saved after another context created the
/// id again, is a conflict, not an overwrite. (The records of ids it read while absent are the
/// ones pruned past a bound, which changes no base while those ids stay absent.)
@Suite struct OwnDeletionRecordTests {
    enum How: String, CaseIterable, Sendable {
        /// Read the note, then deleted it and 5,000 others in one save.
        case readThenBulkDelete
        /// Inserted the notes itself (never read), then deleted them all in one save.
        case savedThenBulkDelete
        /// Read the note, deleted only it, then looked up 5,000 absent ids.
        case readDeleteThenLookups
        /// Read the note and deleted it, then deleted 5,000 others in separate saves.
        case readThenManySaves
    }

    @Test(arguments: How.allCases, [MergePolicy.error, .storeWins])
    func aHeldCopyOfAnObjectTheContextDeletedConflictsWithItsRecreation(how: How, policy: MergePolicy) throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let a = container.newBackgroundContext(), b = container.newBackgroundContext()
        a.mergePolicy = policy
        let id = UUID()
        let others = (0..<5_000).map { _ in UUID() }
        let seeder = how == .savedThenBulkDelete ? a : container.mainContext
        seeder.insert(Note(id: id, text: "v1", createdAt: Fixtures.epoch))
        seeder.insert(contentsOf: others.map { Note(id: $0, text: "other", createdAt: Fixtures.epoch) })
        try seeder.save()
        var held = Note(id: id, text: "v1", createdAt: Fixtures.epoch)
        if how != .savedThenBulkDelete { held = try #require(a.model(Note.self, id: id)) }
        a.delete(Note.self, id: id)
        switch how {
        case .readThenBulkDelete, .savedThenBulkDelete:
            for other in others { a.delete(Note.self, id: other) }
            try a.save()
        case .readDeleteThenLookups:
            try a.save()
            for _ in others { _ = a.model(Note.self, id: UUID()) }
        case .readThenManySaves:
            try a.save()
            for other in others {
                a.delete(Note.self, id: other)
                try a.save()
            }
        }
        b.insert(Note(id: id, text: "created again", createdAt: Fixtures.epoch))
        try b.save()

        held.text = "a's stale copy"
        a.insert(held)
        if policy == .error {
            #expect(throws: GraphStoreError.self, "the object created again was overwritten") { try a.save() }
        } else {
            try a.save()
        }
        #expect(container.mainContext.model(Note.self, id: id)?.text == "created again")
    }

    /// A context read every note; another deleted one of them; the first then deleted every
    /// note, and its save dropped the table (the rest) whole. Its copy of the note deleted
    /// elsewhere, saved now, is a conflict: the drop did not delete it, and the context never
    /// saw it go. Under `.mergeByProperty` a deletion wins, so it is not brought back either.
    @Test(arguments: [MergePolicy.error, .storeWins, .mergeByProperty])
    func aWholeTableDropKeepsWhatTheContextReadOfObjectsGoneBefore(policy: MergePolicy) throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let reader = container.newBackgroundContext(), other = container.newBackgroundContext()
        reader.mergePolicy = policy
        let gone = Note(text: "deleted elsewhere", createdAt: Fixtures.epoch), kept = Note(text: "dropped", createdAt: Fixtures.epoch)
        container.mainContext.insert(contentsOf: [gone, kept])
        try container.mainContext.save()
        var held = try #require(try reader.fetch(FetchDescriptor<Note>()).first { $0.id == gone.id })
        other.delete(Note.self, id: gone.id)
        try other.save()
        try reader.delete(model: Note.self)
        try reader.save()
        #expect(container.count(of: Note.self) == 0)

        held.text = "edited"
        reader.insert(held)
        if policy == .error {
            #expect(throws: GraphStoreError.self, "an object deleted elsewhere came back") { try reader.save() }
        } else {
            try reader.save()
        }
        #expect(container.mainContext.model(Note.self, id: gone.id) == nil)
        // What the drop deleted, the context knows gone: re-inserting it is no conflict.
        reader.rollback()
        reader.insert(kept)
        try reader.save()
        #expect(container.mainContext.model(Note.self, id: kept.id)?.text == "dropped")
    }

    /// A child saw an object gone through its parent's pending deletion; the parent saved it
    /// with 5,000 more; another context created the id again. The child's insert of that id,
    /// saved through the parent, is a conflict however many records the parent keeps.
    @Test(arguments: [0, 5_000])
    func aChildsViewOfAParentsDeletionIsKept(others: Int) throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let parent = container.newBackgroundContext(), other = container.newBackgroundContext()
        let id = UUID()
        let otherIDs = (0..<others).map { _ in UUID() }
        container.mainContext.insert(Note(id: id, text: "v1", createdAt: Fixtures.epoch))
        container.mainContext.insert(contentsOf: otherIDs.map { Note(id: $0, text: "other", createdAt: Fixtures.epoch) })
        try container.mainContext.save()

        let child = parent.newChildContext()
        parent.delete(Note.self, id: id)
        for otherID in otherIDs { parent.delete(Note.self, id: otherID) }
        #expect(child.model(Note.self, id: id) == nil)
        try parent.save()
        other.insert(Note(id: id, text: "created again", createdAt: Fixtures.epoch))
        try other.save()
        _ = parent.model(Note.self, id: id)

        child.insert(Note(id: id, text: "the child's", createdAt: Fixtures.epoch))
        try child.save()
        #expect(throws: GraphStoreError.self, "the object created again was overwritten") { try parent.save() }
        #expect(container.mainContext.model(Note.self, id: id)?.text == "created again")
        withExtendedLifetime(child) {}
    }

    /// What a whole-table drop keeps of a table the context read: a record per object of it
    /// the drop did not hold (deleted elsewhere before), and no table.
    @Test func aWholeTableDropKeepsARecordPerObjectGoneBefore() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let entity = container.core.schema.index(of: Note.self)
        let reader = container.newBackgroundContext(), other = container.newBackgroundContext()
        let notes = (0..<100).map { Note(text: "note \($0)", createdAt: Fixtures.epoch) }
        container.mainContext.insert(contentsOf: notes)
        try container.mainContext.save()
        #expect(try reader.fetch(FetchDescriptor<Note>()).count == 100)
        for note in notes.prefix(3) { other.delete(Note.self, id: note.id) }
        try other.save()
        try reader.delete(model: Note.self)
        try reader.save()
        #expect(reader.withState { $0.reads[entity].count } == 3)
        #expect(reader.withState { $0.reads[entity].whole?.isEmpty } == true)
    }

    /// A second drop deletes an object another context created again after the first: the
    /// context knows it gone, so re-inserting its copy is no conflict (it deleted it itself).
    @Test func aSecondDropSettlesAnObjectCreatedAgainSinceTheFirst() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let reader = container.newBackgroundContext(), other = container.newBackgroundContext()
        let recreated = Note(text: "a", createdAt: Fixtures.epoch), kept = Note(text: "b", createdAt: Fixtures.epoch)
        container.mainContext.insert(contentsOf: [recreated, kept])
        try container.mainContext.save()
        let held = try #require(try reader.fetch(FetchDescriptor<Note>()).first { $0.id == recreated.id })
        other.delete(Note.self, id: recreated.id)
        try other.save()
        try reader.delete(model: Note.self)
        try reader.save()
        other.insert(recreated)
        try other.save()
        try reader.delete(model: Note.self)
        try reader.save()
        reader.insert(held)
        try reader.save()
        #expect(container.mainContext.model(Note.self, id: recreated.id)?.text == "a")
    }

    /// A child read an object through its parent's change; the parent saved it; another
    /// context deleted it; the parent then dropped the rest of the table whole. The child's
    /// copy, saved through the parent, is a conflict: the drop did not delete it.
    @Test func aChildsCopyAfterItsParentsDropOfTheRestConflicts() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let parent = container.newBackgroundContext(), other = container.newBackgroundContext()
        let x = Note(text: "x", createdAt: Fixtures.epoch), y = Note(text: "y", createdAt: Fixtures.epoch)
        container.mainContext.insert(contentsOf: [x, y])
        try container.mainContext.save()
        var changed = x
        changed.text = "parent's"
        parent.insert(changed)
        let child = parent.newChildContext()
        var copy = try #require(child.model(Note.self, id: x.id))
        try parent.save()
        other.delete(Note.self, id: x.id)
        try other.save()
        try parent.delete(model: Note.self)
        try parent.save()
        #expect(container.count(of: Note.self) == 0)

        copy.text = "child's"
        child.insert(copy)
        try child.save()
        #expect(throws: GraphStoreError.self, "an object deleted elsewhere came back") { try parent.save() }
        #expect(container.mainContext.model(Note.self, id: x.id) == nil)
        withExtendedLifetime(child) {}
    }
}

/// A context that saved `delete(model:)` of an entity it never read dropped the whole table:
/// it knows every id gone as of that save. A change it makes of an id another context made
/// again since is based on no object, and conflicts with it (it was based on the object as
/// stored when the context changed it, and written over it unseen).
@Suite struct OwnDeleteAllRecordTests {
    struct Item: Entity, Equatable {
        var id: Int
        var text: String
    }

    enum After: String, CaseIterable, Sendable {
        /// Nothing more before the change.
        case nothing
        /// Another `delete(model:)`, pending when the id is changed.
        case anotherDeleteAll
        /// An insert of another id, then another `delete(model:)`.
        case insertThenDeleteAll
    }

    @Test(arguments: After.allCases, [MergePolicy.error, .storeWins])
    func anIDMadeAgainElsewhereAfterTheContextsDeleteAllConflicts(after: After, policy: MergePolicy) throws {
        let container = try GraphContainer(for: [Item.self], store: .inMemory)
        let seeder = container.newBackgroundContext()
        seeder.insert(Item(id: 2, text: "first"))
        try seeder.save()
        let cleaner = container.newBackgroundContext(), other = container.newBackgroundContext()
        cleaner.mergePolicy = policy
        try cleaner.delete(model: Item.self)
        try cleaner.save()
        switch after {
        case .nothing: break
        case .anotherDeleteAll: try cleaner.delete(model: Item.self)
        case .insertThenDeleteAll:
            cleaner.insert(Item(id: 9, text: "gone again"))
            try cleaner.delete(model: Item.self)
        }
        other.insert(Item(id: 2, text: "made again"))
        try other.save()

        cleaner.insert(Item(id: 2, text: "never saw it made again"))
        if policy == .error {
            #expect(throws: GraphStoreError.self) { try cleaner.save() }
        } else {
            try cleaner.save()
        }
        #expect(container.newBackgroundContext().model(Item.self, id: 2)?.text == "made again")
    }

    /// With no other commit in between, its changes after the drop are no conflict.
    @Test func itsOwnChangesAfterItsDeleteAllSave() throws {
        let container = try GraphContainer(for: [Item.self], store: .inMemory)
        let context = container.newBackgroundContext()
        context.insert(Item(id: 2, text: "first"))
        try context.save()
        try context.delete(model: Item.self)
        try context.save()
        context.insert(Item(id: 2, text: "again"))
        try context.save()
        #expect(container.newBackgroundContext().model(Item.self, id: 2)?.text == "again")
    }
}
