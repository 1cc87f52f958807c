import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// After a `.mergeByProperty` save that merged, the context's held copy lacks the other
/// context's values: saving that copy again merges again instead of reverting them.
@Suite struct MergeByPropertyHeldCopyTests {
    /// Reads one object in a `.mergeByProperty` context; another context changes `theirs` and
    /// saves; the first changes its copy with `first`, saves (a merge), changes the same copy
    /// with `second` and saves again. Returns what is stored then.
    static func saveHeldCopyTwice<E: Entity>(
        _ object: E, in container: GraphContainer, theirs: (inout E) -> Void, first: (inout E) -> Void, second: (inout E) -> Void
    ) throws -> E? {
        container.mainContext.insert(object)
        try container.mainContext.save()
        let mine = container.newBackgroundContext()
        mine.mergePolicy = .mergeByProperty
        var copy = try #require(mine.model(E.self, id: object.id))
        let other = container.newBackgroundContext()
        var theirCopy = try #require(other.model(E.self, id: object.id))
        theirs(&theirCopy)
        other.insert(theirCopy)
        try other.save()
        first(&copy)
        mine.insert(copy)
        try mine.save()
        second(&copy)
        mine.insert(copy)
        try mine.save()
        try container.checkInvariants()
        return container.newBackgroundContext().model(E.self, id: object.id)
    }

    /// A note (references: the general save path). (The second save was based on the merged
    /// object, so it went through as a plain write and set `isArchived` back to false.)
    @Test(arguments: StoreKind.allCases)
    func aSecondSaveOfTheHeldCopyKeepsTheMergedValues(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let note = Note(text: "base", createdAt: Fixtures.epoch)
            let stored = try Self.saveHeldCopyTwice(
                note, in: container, theirs: { $0.isArchived = true }, first: { $0.text = "b" }, second: { $0.text = "c" })
            #expect(stored?.text == "c")
            #expect(stored?.isArchived == true)
        }
    }

    /// The same for a standalone entity (no relationship, no constraint: the direct path).
    @Test(arguments: StoreKind.allCases)
    func aSecondSaveOfTheHeldCopyKeepsTheMergedValuesOfAStandaloneEntity(store: StoreKind) async throws {
        try await withContainer(store, for: exampleModel + [MergeByPropertyTests.Profile.self]) { container in
            let stored = try Self.saveHeldCopyTwice(
                MergeByPropertyTests.profile, in: container,
                theirs: { $0.nickname = "theirs" }, first: { $0.name = "b" }, second: { $0.scores = [9] })
            #expect(stored?.name == "b")
            #expect(stored?.scores == [9])
            #expect(stored?.nickname == "theirs")
        }
    }

    /// A copy read again after the merge has every value: its next save is a plain write, and a
    /// property it sets back to an older value stays so.
    @Test func aCopyReadAfterTheMergeWritesPlainly() async throws {
        try await withContainer(.inMemory) { container in
            let note = Note(text: "base", createdAt: Fixtures.epoch)
            container.mainContext.insert(note)
            try container.mainContext.save()
            let mine = container.newBackgroundContext()
            mine.mergePolicy = .mergeByProperty
            var copy = try #require(mine.model(Note.self, id: note.id))
            let other = container.newBackgroundContext()
            var theirs = try #require(other.model(Note.self, id: note.id))
            theirs.isArchived = true
            other.insert(theirs)
            try other.save()
            copy.text = "b"
            mine.insert(copy)
            try mine.save()
            var fresh = try #require(mine.model(Note.self, id: note.id))
            #expect(fresh.isArchived)
            fresh.isArchived = false
            mine.insert(fresh)
            try mine.save()
            #expect(container.newBackgroundContext().model(Note.self, id: note.id)?.isArchived == false)
        }
    }
}
