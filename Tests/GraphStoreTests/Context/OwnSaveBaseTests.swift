import ExampleModel
import Foundation
@testable import GraphStore
import GraphStoreTestSupport
import Testing

/// What a context's own save wrote is what it last read of those objects, whether or not it
/// read anything of the entity before: a copy it saved, held while another context saves the
/// object, then changed and saved, is a conflict, as a copy it read would be.
@Suite struct OwnSaveBaseTests {
    static let note = Note(id: UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!, text: "v0", createdAt: Fixtures.epoch)

    static func stored(_ container: GraphContainer) -> Note? {
        container.newBackgroundContext().model(Note.self, id: note.id)
    }

    /// Another context reads the note and saves it with the text "from import".
    static func importerSaves(_ container: GraphContainer) throws -> Note {
        let importer = container.newBackgroundContext()
        var imported = try #require(importer.model(Note.self, id: note.id))
        imported.text = "from import"
        importer.insert(imported)
        try importer.save()
        return imported
    }

    /// Saves `copy` in `context` and checks what each policy makes of the other context's
    /// save of `imported` since the copy was saved: `copy` differs from what the context
    /// saved in `isArchived` only.
    static func expectConflictResolved(
        saving copy: Note, in context: GraphContext, over imported: Note, container: GraphContainer,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        switch context.mergePolicy {
        case .error:
            #expect(sourceLocation: sourceLocation) {
                try context.save()
            } throws: { error in
                guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
                return conflicts.map(\.kind) == [.updatedElsewhere]
            }
            #expect(stored(container) == imported, sourceLocation: sourceLocation)
        case .storeWins:
            try context.save()
            #expect(stored(container) == imported, sourceLocation: sourceLocation)
        case .contextWins:
            try context.save()
            #expect(stored(container) == copy, sourceLocation: sourceLocation)
        case .mergeByProperty:
            // Against what the context saved, its copy changed `isArchived` only.
            try context.save()
            #expect(stored(container)?.text == "from import", sourceLocation: sourceLocation)
            #expect(stored(container)?.isArchived == true, sourceLocation: sourceLocation)
        }
    }

    /// The main context saves the note, another context saves it, and the main context saves
    /// its held copy: the same outcome whether or not it had looked anything of the entity up.
    /// (Without a read, the change was based on the other context's save, and `.error` and
    /// `.storeWins` overwrote it without a word.)
    @Test(arguments: MergePolicy.allCases, [false, true])
    func aHeldCopyOfItsOwnSaveConflictsWithALaterSave(policy: MergePolicy, lookedUpFirst: Bool) throws {
        let container = try Fixtures.inMemoryContainer()
        let main = container.mainContext
        main.mergePolicy = policy
        if lookedUpFirst { _ = main.model(Note.self, id: UUID()) }
        var note = Self.note
        main.insert(note)
        try main.save()
        let imported = try Self.importerSaves(container)
        note.isArchived = true
        main.insert(note)
        try Self.expectConflictResolved(saving: note, in: main, over: imported, container: container)
        try container.checkInvariants()
    }

    /// The other context saves while the main context is already changing another note, which
    /// it then saves: the held copy of the first note is still based on the first save.
    @Test(arguments: MergePolicy.allCases)
    func anotherSaveBetweenTwoOwnSavesIsNotMistakenForOwn(policy: MergePolicy) throws {
        let container = try Fixtures.inMemoryContainer()
        let main = container.mainContext
        main.mergePolicy = policy
        var note = Self.note
        main.insert(note)
        try main.save()
        main.insert(Note(text: "second", createdAt: Fixtures.epoch))
        let imported = try Self.importerSaves(container)
        try main.save()
        note.isArchived = true
        main.insert(note)
        try Self.expectConflictResolved(saving: note, in: main, over: imported, container: container)
    }

    /// An object saved among many others (a batch kept as it was committed, not looked up by
    /// id until needed) is based on that save too.
    @Test(arguments: MergePolicy.allCases)
    func aCopyFromALargeOwnSaveConflictsWithALaterSave(policy: MergePolicy) throws {
        let container = try Fixtures.inMemoryContainer()
        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        var notes = (0..<2_000).map { Note(text: "note \($0)", createdAt: Fixtures.epoch) }
        notes[1_000] = Self.note
        context.insert(contentsOf: notes)
        try context.save()
        let imported = try Self.importerSaves(container)
        var copy = Self.note
        copy.isArchived = true
        context.insert(contentsOf: [copy, Note(text: "new", createdAt: Fixtures.epoch)])
        try Self.expectConflictResolved(saving: copy, in: context, over: imported, container: container)
    }

    /// Another context creates the note again; `main` (whose save deleted it) saves its held
    /// copy: under `.error` an `insertedElsewhere` conflict, under `.storeWins` dropped; the
    /// re-created note stays either way.
    static func expectRecreationKept(saving main: GraphContext, container: GraphContainer, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let other = container.newBackgroundContext()
        var recreated = note
        recreated.text = "recreated"
        other.insert(recreated)
        try other.save()
        main.insert(note)
        if main.mergePolicy == .error {
            #expect(sourceLocation: sourceLocation) {
                try main.save()
            } throws: { error in
                guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
                return conflicts.map(\.kind) == [.insertedElsewhere]
            }
        } else {
            try main.save()
        }
        #expect(stored(container) == recreated, sourceLocation: sourceLocation)
    }

    /// The main context deletes the note it saved; another context creates it again; the main
    /// context saving its held copy is a conflict, not an overwrite.
    @Test(arguments: [MergePolicy.error, .storeWins])
    func aHeldCopyOfAnObjectItDeletedConflictsWithItsRecreation(policy: MergePolicy) throws {
        let container = try Fixtures.inMemoryContainer()
        let main = container.mainContext
        main.mergePolicy = policy
        main.insert(Self.note)
        try main.save()
        main.delete(Self.note)
        try main.save()
        try Self.expectRecreationKept(saving: main, container: container)
    }

    /// After dropping the table, the context's own re-import logs its changes as before (no
    /// look-up per change) and never conflicts with itself.
    @Test func aReimportAfterItsOwnTableDropStaysLoggedAndConflictFree() throws {
        let container = try Fixtures.inMemoryContainer()
        let main = container.mainContext
        let entity = container.core.schema.index(of: Note.self)
        var note = Self.note
        for round in 1...3 {
            try main.delete(model: Note.self)
            note.text = "round \(round)"
            main.insert(note)
            main.insert(Note(text: "other \(round)", createdAt: Fixtures.epoch))
            try main.save()
            main.insert(note)
            #expect(main.withState { $0.pending.logs[entity].count } == 1)
            try main.save()
        }
        #expect(Self.stored(container)?.text == "round 3")
        #expect(container.count(of: Note.self) == 2)
    }

    /// Saving again and again, with nothing else saved, is never a conflict, and the changes of
    /// a context that has read nothing of the entity are still logged (no look-up per change).
    @Test(arguments: MergePolicy.allCases)
    func ownSavesInARowDoNotConflictAndStayLogged(policy: MergePolicy) throws {
        let container = try Fixtures.inMemoryContainer()
        let main = container.mainContext
        main.mergePolicy = policy
        let entity = container.core.schema.index(of: Note.self)
        var note = Self.note
        for round in 1...5 {
            note.text = "round \(round)"
            main.insert(note)
            main.insert(Note(text: "other \(round)", createdAt: Fixtures.epoch))
            #expect(main.withState { $0.pending.logs[entity].count } == 2)
            try main.save()
        }
        #expect(Self.stored(container)?.text == "round 5")
    }

    /// A blind change of an id the context never read nor saved is still based on the object
    /// stored when it makes the change, after saves of other objects of the entity.
    @Test func anIDNeitherReadNorSavedIsBasedOnTheStoredObject() throws {
        let container = try Fixtures.inMemoryContainer()
        container.mainContext.insert(Self.note)
        try container.mainContext.save()
        let context = container.newBackgroundContext()
        context.insert(Note(text: "own", createdAt: Fixtures.epoch))
        try context.save()
        _ = try Self.importerSaves(container)
        context.insert(Note(id: Self.note.id, text: "from server", createdAt: Fixtures.epoch))
        try context.save()
        #expect(Self.stored(container)?.text == "from server")
    }

    /// A long-lived context that inserts and deletes objects it never reads keeps a record
    /// per id it deleted (what its saves left, which no pruning drops: see
    /// `OwnDeletionRecordTests`), until a fetch of every object of the entity replaces them.
    @Test func ownDeletionsAreKeptUntilAFetchOfEveryObject() throws {
        let container = try Fixtures.inMemoryContainer()
        let main = container.mainContext
        let entity = container.core.schema.index(of: Note.self)
        for number in 0..<10_000 {
            let note = Note(text: "job \(number)", createdAt: Fixtures.epoch)
            main.insert(note)
            try main.save()
            main.delete(note)
            try main.save()
        }
        #expect(container.count(of: Note.self) == 0)
        #expect(main.withState { $0.reads[entity].count } == 10_000)
        #expect(try main.fetch(FetchDescriptor<Note>()).isEmpty)
        #expect(main.withState { $0.reads[entity].count } == 0)
    }
}
