import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

@Suite struct ChildContextTests {
    static let tag = Tag(name: "drafts")
    static let stored = Note(text: "stored", createdAt: Fixtures.epoch, tagIDs: [tag.id])
    static let draft = Note(text: "draft", createdAt: Fixtures.epoch.addingTimeInterval(60), tagIDs: [tag.id])

    static func seed(_ container: GraphContainer) throws {
        container.mainContext.insert(tag)
        container.mainContext.insert(stored)
        try container.mainContext.save()
        try container.checkInvariants()
    }

    /// Whether a new top-level context, which sees only the store, sees `note`.
    static func storeHas(_ container: GraphContainer, _ note: Note) -> Bool {
        container.newBackgroundContext().model(Note.self, id: note.id) == note
    }

    @Test(arguments: StoreKind.allCases)
    func discardedChildChangesNeverReachParentOrStore(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            do {
                let child = main.newChildContext()
                #expect(child.parent === main)
                child.insert(Self.draft)
                child.delete(Self.stored)
                #expect(child.hasChanges)
                #expect(child.model(Note.self, id: Self.draft.id) == Self.draft)
                #expect(try child.fetchCount(FetchDescriptor<Note>()) == 1)
            }
            #expect(!main.hasChanges)
            #expect(main.model(Note.self, id: Self.draft.id) == nil)
            #expect(try main.fetchCount(FetchDescriptor<Note>()) == 1)
            try main.save()
            try container.checkInvariants()
            #expect(container.version == 1)
            #expect(!Self.storeHas(container, Self.draft))
            #expect(Self.storeHas(container, Self.stored))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func childRollbackDropsItsChanges(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let child = container.mainContext.newChildContext()
            child.insert(Self.draft)
            child.rollback()
            #expect(!child.hasChanges)
            try child.save()
            #expect(!container.mainContext.hasChanges)
            #expect(container.mainContext.model(Note.self, id: Self.draft.id) == nil)
            try container.checkInvariants()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func savingAChildPushesIntoTheParentOnly(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let child = main.newChildContext()
            child.insert(Self.draft)
            try child.save()
            try container.checkInvariants()
            #expect(!child.hasChanges)
            #expect(main.hasChanges)
            #expect(main.model(Note.self, id: Self.draft.id) == Self.draft)
            #expect(try main.fetchCount(FetchDescriptor<Note>()) == 2)
            #expect(container.version == 1)
            #expect(container.count(of: Note.self) == 1)
            #expect(!Self.storeHas(container, Self.draft))

            try main.save()
            try container.checkInvariants()
            #expect(container.version == 2)
            #expect(Self.storeHas(container, Self.draft))
            #expect(child.model(Note.self, id: Self.draft.id) == Self.draft)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func parentRollbackAfterAChildSaveDropsTheChildsChanges(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let child = main.newChildContext()
            child.insert(Self.draft)
            child.delete(Self.stored)
            try child.save()
            #expect(main.model(Note.self, id: Self.stored.id) == nil)
            main.rollback()
            #expect(!main.hasChanges)
            #expect(main.model(Note.self, id: Self.draft.id) == nil)
            #expect(main.model(Note.self, id: Self.stored.id) == Self.stored)
            #expect(child.model(Note.self, id: Self.draft.id) == nil)
            try main.save()
            try container.checkInvariants()
            #expect(container.version == 1)
            #expect(!Self.storeHas(container, Self.draft))
            #expect(Self.storeHas(container, Self.stored))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func grandchildrenSaveLevelByLevel(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let child = main.newChildContext()
            let grandchild = child.newChildContext()
            #expect(grandchild.parent === child)
            grandchild.insert(Self.draft)
            #expect(child.model(Note.self, id: Self.draft.id) == nil)

            try grandchild.save()
            #expect(child.model(Note.self, id: Self.draft.id) == Self.draft)
            #expect(main.model(Note.self, id: Self.draft.id) == nil)

            try child.save()
            #expect(main.model(Note.self, id: Self.draft.id) == Self.draft)
            #expect(!Self.storeHas(container, Self.draft))

            try main.save()
            try container.checkInvariants()
            #expect(Self.storeHas(container, Self.draft))
            #expect(!main.hasChanges && !child.hasChanges && !grandchild.hasChanges)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func childrenSeeTheirAncestorsPendingChanges(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            var edited = Self.stored
            edited.text = "edited in main"
            main.insert(edited)
            main.insert(Self.draft)
            let child = main.newChildContext()
            let grandchild = child.newChildContext()
            #expect(grandchild.model(Note.self, id: Self.stored.id) == edited)
            #expect(Set(try grandchild.fetch(FetchDescriptor<Note>()).map(\.text)) == ["edited in main", "draft"])

            // A child's own change overlays its ancestors'.
            child.delete(Self.draft)
            #expect(grandchild.model(Note.self, id: Self.draft.id) == nil)
            #expect(try grandchild.fetch(FetchDescriptor<Note>(predicate: #Predicate { $0.text.contains("draft") })).isEmpty)
            #expect(main.model(Note.self, id: Self.draft.id) == Self.draft)

            try child.save()
            try main.save()
            try container.checkInvariants()
            #expect(container.count(of: Note.self) == 1)
            #expect(container.newBackgroundContext().model(Note.self, id: Self.stored.id) == edited)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func onCommitInAChildRunsOnlyWhenTheTopLevelParentSaves(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let child = main.newChildContext()
            let grandchild = child.newChildContext()
            let runs = Guarded<[Bool]>([])
            grandchild.insert(Self.draft)
            grandchild.onCommit {
                let visible = container.newBackgroundContext().model(Note.self, id: Self.draft.id) != nil
                runs.withLock { $0.append(visible) }
            }
            try grandchild.save()
            #expect(runs.value.isEmpty)
            try child.save()
            #expect(runs.value.isEmpty)
            try main.save()
            try container.checkInvariants()
            #expect(runs.value == [true])
            main.insert(Tag(name: "later"))
            try main.save()
            try container.checkInvariants()
            #expect(runs.value == [true])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func onCommitOfADiscardedChildNeverRuns(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let runs = Guarded(0)
            let child = main.newChildContext()
            child.insert(Self.draft)
            child.onCommit { runs.withLock { $0 += 1 } }
            try child.save()
            main.rollback()
            main.insert(Tag(name: "other"))
            try main.save()
            try container.checkInvariants()
            #expect(runs.value == 0)
            #expect(!Self.storeHas(container, Self.draft))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aChildsChangeKeepsItsStoreBaseForConflictDetection(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let child = main.newChildContext()
            var mine = Self.stored
            mine.text = "mine"
            child.insert(mine)

            let other = container.newBackgroundContext()
            var theirs = Self.stored
            theirs.text = "theirs"
            other.insert(theirs)
            try other.save()

            try child.save()
            let error = #expect(throws: GraphStoreError.self) { try main.save() }
            guard case .mergeConflict(let conflicts) = error else {
                Issue.record("expected mergeConflict, got \(String(describing: error))")
                return
            }
            #expect(conflicts.map(\.kind) == [.updatedElsewhere])
            #expect(conflicts.map(\.id) == [Self.stored.id.uuidString])
            try container.checkInvariants()
            #expect(container.newBackgroundContext().model(Note.self, id: Self.stored.id)?.text == "theirs")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aChildInheritsItsParentsMergePolicy(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let context = container.newBackgroundContext()
            context.mergePolicy = .storeWins
            #expect(context.newChildContext().mergePolicy == .storeWins)
            #expect(container.mainContext.newChildContext().mergePolicy == .error)
        }
    }
}
