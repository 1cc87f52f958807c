import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A child's copy is based on what it saw: an object read through its parent's pending change
/// stays based on that change after the parent saves or drops it, and a child's own saves, once
/// the parent saved them, are what it last read. So a copy held in a child never overwrites a
/// later save of another context without a conflict, and never conflicts with its own saves.
@Suite struct ChildReadConflictTests {
    /// The editor changes the note without saving; a child of it reads the note through that
    /// change. Returns the child and its copy.
    static func draftReadInAChild(of editor: GraphContext) throws -> (sheet: GraphContext, copy: Note) {
        var draft = ReadConflictTests.note
        draft.text = "editor draft"
        editor.insert(draft)
        let sheet = editor.newChildContext()
        return (sheet, try #require(sheet.model(Note.self, id: draft.id)))
    }

    /// Another context saves the note with the text "from import".
    static func importerSaves(_ note: Note, in importer: GraphContext) throws {
        var imported = note
        imported.text = "from import"
        importer.insert(imported)
        try importer.save()
    }

    /// The child saves `copy` into the editor, whose save is then a conflict: the importer's
    /// save stays.
    static func expectChildsSaveConflicts(
        _ copy: Note, sheet: GraphContext, editor: GraphContext, container: GraphContainer, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        sheet.insert(copy)
        try sheet.save()
        ReadConflictTests.expectConflict(editor, .updatedElsewhere, sourceLocation: sourceLocation)
        #expect(ReadConflictTests.stored(container)?.text == "from import", sourceLocation: sourceLocation)
    }

    /// The parent saves (or drops) the change its child read through; another context then
    /// saves the same object: the child's later change is a conflict, not a silent overwrite.
    /// (The child's base fell through to the newest stored object, the other context's, and a
    /// dropped change's copy held a value the store never had.)
    @Test(arguments: StoreKind.allCases, [true, false])
    func aCopyReadThroughAParentsChangeConflictsWithALaterSave(store: StoreKind, parentSaves: Bool) async throws {
        try await withContainer(store) { container in
            let (importer, editor) = try ReadConflictTests.setUp(container)
            var (sheet, copy) = try Self.draftReadInAChild(of: editor)
            if parentSaves { try editor.save() } else { editor.rollback() }
            try Self.importerSaves(copy, in: importer)

            copy.isArchived = true
            try Self.expectChildsSaveConflicts(copy, sheet: sheet, editor: editor, container: container)
        }
    }

    /// Without the other save, the same copies save cleanly: the parent's save is what the
    /// child last read, not a conflict with itself.
    @Test(arguments: StoreKind.allCases)
    func aChildsCopySavesCleanlyAfterItsParentSaved(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let (_, editor) = try ReadConflictTests.setUp(container)
            var (sheet, copy) = try Self.draftReadInAChild(of: editor)
            try editor.save()
            copy.isArchived = true
            sheet.insert(copy)
            try sheet.save()
            try editor.save()
            #expect(ReadConflictTests.stored(container) == copy)
        }
    }

    /// A child edits and saves the same copy again and again, its parent saving each time: no
    /// save conflicts with the one before it, under every policy, and each edit is stored.
    /// (The child stayed based on its first read, so its second save conflicted with its own
    /// first one: `.error` threw and `.storeWins` dropped the edit without a word.)
    @Test(arguments: StoreKind.allCases, MergePolicy.allCases)
    func aChildsRepeatedSavesDoNotConflictWithEachOther(store: StoreKind, policy: MergePolicy) async throws {
        try await withContainer(store) { container in
            let (_, editor) = try ReadConflictTests.setUp(container, policy: policy)
            let sheet = editor.newChildContext()
            var copy = try #require(sheet.model(Note.self, id: ReadConflictTests.note.id))
            for round in 1...3 {
                copy.text = "round \(round)"
                sheet.insert(copy)
                try sheet.save()
                try editor.save()
                #expect(ReadConflictTests.stored(container)?.text == "round \(round)")
            }
        }
    }

    /// Pushed but not yet saved by the parent, a child's change is still what the child's next
    /// change is based on: another context's save in between is a conflict.
    @Test(arguments: StoreKind.allCases)
    func aChildsPushedChangeStillConflictsWithALaterSave(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let (importer, editor) = try ReadConflictTests.setUp(container)
            let sheet = editor.newChildContext()
            var copy = try #require(sheet.model(Note.self, id: ReadConflictTests.note.id))
            copy.text = "first"
            sheet.insert(copy)
            try sheet.save()
            try editor.save()
            try Self.importerSaves(copy, in: importer)
            copy.text = "second"
            try Self.expectChildsSaveConflicts(copy, sheet: sheet, editor: editor, container: container)
        }
    }

    /// A child of the editor reads the note and saves it as "first", the editor saves, and
    /// another context deletes the note. Returns the editor and the child's copy.
    static func childSavedThenDeletedElsewhere(
        _ container: GraphContainer, policy: MergePolicy
    ) throws -> (editor: GraphContext, copy: Note) {
        let (importer, editor) = try ReadConflictTests.setUp(container, policy: policy)
        let first = editor.newChildContext()
        var copy = try #require(first.model(Note.self, id: ReadConflictTests.note.id))
        copy.text = "first"
        first.insert(copy)
        try first.save()
        try editor.save()
        importer.delete(Note.self, id: copy.id)
        try importer.save()
        return (editor, copy)
    }

    /// A child made after its parent saved never read through the saved change: its change of
    /// the id is based as its parent's own would be, not on the earlier child's read. The
    /// parent read the object again after another context deleted it: re-creating it is not a
    /// conflict.
    @Test(arguments: StoreKind.allCases, [MergePolicy.error, .storeWins])
    func aNewChildIsNotBasedOnAnEarlierChildsRead(store: StoreKind, policy: MergePolicy) async throws {
        try await withContainer(store) { container in
            var (editor, copy) = try Self.childSavedThenDeletedElsewhere(container, policy: policy)
            #expect(editor.model(Note.self, id: copy.id) == nil)

            let second = editor.newChildContext()
            copy.text = "again"
            second.insert(copy)
            try second.save()
            try editor.save()
            #expect(ReadConflictTests.stored(container)?.text == "again")
        }
    }

    /// Without that read, the parent's save is what it last read of the object: a new child
    /// re-creating it from the copy is a conflict with the deletion, as the parent's own change
    /// would be, not a silent resurrection.
    @Test(arguments: StoreKind.allCases, [MergePolicy.error, .storeWins])
    func aNewChildRecreatingWhatItsParentSavedConflictsWithADeletionElsewhere(store: StoreKind, policy: MergePolicy) async throws {
        try await withContainer(store) { container in
            var (editor, copy) = try Self.childSavedThenDeletedElsewhere(container, policy: policy)
            let second = editor.newChildContext()
            copy.text = "again"
            second.insert(copy)
            try second.save()
            if policy == .error {
                ReadConflictTests.expectConflict(editor, .deletedElsewhere)
            } else {
                try editor.save()
            }
            #expect(ReadConflictTests.stored(container) == nil)
        }
    }

    /// The parent reading the object again after its save (and another context's) does not
    /// rebase the child's older copy: the child's change is still a conflict.
    @Test(arguments: StoreKind.allCases)
    func aParentsLaterReadDoesNotRebaseItsChildsCopy(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let (importer, editor) = try ReadConflictTests.setUp(container)
            var (sheet, copy) = try Self.draftReadInAChild(of: editor)
            try editor.save()
            try Self.importerSaves(copy, in: importer)
            #expect(editor.model(Note.self, id: copy.id)?.text == "from import")

            copy.isArchived = true
            try Self.expectChildsSaveConflicts(copy, sheet: sheet, editor: editor, container: container)
        }
    }

    /// A parent's rollback drops the `onCommit` action its child's save handed it, and with it
    /// the last reference to that child: freeing the child must not wait for the parent's
    /// lock, which the rollback holds. (It deadlocked.)
    @Test func aRollbackFreeingAChildThroughAnActionReturns() async throws {
        try await withContainer(.inMemory) { container in
            let parent = container.newBackgroundContext()
            do {
                let child = parent.newChildContext()
                child.insert(Note(text: "draft", createdAt: Fixtures.epoch))
                child.onCommit { [child] in _ = child.hasChanges }
                try child.save()
            }
            parent.rollback()
            #expect(!parent.hasChanges)
            // With no child left, the parent's saves go on as any context's.
            parent.insert(Note(text: "kept", createdAt: Fixtures.epoch))
            try parent.save()
            #expect(container.count(of: Note.self) == 1)
        }
    }
}
