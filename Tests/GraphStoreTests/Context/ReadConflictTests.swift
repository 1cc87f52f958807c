import ExampleModel
import Foundation
@testable import GraphStore
import GraphStoreTestSupport
import Testing

/// A change is based on the version of the object the context last read: a copy read, held
/// while another context saves, then changed and saved is a conflict (the lost update).
@Suite struct ReadConflictTests {
    static let note = Note(id: UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!, text: "v0", createdAt: Fixtures.epoch)

    /// Seeds the note and returns two background contexts of `policy`: the import and the editor.
    static func setUp(_ container: GraphContainer, policy: MergePolicy = .error) throws -> (GraphContext, GraphContext) {
        container.mainContext.insert(note)
        try container.mainContext.save()
        let importer = container.newBackgroundContext(), editor = container.newBackgroundContext()
        importer.mergePolicy = policy
        editor.mergePolicy = policy
        return (importer, editor)
    }

    static func stored(_ container: GraphContainer) -> Note? {
        container.newBackgroundContext().model(Note.self, id: note.id)
    }

    static func expectConflict(
        _ context: GraphContext, _ kind: MergeConflict.Kind, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(sourceLocation: sourceLocation) {
            try context.save()
        } throws: { error in
            guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
            return conflicts.map(\.id) == [note.id.uuidString] && conflicts[0].kind == kind
        }
    }

    // MARK: - The lost update

    /// The scenario of the issue: both contexts read v0; the editor's save must not silently
    /// overwrite the import's.
    @Test(arguments: StoreKind.allCases)
    func aCopyReadBeforeAnotherSaveConflicts(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let (importer, editor) = try Self.setUp(container)
            var fromImport = try #require(importer.model(Note.self, id: Self.note.id))
            var fromEditor = try #require(editor.model(Note.self, id: Self.note.id))
            fromImport.text = "from import"
            importer.insert(fromImport)
            try importer.save()
            fromEditor.text = "from editor"
            editor.insert(fromEditor)
            Self.expectConflict(editor, .updatedElsewhere)
            #expect(Self.stored(container)?.text == "from import")
            try container.checkInvariants()
        }
    }

    @Test(arguments: StoreKind.allCases, [false, true])
    func aCopyReadThroughFetchConflicts(store: StoreKind, withPredicate: Bool) async throws {
        try await withContainer(store) { container in
            let (importer, editor) = try Self.setUp(container)
            // A fetch of every object keeps the table it read; one with a predicate, each id.
            let descriptor = withPredicate
                ? FetchDescriptor<Note>(predicate: #Predicate { $0.text == "v0" }) : FetchDescriptor<Note>()
            var copy = try #require(try editor.fetch(descriptor).first)
            var changed = Self.note
            changed.text = "from import"
            importer.insert(changed)
            try importer.save()
            copy.isArchived = true
            editor.insert(copy)
            Self.expectConflict(editor, .updatedElsewhere)
            #expect(Self.stored(container)?.text == "from import")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func readingAgainAfterTheOtherSaveRefreshesTheBase(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let (importer, editor) = try Self.setUp(container)
            _ = editor.model(Note.self, id: Self.note.id)
            var changed = Self.note
            changed.text = "from import"
            importer.insert(changed)
            try importer.save()
            var fresh = try #require(editor.model(Note.self, id: Self.note.id))
            fresh.isArchived = true
            editor.insert(fresh)
            try editor.save()
            #expect(Self.stored(container)?.text == "from import")
            #expect(Self.stored(container)?.isArchived == true)
        }
    }

    @Test(arguments: StoreKind.allCases, MergePolicy.allCases)
    func deletingAStaleCopy(store: StoreKind, policy: MergePolicy) async throws {
        try await withContainer(store) { container in
            let (importer, editor) = try Self.setUp(container, policy: policy)
            let copy = try #require(editor.model(Note.self, id: Self.note.id))
            var changed = Self.note
            changed.text = "from import"
            importer.insert(changed)
            try importer.save()
            editor.delete(copy)
            switch policy {
            case .error:
                Self.expectConflict(editor, .updatedElsewhere)
                #expect(Self.stored(container)?.text == "from import")
            case .storeWins:
                try editor.save()
                #expect(Self.stored(container)?.text == "from import")
            case .contextWins, .mergeByProperty:
                // A deletion wins against an update under `.mergeByProperty`.
                try editor.save()
                #expect(Self.stored(container) == nil)
            }
            try container.checkInvariants()
        }
    }

    /// Each policy resolves the scenario: the two saves changed different properties.
    @Test(arguments: StoreKind.allCases, MergePolicy.allCases)
    func eachPolicyResolvesTheLostUpdate(store: StoreKind, policy: MergePolicy) async throws {
        try await withContainer(store) { container in
            let (importer, editor) = try Self.setUp(container, policy: policy)
            var fromImport = try #require(importer.model(Note.self, id: Self.note.id))
            var fromEditor = try #require(editor.model(Note.self, id: Self.note.id))
            fromImport.text = "from import"
            importer.insert(fromImport)
            try importer.save()
            fromEditor.isArchived = true
            editor.insert(fromEditor)
            let stored: Note?
            switch policy {
            case .error:
                Self.expectConflict(editor, .updatedElsewhere)
                stored = Self.stored(container)
                #expect(stored?.text == "from import" && stored?.isArchived == false)
            case .storeWins:
                try editor.save()
                stored = Self.stored(container)
                #expect(stored?.text == "from import" && stored?.isArchived == false)
            case .contextWins:
                try editor.save()
                stored = Self.stored(container)
                #expect(stored?.text == "v0" && stored?.isArchived == true)
            case .mergeByProperty:
                try editor.save()
                stored = Self.stored(container)
                #expect(stored?.text == "from import" && stored?.isArchived == true)
            }
            try container.checkInvariants()
        }
    }

    // MARK: - Child contexts

    /// A child's change of a value its parent read is based on the parent's read.
    @Test(arguments: StoreKind.allCases)
    func aChildChangingWhatItsParentReadConflicts(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let (importer, editor) = try Self.setUp(container)
            var shown = try #require(try editor.fetch(FetchDescriptor<Note>()).first)
            var changed = Self.note
            changed.text = "from import"
            importer.insert(changed)
            try importer.save()
            let sheet = editor.newChildContext()
            shown.isArchived = true
            sheet.insert(shown)
            try sheet.save()
            Self.expectConflict(editor, .updatedElsewhere)
            #expect(Self.stored(container)?.text == "from import")
        }
    }

    /// A child's own read travels with its change into the parent, whose save then conflicts
    /// with a save made after the child read.
    @Test(arguments: StoreKind.allCases)
    func aChildsReadTravelsWithItsChangeIntoTheParent(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let (importer, editor) = try Self.setUp(container)
            let sheet = editor.newChildContext()
            var copy = try #require(sheet.model(Note.self, id: Self.note.id))
            var changed = Self.note
            changed.text = "from import"
            importer.insert(changed)
            try importer.save()
            copy.isArchived = true
            sheet.insert(copy)
            try sheet.save()
            Self.expectConflict(editor, .updatedElsewhere)

            // Read again in a new child: based on the newest version, no conflict.
            editor.rollback()
            let second = editor.newChildContext()
            var fresh = try #require(second.model(Note.self, id: Self.note.id))
            fresh.isArchived = true
            second.insert(fresh)
            try second.save()
            try editor.save()
            #expect(Self.stored(container)?.text == "from import")
            #expect(Self.stored(container)?.isArchived == true)
        }
    }

    /// A child reading through its parent's pending change is based as that change is.
    @Test(arguments: StoreKind.allCases)
    func aChildReadingItsParentsChangeIsBasedAsThatChange(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let (importer, editor) = try Self.setUp(container)
            var pending = Self.note
            pending.text = "editor draft"
            editor.insert(pending)
            let sheet = editor.newChildContext()
            var copy = try #require(try sheet.fetch(FetchDescriptor<Note>()).first)
            #expect(copy.text == "editor draft")
            var changed = Self.note
            changed.text = "from import"
            importer.insert(changed)
            try importer.save()
            copy.isArchived = true
            sheet.insert(copy)
            try sheet.save()
            Self.expectConflict(editor, .updatedElsewhere)
        }
    }

    // MARK: - What reading does not change

    /// A context that read an object and saved it is based on what it wrote: its next save
    /// does not conflict with its own.
    @Test(arguments: StoreKind.allCases)
    func aContextsOwnSaveRefreshesWhatItRead(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let (_, editor) = try Self.setUp(container)
            var copy = try #require(try editor.fetch(FetchDescriptor<Note>()).first)
            for round in 1...3 {
                copy.text = "round \(round)"
                editor.insert(copy)
                try editor.save()
            }
            editor.delete(copy)
            try editor.save()
            // Re-created from the copy the context still holds: it knows the object is gone.
            editor.insert(copy)
            try editor.save()
            #expect(Self.stored(container)?.text == "round 3")
        }
    }

    /// An id the context never read is based on the object stored when it first changes it,
    /// even after the context read other objects of the entity.
    @Test(arguments: StoreKind.allCases)
    func anIDNeverReadIsBasedOnTheStoredObjectWhenFirstChanged(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let (importer, editor) = try Self.setUp(container)
            let other = Note(text: "other", createdAt: Fixtures.epoch)
            container.mainContext.insert(other)
            try container.mainContext.save()
            _ = try editor.fetch(FetchDescriptor<Note>(predicate: #Predicate { $0.text == "other" }))
            var changed = Self.note
            changed.text = "from import"
            importer.insert(changed)
            try importer.save()
            // Built without reading it (say, from a server response).
            editor.insert(Note(id: Self.note.id, text: "from server", createdAt: Fixtures.epoch))
            try editor.save()
            #expect(Self.stored(container)?.text == "from server")
        }
    }

    // MARK: - Memory

    /// A long-lived context reading ever new ids keeps the records of the objects it read,
    /// deleted since or not (a copy of each may still be saved, and must conflict), and a
    /// bounded number of the others: those of ids looked up absent are dropped once the records
    /// outgrow the entity and twice what the last pruning kept.
    @Test func readRecordsStayBoundedByTheObjectsRead() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let reader = container.mainContext, writer = container.newBackgroundContext()
        let entity = container.core.schema.index(of: Post.self)
        let rounds = 40, perRound = 500
        var most = 0
        for round in 0..<rounds {
            let posts = Fixtures.posts(perRound, startingAt: Int64(round * perRound + 1))
            writer.insert(contentsOf: posts)
            try writer.save()
            for post in posts { _ = reader.model(Post.self, id: post.id) }
            _ = try reader.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.noteCount >= 0 }, fetchLimit: 50))
            // A find-or-create import looks up ids that name no post.
            for offset in 0..<Int64(4 * perRound) { _ = reader.model(Post.self, id: -Int64(round * 4 * perRound) - offset - 1) }
            try writer.delete(model: Post.self)
            try writer.save()
            most = max(most, reader.withState { $0.reads[entity].count })
        }
        #expect(most <= 2 * rounds * perRound)
        #expect(reader.withState { $0.reads[entity].count } >= rounds * perRound)
        // A fetch of every object replaces the records with the table it read.
        _ = try reader.fetch(FetchDescriptor<Post>())
        #expect(reader.withState { $0.reads[entity].count } == 0)
    }
}
