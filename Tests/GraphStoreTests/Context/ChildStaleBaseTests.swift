import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A child's copy made on an older version than its parent's never overwrites the newer one.
///
/// Before, a child's save into a parent that held a change of the same id took the parent's
/// base, and a child that read through a change its parent had since saved took whatever the
/// parent's last save of the id wrote, or the parent's current pending change's base. When
/// the parent had read another context's save of the object in between (or saved it itself,
/// for a copy the child read from the store), the child's older copy was saved over that save
/// without a conflict: its values, never having seen the other save, silently replaced it.
/// Now, where the parent holds a change, the child's save finds the conflict and its merge
/// policy settles it; where it holds none, the parent's save finds it.
@Suite struct ChildStaleBaseTests {
    static let note = Note(id: UUID(uuidString: "00000000-0000-0000-0000-0000000000C5")!, text: "v0", createdAt: Fixtures.epoch)

    static func seeded() throws -> GraphContainer {
        let container = try GraphContainer(for: [Post.self, Note.self, Tag.self], store: .inMemory)
        container.mainContext.insert(note)
        try container.mainContext.save()
        return container
    }

    static func stored(_ container: GraphContainer) -> Note? {
        container.newBackgroundContext().model(Note.self, id: note.id)
    }

    /// The save of `context` throws a conflict of the note, updated elsewhere.
    static func expectConflict(_ context: GraphContext, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) {
            try context.save()
        } throws: { error in
            guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
            return conflicts.map(\.id) == [note.id.uuidString] && conflicts[0].kind == .updatedElsewhere
        }
    }

    /// Another context archives the note and saves.
    static func otherArchives(_ container: GraphContainer) throws {
        let other = container.newBackgroundContext()
        var copy = try #require(other.model(Note.self, id: note.id))
        copy.isArchived = true
        other.insert(copy)
        try other.save()
    }

    /// The parent reads the note again and changes another property (pending).
    static func parentRereadsAndChanges(_ parent: GraphContext) throws {
        var copy = try #require(parent.model(Note.self, id: note.id))
        copy.modifiedAt = Date(timeIntervalSince1970: 50)
        parent.insert(copy)
    }

    /// The parent holds a draft of the note (pending); returns a child and its copy read
    /// through the draft.
    static func childReadsThroughDraft(of parent: GraphContext) throws -> (GraphContext, Note) {
        var draft = try #require(parent.model(Note.self, id: note.id))
        draft.text = "parent draft"
        parent.insert(draft)
        let child = parent.newChildContext()
        return (child, try #require(child.model(Note.self, id: note.id)))
    }

    /// The child saves `copy`, changed, into the parent; the parent's save must then be a
    /// conflict that leaves the other context's archiving in place.
    static func expectChildsCopyConflicts(
        _ copy: Note, child: GraphContext, parent: GraphContext, container: GraphContainer, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var copy = copy
        copy.text = "from child"
        child.insert(copy)
        try child.save()
        expectConflict(parent, sourceLocation: sourceLocation)
        #expect(stored(container)?.isArchived == true, sourceLocation: sourceLocation)
    }

    /// The child saves `copy`, changed, into a parent that holds a newer change of the note:
    /// the child's save must be the conflict, take nothing into the parent and leave the child
    /// its change; the parent's own save then keeps the other context's archiving.
    static func expectChildsSaveConflicts(
        _ copy: Note, child: GraphContext, parent: GraphContext, container: GraphContainer, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var copy = copy
        copy.text = "from child"
        child.insert(copy)
        let before = parent.model(Note.self, id: note.id)
        expectConflict(child, sourceLocation: sourceLocation)
        #expect(child.hasChanges, sourceLocation: sourceLocation)
        #expect(parent.model(Note.self, id: note.id) == before, sourceLocation: sourceLocation)
        try parent.save()
        let saved = try #require(Self.stored(container), sourceLocation: sourceLocation)
        #expect(saved.isArchived, sourceLocation: sourceLocation)
        #expect(saved.text != "from child", sourceLocation: sourceLocation)
    }

    // MARK: Bug 1: the parent holds a change of the id when the child pushes

    @Test func childStoreReadThenParentRereadsOthersSaveAndChanges() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        let child = parent.newChildContext()
        let copy = try #require(child.model(Note.self, id: Self.note.id))
        try Self.otherArchives(container)
        try Self.parentRereadsAndChanges(parent)
        try Self.expectChildsSaveConflicts(copy, child: child, parent: parent, container: container)
    }

    /// The parent's own save after the child read from the store is a conflict for that copy,
    /// as the article says, also while the parent holds a further change.
    @Test func childStoreReadThenParentSavesAndChangesAgain() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        let child = parent.newChildContext()
        var copy = try #require(child.model(Note.self, id: Self.note.id))
        var own = try #require(parent.model(Note.self, id: Self.note.id))
        own.isArchived = true
        parent.insert(own)
        try parent.save()
        own.modifiedAt = Date(timeIntervalSince1970: 50)
        parent.insert(own)
        copy.text = "from child"
        try Self.expectChildsSaveConflicts(copy, child: child, parent: parent, container: container)
    }

    @Test(arguments: [false, true])
    func childReadThroughDraftThenParentSettlesRereadsAndChanges(byRollback: Bool) throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        let (child, copy) = try Self.childReadsThroughDraft(of: parent)
        if byRollback { parent.rollback() } else { try parent.save() }
        try Self.otherArchives(container)
        try Self.parentRereadsAndChanges(parent)
        try Self.expectChildsSaveConflicts(copy, child: child, parent: parent, container: container)
    }

    /// The child changes its copy while the parent's draft is pending, and pushes it after the
    /// parent saved the draft, read the other context's save and changed that.
    @Test func childChangeOverDraftPushedAfterParentRereadsAndChanges() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        var (child, copy) = try Self.childReadsThroughDraft(of: parent)
        copy.text = "from child"
        child.insert(copy)
        try parent.save()
        try Self.otherArchives(container)
        try Self.parentRereadsAndChanges(parent)
        Self.expectConflict(child)
        try parent.save()
        #expect(Self.stored(container)?.isArchived == true)
        #expect(Self.stored(container)?.text == "parent draft")
    }

    @Test func childStoreReadPushedOverParentsDeleteAll() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        let child = parent.newChildContext()
        var copy = try #require(child.model(Note.self, id: Self.note.id))
        try Self.otherArchives(container)
        try parent.delete(model: Note.self)
        copy.text = "from child"
        child.insert(copy)
        Self.expectConflict(child)
        try parent.save()
        #expect(Self.stored(container) == nil)
    }

    // MARK: The child's merge policy settles a conflict with the parent's newer change

    /// `.storeWins`: the parent's change stays as it was, also when the child saves its copy
    /// again.
    @Test func storeWinsLeavesParentsChange() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        let child = parent.newChildContext()
        child.mergePolicy = .storeWins
        var copy = try #require(child.model(Note.self, id: Self.note.id))
        try Self.otherArchives(container)
        try Self.parentRereadsAndChanges(parent)
        for text in ["from child", "again"] {
            copy.text = text
            child.insert(copy)
            try child.save()
            #expect(!child.hasChanges)
        }
        try parent.save()
        let stored = try #require(Self.stored(container))
        #expect(stored.text == Self.note.text)
        #expect(stored.isArchived)
        #expect(stored.modifiedAt == Date(timeIntervalSince1970: 50))
    }

    /// `.contextWins`: the child's copy replaces the parent's change whole, as a top-level
    /// save's copy replaces the stored object.
    @Test func contextWinsTakesChildsCopy() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        let child = parent.newChildContext()
        child.mergePolicy = .contextWins
        var copy = try #require(child.model(Note.self, id: Self.note.id))
        try Self.otherArchives(container)
        try Self.parentRereadsAndChanges(parent)
        copy.text = "from child"
        child.insert(copy)
        try child.save()
        try parent.save()
        #expect(Self.stored(container) == copy)
    }

    /// Three levels: a grandchild's copy read through the top context's draft, pushed after
    /// that context saved the draft and the middle one changed what it wrote, is no conflict:
    /// only the ancestors' own saves are in between.
    @Test func ancestorsOwnSaveIsNoConflictThreeLevelsDown() throws {
        let container = try Self.seeded()
        let top = container.newBackgroundContext()
        var draft = try #require(top.model(Note.self, id: Self.note.id))
        draft.text = "top draft"
        top.insert(draft)
        let middle = top.newChildContext()
        let bottom = middle.newChildContext()
        var copy = try #require(bottom.model(Note.self, id: Self.note.id))
        copy.isArchived = true
        bottom.insert(copy)
        try top.save()
        var between = try #require(middle.model(Note.self, id: Self.note.id))
        between.modifiedAt = Date(timeIntervalSince1970: 50)
        middle.insert(between)
        try bottom.save()
        try middle.save()
        try top.save()
        let stored = try #require(Self.stored(container))
        #expect(stored.isArchived)
        #expect(stored.text == "top draft")
    }

    /// Three levels, with another context's save the top context read in between: the
    /// grandchild's copy is a conflict.
    @Test func othersSaveIsConflictThreeLevelsDown() throws {
        let container = try Self.seeded()
        let top = container.newBackgroundContext()
        var draft = try #require(top.model(Note.self, id: Self.note.id))
        draft.text = "top draft"
        top.insert(draft)
        let middle = top.newChildContext()
        let bottom = middle.newChildContext()
        var copy = try #require(bottom.model(Note.self, id: Self.note.id))
        try top.save()
        try Self.otherArchives(container)
        try Self.parentRereadsAndChanges(top)
        copy.text = "from bottom"
        bottom.insert(copy)
        try bottom.save()
        Self.expectConflict(middle)
        #expect(middle.hasChanges)
        try top.save()
        #expect(Self.stored(container)?.isArchived == true)
    }

    /// A child's value made over its grandparent's pending change (a sibling branch's save),
    /// pushed into its parent before the grandparent saved that change; then a cousin's copy
    /// read from the store before it all. The pushed value stands on what the grandparent's
    /// save wrote, so the cousin's older copy is a conflict at the cousin's save (settled by
    /// its policy), not taken on the older base and written over the sibling's save, which it
    /// never saw. Found by the lineage oracle.
    @Test(arguments: [MergePolicy.error, .storeWins])
    func cousinsOlderCopyOverValueMadeOnAncestorsSavedChange(policy: MergePolicy) throws {
        let container = try Self.seeded()
        let top = container.newBackgroundContext()
        let middle = top.newChildContext(), sibling = top.newChildContext()
        let maker = middle.newChildContext(), cousin = middle.newChildContext()
        cousin.mergePolicy = policy
        var stale = try #require(cousin.model(Note.self, id: Self.note.id))
        var draft = try #require(sibling.model(Note.self, id: Self.note.id))
        draft.text = "from sibling"
        sibling.insert(draft)
        try sibling.save()
        var over = try #require(maker.model(Note.self, id: Self.note.id))
        #expect(over.text == "from sibling")
        over.text = "over sibling"
        maker.insert(over)
        try maker.save()
        try top.save()
        #expect(Self.stored(container)?.text == "from sibling")
        stale.text = "stale"
        cousin.insert(stale)
        if policy == .error {
            Self.expectConflict(cousin)
        } else {
            try cousin.save()
        }
        try middle.save()
        try top.save()
        #expect(Self.stored(container)?.text == "over sibling")
    }

    /// A child that read the note as gone through its parent's `delete(model:)`, which the
    /// parent then rolled back, makes it again: its copy is based on the version the parent's
    /// marker deleted, so another context's save since is a conflict at the parent's save (by
    /// id, or through a fetch of every note). Found by the lineage oracle.
    @Test(arguments: [false, true])
    func childsReadThroughARolledBackDeleteAllKeepsItsBase(fetches: Bool) throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        let child = parent.newChildContext()
        try parent.delete(model: Note.self)
        if fetches {
            #expect(try child.fetch(FetchDescriptor<Note>()).isEmpty)
        } else {
            #expect(child.model(Note.self, id: Self.note.id) == nil)
        }
        parent.rollback()
        try Self.otherArchives(container)
        var again = Self.note
        again.text = "made again"
        child.insert(again)
        try child.save()
        Self.expectConflict(parent)
        #expect(Self.stored(container)?.isArchived == true)
        #expect(Self.stored(container)?.text == Self.note.text)
    }

    /// A child that read a new object through its parent's pending insert, which the parent's
    /// `delete(model:)` then dropped (the object was never stored: nothing to delete), saved or
    /// rolled back: once another context creates the id, the child's copy is a conflict at the
    /// parent's save, not written over it. Found by a second reading.
    @Test(arguments: [false, true])
    func childsReadThroughAnInsertADeleteAllDroppedKeepsItsBase(saves: Bool) throws {
        let container = try GraphContainer(for: [Post.self, Note.self, Tag.self], store: .inMemory)
        let parent = container.newBackgroundContext()
        let child = parent.newChildContext()
        parent.insert(Self.note)
        var copy = try #require(child.model(Note.self, id: Self.note.id))
        try parent.delete(model: Note.self)
        if saves { try parent.save() } else { parent.rollback() }
        let other = container.newBackgroundContext()
        var theirs = Self.note
        theirs.text = "other's"
        other.insert(theirs)
        try other.save()
        copy.text = "from child"
        child.insert(copy)
        try child.save()
        #expect(throws: GraphStoreError.self) { try parent.save() }
        #expect(Self.stored(container)?.text == "other's")
    }

    // MARK: Bug 2: the parent saved again, on another context's save, before the child pushes

    @Test func childReadThroughSavedDraftThenParentSavesOthersVersion() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        let (child, copy) = try Self.childReadsThroughDraft(of: parent)
        try parent.save()
        try Self.otherArchives(container)
        try Self.parentRereadsAndChanges(parent)
        try parent.save()
        try Self.expectChildsCopyConflicts(copy, child: child, parent: parent, container: container)
    }

    /// Under `.mergeByProperty` the child's copy merges with the other context's save instead
    /// of reverting it: only the text, which the child changed, is the child's.
    @Test func childReadThroughSavedDraftMergesWithOthersSave() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        parent.mergePolicy = .mergeByProperty
        var (child, copy) = try Self.childReadsThroughDraft(of: parent)
        try parent.save()
        try Self.otherArchives(container)
        try Self.parentRereadsAndChanges(parent)
        try parent.save()
        copy.text = "from child"
        child.insert(copy)
        try child.save()
        try parent.save()
        let stored = try #require(Self.stored(container))
        #expect(stored.isArchived)
        #expect(stored.text == "from child")
    }

    // MARK: No conflict: what the child's copy counts as based on is newer

    @Test func childOverPendingDraftDoesNotConflict() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        var (child, copy) = try Self.childReadsThroughDraft(of: parent)
        copy.text = "from child"
        child.insert(copy)
        try child.save()
        try parent.save()
        #expect(Self.stored(container)?.text == "from child")
    }

    /// The parent saved the draft the child read through, then changed (and, with `saves`,
    /// saved) its own save again: its own saves are no conflict for the child.
    @Test(arguments: [false, true])
    func parentsOwnSavesAfterChildsReadDoNotConflict(saves: Bool) throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        var (child, copy) = try Self.childReadsThroughDraft(of: parent)
        try parent.save()
        try Self.parentRereadsAndChanges(parent)
        if saves { try parent.save() }
        copy.text = "from child"
        child.insert(copy)
        try child.save()
        try parent.save()
        #expect(Self.stored(container)?.text == "from child")
    }

    /// A child's repeated saves, with the parent saving each, never conflict.
    @Test func childsRepeatedSavesThroughSavingParentDoNotConflict() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        let child = parent.newChildContext()
        var copy = try #require(child.model(Note.self, id: Self.note.id))
        for round in 0..<3 {
            copy.text = "round \(round)"
            child.insert(copy)
            try child.save()
            try parent.save()
            try Self.parentRereadsAndChanges(parent)
        }
        try parent.save()
        #expect(Self.stored(container)?.text == "round 2")
    }

    /// A child of a context that saved the object reads it afterwards: no conflict.
    @Test func childReadAfterParentsSaveDoesNotConflict() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        var own = try #require(parent.model(Note.self, id: Self.note.id))
        own.isArchived = true
        parent.insert(own)
        try parent.save()
        let child = parent.newChildContext()
        var copy = try #require(child.model(Note.self, id: Self.note.id))
        try Self.parentRereadsAndChanges(parent)
        copy.text = "from child"
        child.insert(copy)
        try child.save()
        try parent.save()
        #expect(Self.stored(container)?.text == "from child")
    }

    // MARK: Found by the second reading

    /// Under `.mergeByProperty` the text the child changed goes over the parent's change, which
    /// keeps its own edit and the other context's archiving; the child then saves the copy it
    /// still holds again (with the parent saving in between, or not): it merges again (at the
    /// child's save, or at the parent's, a conflict with what the parent saved) instead of
    /// replacing the parent's change, and so the other context's save, whole.
    @Test(arguments: [false, true])
    func mergedCopySavedAgainMergesAgain(parentSavesBetween: Bool) throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        parent.mergePolicy = .mergeByProperty
        let child = parent.newChildContext()
        var copy = try #require(child.model(Note.self, id: Self.note.id))
        try Self.otherArchives(container)
        try Self.parentRereadsAndChanges(parent)
        copy.text = "from child"
        child.insert(copy)
        try child.save()
        if parentSavesBetween {
            // The text the child changed went over the parent's change, which kept its own
            // edit and the other context's archiving.
            try parent.save()
            let stored = try #require(Self.stored(container))
            #expect(stored.text == "from child")
            #expect(stored.isArchived)
            #expect(stored.modifiedAt == Date(timeIntervalSince1970: 50))
        }
        copy.text = "again"
        child.insert(copy)
        try child.save()
        try parent.save()
        let stored = try #require(Self.stored(container))
        #expect(stored.text == "again")
        #expect(stored.isArchived)
        #expect(stored.modifiedAt == Date(timeIntervalSince1970: 50))
    }

    /// A sibling read the parent's change after an earlier child made the change it pushes:
    /// once the parent saved the pushed change and read another context's save, the sibling's
    /// copy is still a conflict (the pushed change no longer keeps the earlier child's older
    /// sequence, below what the sibling saw).
    @Test func siblingReadAfterAnEarlierChildsChangeStillConflicts() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        var draft = try #require(parent.model(Note.self, id: Self.note.id))
        draft.text = "parent draft"
        parent.insert(draft)
        let first = parent.newChildContext()
        var firstCopy = try #require(first.model(Note.self, id: Self.note.id))
        firstCopy.text = "from first"
        first.insert(firstCopy)
        draft.text = "parent draft again"
        parent.insert(draft)
        let sibling = parent.newChildContext()
        var siblingCopy = try #require(sibling.model(Note.self, id: Self.note.id))
        try first.save()
        try parent.save()
        try Self.otherArchives(container)
        _ = try #require(parent.model(Note.self, id: Self.note.id))
        siblingCopy.modifiedAt = Date(timeIntervalSince1970: 70)
        sibling.insert(siblingCopy)
        try sibling.save()
        Self.expectConflict(parent)
        #expect(Self.stored(container)?.isArchived == true)
    }

    /// Three levels: the middle context's `.storeWins` save leaves its change out of the top
    /// context, which holds a newer one; the bottom context's copy, read through that change
    /// and saved again, is left out again instead of replacing the top context's change.
    @Test func leftOutInTheMiddleStaysLeftOutForTheBottom() throws {
        let container = try Self.seeded()
        let top = container.newBackgroundContext()
        let middle = top.newChildContext()
        middle.mergePolicy = .storeWins
        let bottom = middle.newChildContext()
        var mine = try #require(middle.model(Note.self, id: Self.note.id))
        mine.text = "middle"
        middle.insert(mine)
        var copy = try #require(bottom.model(Note.self, id: Self.note.id))
        copy.text = "bottom"
        bottom.insert(copy)
        try bottom.save()
        try Self.otherArchives(container)
        try Self.parentRereadsAndChanges(top)
        try middle.save()
        copy.text = "bottom again"
        bottom.insert(copy)
        try bottom.save()
        try middle.save()
        try top.save()
        let stored = try #require(Self.stored(container))
        #expect(stored.isArchived)
        #expect(stored.text == Self.note.text)
        #expect(stored.modifiedAt == Date(timeIntervalSince1970: 50))
    }

    /// After a `.mergeByProperty` save, the parent remembers its own value at a made-up version
    /// just before the merge. That version is no longer taken for the other context's save it
    /// merged with (one commit before): a child's copy of that save, pushed over the parent's
    /// next change, merges instead of replacing it, and the parent's saved edit stays.
    @Test func madeUpVersionIsNotAnotherContextsSave() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        parent.mergePolicy = .mergeByProperty
        var own = try #require(parent.model(Note.self, id: Self.note.id))
        try Self.otherArchives(container)
        let child = parent.newChildContext()
        var copy = try #require(child.model(Note.self, id: Self.note.id))
        own.text = "parent's"
        parent.insert(own)
        try parent.save()
        own.modifiedAt = Date(timeIntervalSince1970: 50)
        parent.insert(own)
        copy.createdAt = Date(timeIntervalSince1970: 100)
        child.insert(copy)
        try child.save()
        try parent.save()
        let stored = try #require(Self.stored(container))
        #expect(stored.text == "parent's")
        #expect(stored.isArchived)
        #expect(stored.modifiedAt == Date(timeIntervalSince1970: 50))
        #expect(stored.createdAt == Date(timeIntervalSince1970: 100))
    }

    // MARK: Found by the lineage oracle

    /// The parent holds a copy from before its child's save, saves what the child pushed, then
    /// changes and saves the copy it held: a conflict with the child's value, not an overwrite.
    /// Reading the object in the parent first makes the child's value what it knows.
    @Test(arguments: [false, true])
    func parentsCopyFromBeforeItsChildsSaveConflicts(readsFirst: Bool) throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        var held = try #require(parent.model(Note.self, id: Self.note.id))
        let child = parent.newChildContext()
        var copy = try #require(child.model(Note.self, id: Self.note.id))
        copy.text = "from child"
        child.insert(copy)
        try child.save()
        try parent.save()
        if readsFirst { held = try #require(parent.model(Note.self, id: Self.note.id)) }
        held.isArchived = true
        parent.insert(held)
        if readsFirst {
            try parent.save()
            #expect(Self.stored(container)?.text == "from child")
        } else {
            Self.expectConflict(parent)
            #expect(Self.stored(container)?.text == "from child")
        }
    }

    /// A sibling's save replaced the change a child read through, and the parent saved it: the
    /// child's copy, saved later, is a conflict with the sibling's value.
    @Test func copyReadThroughAReplacedChangeConflicts() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        let first = parent.newChildContext(), second = parent.newChildContext()
        var firstCopy = try #require(first.model(Note.self, id: Self.note.id))
        var secondCopy = try #require(second.model(Note.self, id: Self.note.id))
        firstCopy.text = "first"
        first.insert(firstCopy)
        try first.save()
        secondCopy.isArchived = true
        second.insert(secondCopy)
        try second.save()
        try parent.save()
        firstCopy.modifiedAt = Date(timeIntervalSince1970: 70)
        first.insert(firstCopy)
        try first.save()
        Self.expectConflict(parent)
        #expect(Self.stored(container)?.isArchived == true)
    }

    /// Three levels: a grandchild read through the middle context's change, which the middle
    /// context pushed; the top context saved another context's version in between and then
    /// rolled the pushed change back. The grandchild's copy is still a conflict.
    @Test func grandchildsCopyAfterTheTopDroppedThePushedChangeConflicts() throws {
        let container = try Self.seeded()
        let top = container.newBackgroundContext()
        let middle = top.newChildContext()
        var mine = try #require(middle.model(Note.self, id: Self.note.id))
        mine.text = "middle"
        middle.insert(mine)
        let bottom = middle.newChildContext()
        var copy = try #require(bottom.model(Note.self, id: Self.note.id))
        try Self.otherArchives(container)
        try Self.parentRereadsAndChanges(top)
        try top.save()
        try middle.save()
        Self.expectConflict(top)
        top.rollback()
        copy.text = "bottom"
        bottom.insert(copy)
        try bottom.save()
        try middle.save()
        Self.expectConflict(top)
        #expect(Self.stored(container)?.isArchived == true)
        #expect(Self.stored(container)?.modifiedAt == Date(timeIntervalSince1970: 50))
    }

    /// Under `.storeWins`, the parent's change of its copy from before the child's value is
    /// dropped, and stays dropped when it changes that copy again: the dropped save did not
    /// make the child's value what it knows.
    @Test func storeWinsKeepsDroppingTheParentsCopyFromBefore() throws {
        let container = try Self.seeded()
        let parent = container.newBackgroundContext()
        parent.mergePolicy = .storeWins
        var held = try #require(parent.model(Note.self, id: Self.note.id))
        let child = parent.newChildContext()
        var copy = try #require(child.model(Note.self, id: Self.note.id))
        copy.text = "from child"
        child.insert(copy)
        try child.save()
        try parent.save()
        for round in 0..<2 {
            held.modifiedAt = Date(timeIntervalSince1970: Double(60 + round))
            parent.insert(held)
            try parent.save()
            #expect(Self.stored(container)?.text == "from child")
        }
    }

    /// A parent that never read the entity saved its own object, took a child's value of it,
    /// then deleted every object with `delete(model:)` and saved: its save dropped the table,
    /// and what it knew before the child's value went with it. Inserting the object again is
    /// no conflict (under `.storeWins` it was silently dropped).
    @Test(arguments: [MergePolicy.error, .storeWins])
    func recreatingAfterDeletingEveryObjectIsNoConflict(policy: MergePolicy) throws {
        let container = try GraphContainer(for: [Post.self, Note.self, Tag.self], store: .inMemory)
        let parent = container.newBackgroundContext()
        parent.mergePolicy = policy
        parent.insert(Self.note)
        try parent.save()
        let child = parent.newChildContext()
        var copy = Self.note
        copy.text = "from child"
        child.insert(copy)
        try child.save()
        _ = try parent.delete(model: Note.self)
        try parent.save()
        parent.insert(Self.note)
        try parent.save()
        #expect(Self.stored(container) == Self.note)
    }

    /// A parent's `delete(model:)` that deletes a child's value among other objects, saved
    /// object by object, is its own deletion: inserting the object again is no conflict (the
    /// model-based test found it kept what the parent knew before the child's value).
    @Test(arguments: [MergePolicy.error, .storeWins])
    func recreatingAfterDeletingEveryObjectOneByOneIsNoConflict(policy: MergePolicy) throws {
        let container = try GraphContainer(for: [Post.self, Note.self, Tag.self], store: .inMemory)
        let parent = container.newBackgroundContext()
        parent.mergePolicy = policy
        parent.insert(Self.note)
        try parent.save()
        let child = parent.newChildContext()
        var copy = Self.note
        copy.text = "from child"
        child.insert(copy)
        try child.save()
        _ = try parent.delete(model: Note.self)
        parent.insert(Note(text: "another", createdAt: Fixtures.epoch))
        try parent.save()
        parent.insert(Self.note)
        try parent.save()
        #expect(Self.stored(container) == Self.note)
    }
}
