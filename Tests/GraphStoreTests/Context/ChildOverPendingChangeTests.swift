import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A child's change made over its parent's (or a further ancestor's) pending change of the same
/// object is based as that change was while it was pending, and once the ancestor saved it, on
/// what that save wrote. So an ancestor's own save is never a conflict for the change, under any
/// policy, while another context's save in between still is one.
@Suite struct ChildOverPendingChangeTests {
    static let note = Note(id: UUID(uuidString: "00000000-0000-0000-0000-00000000000C")!, text: "v0", createdAt: Fixtures.epoch)

    /// A container holding the note, saved by its main context of `policy`.
    static func setUp(policy: MergePolicy) throws -> GraphContainer {
        let container = try Fixtures.inMemoryContainer()
        container.mainContext.mergePolicy = policy
        container.mainContext.insert(note)
        try container.mainContext.save()
        return container
    }

    static func stored(_ container: GraphContainer) -> Note? {
        container.newBackgroundContext().model(Note.self, id: note.id)
    }

    /// `context` changes the note's text without saving.
    static func draft(_ text: String, in context: GraphContext) {
        var draft = note
        draft.text = text
        context.insert(draft)
    }

    /// The parent changes the note; a child changes it over that change, read through it or
    /// built without reading; the parent saves its own change, then the child's. Nobody else
    /// touched the note: the child's change is stored. (It kept the base the parent's change
    /// had before that save: `.error` threw `updatedElsewhere` and `.storeWins` dropped the
    /// child's change without a word.)
    @Test(arguments: MergePolicy.allCases, [true, false])
    func aChildsChangeOverItsParentsChangeSavesAfterTheParentSavedIt(policy: MergePolicy, readFirst: Bool) throws {
        let container = try Self.setUp(policy: policy)
        let main = container.mainContext
        Self.draft("parent edit", in: main)
        let child = main.newChildContext()
        var copy = readFirst ? try #require(child.model(Note.self, id: Self.note.id)) : Self.note
        copy.text = "child edit"
        copy.isArchived = true
        child.insert(copy)
        try main.save()
        try child.save()
        try main.save()
        #expect(Self.stored(container) == copy)
        try container.checkInvariants()
    }

    /// A grandchild changes the note over its parent's pending change; the parent pushes that
    /// change and the main context saves it; then the grandchild's change goes up the same way.
    @Test(arguments: MergePolicy.allCases)
    func aGrandchildsChangeSavesAfterItsAncestorsSavedTheChangeItWasMadeOver(policy: MergePolicy) throws {
        let container = try Self.setUp(policy: policy)
        let main = container.mainContext
        let child = main.newChildContext()
        let grandchild = child.newChildContext()
        Self.draft("child edit", in: child)
        var copy = try #require(grandchild.model(Note.self, id: Self.note.id))
        #expect(copy.text == "child edit")
        copy.text = "grandchild edit"
        grandchild.insert(copy)
        try child.save()
        try main.save()
        try grandchild.save()
        try child.save()
        try main.save()
        #expect(Self.stored(container)?.text == "grandchild edit")
    }

    /// The main context changes the note; a child changes it over that change, and a grandchild
    /// over the child's; the child drops its change, the main context saves its own. The
    /// grandchild's change was made over a change that was itself made over the main context's,
    /// now saved: it is no conflict either.
    @Test(arguments: MergePolicy.allCases)
    func aGrandchildsChangeOverADroppedChangeOverASavedOneSaves(policy: MergePolicy) throws {
        let container = try Self.setUp(policy: policy)
        let main = container.mainContext
        Self.draft("main edit", in: main)
        let child = main.newChildContext()
        let grandchild = child.newChildContext()
        var childCopy = try #require(child.model(Note.self, id: Self.note.id))
        childCopy.isArchived = true
        child.insert(childCopy)
        var copy = try #require(grandchild.model(Note.self, id: Self.note.id))
        copy.text = "grandchild edit"
        grandchild.insert(copy)
        child.rollback()
        try main.save()
        try grandchild.save()
        try child.save()
        try main.save()
        #expect(Self.stored(container) == copy)
    }

    /// The same child change, but another context saves the note after the parent's save and
    /// before the child's change reaches the store: that is a conflict, resolved by the policy
    /// against what the parent's save wrote (the child changed `isArchived` only).
    @Test(arguments: MergePolicy.allCases)
    func anotherContextsSaveInBetweenStillConflicts(policy: MergePolicy) throws {
        let container = try Self.setUp(policy: policy)
        let main = container.mainContext
        Self.draft("parent edit", in: main)
        let child = main.newChildContext()
        var copy = try #require(child.model(Note.self, id: Self.note.id))
        copy.isArchived = true
        child.insert(copy)
        try main.save()
        let importer = container.newBackgroundContext()
        var imported = try #require(importer.model(Note.self, id: Self.note.id))
        imported.text = "from import"
        importer.insert(imported)
        try importer.save()
        try child.save()
        switch policy {
        case .error:
            #expect {
                try main.save()
            } throws: { error in
                guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
                return conflicts.map(\.kind) == [.updatedElsewhere]
            }
            #expect(Self.stored(container) == imported)
        case .storeWins:
            try main.save()
            #expect(Self.stored(container) == imported)
        case .contextWins:
            try main.save()
            #expect(Self.stored(container) == copy)
        case .mergeByProperty:
            // Relative to the parent's save, the child changed only `isArchived`: the import's
            // text stays. (Based on the note before the parent's change, the child's copy also
            // "changed" the text, and wrote "parent edit" over the import's.)
            try main.save()
            #expect(Self.stored(container)?.text == "from import")
            #expect(Self.stored(container)?.isArchived == true)
        }
    }
}
