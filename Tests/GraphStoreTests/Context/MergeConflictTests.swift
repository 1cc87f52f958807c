import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// Two contexts change the same posts; the second save meets every kind of conflict at once.
@Suite struct MergeConflictTests {
    /// Posts 1...6, committed as version 1.
    static let seed = Fixtures.posts(6)
    /// A post id nobody has stored yet; both contexts insert it.
    static let contestedNewID: Int64 = 100
    /// A post only the first context inserts.
    static let uncontestedNewID: Int64 = 200

    /// What the other context ("theirs") does and saves first.
    static func theirChanges(_ context: GraphContext) {
        context.insert(edited(seed[0], by: "theirs"))                             // 1: updated
        context.delete(seed[1])                                                   // 2: deleted
        context.insert(post(contestedNewID, summary: "theirs"))                   // 100: inserted
        context.insert(edited(seed[2], by: "theirs"))                             // 3: updated
        context.delete(seed[4])                                                   // 5: deleted
    }

    /// What the context under test ("mine") does, based on version 1.
    static func myChanges(_ context: GraphContext) {
        context.insert(edited(seed[0], by: "mine"))                               // 1: conflicts (updatedElsewhere)
        context.insert(edited(seed[1], by: "mine"))                               // 2: conflicts (deletedElsewhere)
        context.insert(post(contestedNewID, summary: "mine"))                     // 100: conflicts (insertedElsewhere)
        context.delete(seed[2])                                                   // 3: conflicts (updatedElsewhere)
        context.insert(edited(seed[3], by: "mine"))                               // 4: no conflict
        context.delete(seed[4])                                                   // 5: deleted by both: no conflict
        context.insert(post(uncontestedNewID, summary: "mine"))                   // 200: no conflict
    }

    static func edited(_ post: Post, by who: String) -> Post {
        var copy = post
        copy.summary = "\(who) edit of \(post.id)"
        copy.noteCount += 1
        return copy
    }

    static func post(_ id: Int64, summary: String) -> Post {
        Post(id: id, blogName: "contested", date: Fixtures.epoch, summary: summary)
    }

    /// Seeds `container` and returns a context of `policy` holding `myChanges`, after `theirChanges` were saved.
    static func conflictingSetup(_ policy: MergePolicy, in container: GraphContainer) throws -> GraphContext {
        for post in seed { container.mainContext.insert(post) }
        try container.mainContext.save()
        let mine = container.newBackgroundContext()
        mine.mergePolicy = policy
        myChanges(mine)
        let theirs = container.newBackgroundContext()
        theirChanges(theirs)
        try theirs.save()
        try container.checkInvariants()
        #expect(container.version == 2)
        return mine
    }

    static func stored(_ container: GraphContainer, _ id: Int64) -> Post? {
        container.newBackgroundContext().model(Post.self, id: id)
    }

    // MARK: - .error

    @Test(arguments: StoreKind.allCases)
    func errorListsEveryConflictAndCommitsNothing(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let mine = try Self.conflictingSetup(.error, in: container)
            let error = #expect(throws: GraphStoreError.self) { try mine.save() }
            guard case .mergeConflict(let conflicts) = error else {
                Issue.record("expected mergeConflict, got \(String(describing: error))")
                return
            }
            try container.checkInvariants()
            #expect(conflicts.count == 4)
            let kinds = Dictionary(uniqueKeysWithValues: conflicts.map { ($0.id, $0.kind) })
            #expect(kinds == ["1": .updatedElsewhere, "2": .deletedElsewhere, "100": .insertedElsewhere, "3": .updatedElsewhere])
            #expect(conflicts.allSatisfy { $0.entity == "Post" })
            let first = try #require(conflicts.first { $0.id == "1" })
            #expect(first.baseVersion == 1 && first.storedVersion == 2)
            let deleted = try #require(conflicts.first { $0.id == "2" })
            #expect(deleted.baseVersion == 1 && deleted.storedVersion == nil)
            let inserted = try #require(conflicts.first { $0.id == "100" })
            #expect(inserted.baseVersion == nil && inserted.storedVersion == 2)
            #expect(error?.description.contains("4 object(s)") == true)

            // Nothing of the save was committed, not even its non-conflicting changes.
            #expect(container.version == 2)
            #expect(Self.stored(container, 4) == Self.seed[3])
            #expect(Self.stored(container, Self.uncontestedNewID) == nil)
            #expect(Self.stored(container, 1)?.summary == "theirs edit of 1")
            #expect(Self.stored(container, 3)?.summary == "theirs edit of 3")
            #expect(Self.stored(container, Self.contestedNewID)?.summary == "theirs")
            // The context keeps its changes until it rolls back, and retrying still conflicts.
            #expect(mine.hasChanges)
            #expect(throws: GraphStoreError.self) { try mine.save() }
            mine.rollback()
            #expect(!mine.hasChanges)
            #expect(mine.model(Post.self, id: 1)?.summary == "theirs edit of 1")
        }
    }

    // MARK: - .storeWins

    @Test(arguments: StoreKind.allCases)
    func storeWinsDropsOnlyTheConflictingChanges(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let mine = try Self.conflictingSetup(.storeWins, in: container)
            try mine.save()
            try container.checkInvariants()
            #expect(container.version == 3)
            #expect(!mine.hasChanges)
            // Conflicting: the store's state stands.
            #expect(Self.stored(container, 1) == Self.edited(Self.seed[0], by: "theirs"))
            #expect(Self.stored(container, 2) == nil)
            #expect(Self.stored(container, Self.contestedNewID)?.summary == "theirs")
            #expect(Self.stored(container, 3) == Self.edited(Self.seed[2], by: "theirs"))
            // Not conflicting: committed.
            #expect(Self.stored(container, 4) == Self.edited(Self.seed[3], by: "mine"))
            #expect(Self.stored(container, Self.uncontestedNewID)?.summary == "mine")
            #expect(Self.stored(container, 5) == nil)
            #expect(Self.stored(container, 6) == Self.seed[5])
            #expect(container.count(of: Post.self) == 6)
        }
    }

    // MARK: - .contextWins

    @Test(arguments: StoreKind.allCases)
    func contextWinsOverwrites(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let mine = try Self.conflictingSetup(.contextWins, in: container)
            try mine.save()
            try container.checkInvariants()
            #expect(container.version == 3)
            #expect(Self.stored(container, 1) == Self.edited(Self.seed[0], by: "mine"))
            #expect(Self.stored(container, 2) == Self.edited(Self.seed[1], by: "mine"))
            #expect(Self.stored(container, Self.contestedNewID)?.summary == "mine")
            #expect(Self.stored(container, 3) == nil)
            #expect(Self.stored(container, 4) == Self.edited(Self.seed[3], by: "mine"))
            #expect(Self.stored(container, Self.uncontestedNewID)?.summary == "mine")
            #expect(Self.stored(container, 5) == nil)
            #expect(container.count(of: Post.self) == 6)
        }
    }

    // MARK: - Not conflicts

    @Test(arguments: StoreKind.allCases)
    func deletingAnAlreadyDeletedObjectIsNotAConflict(store: StoreKind) async throws {
        try await withContainer(store) { container in
            for post in Self.seed { container.mainContext.insert(post) }
            try container.mainContext.save()
            let first = container.newBackgroundContext(), second = container.newBackgroundContext()
            first.delete(Self.seed[0])
            second.delete(Self.seed[0])
            second.insert(Self.edited(Self.seed[1], by: "second"))
            try first.save()
            try container.checkInvariants()
            #expect(second.mergePolicy == .error)
            try second.save()
            try container.checkInvariants()
            #expect(container.version == 3)
            #expect(Self.stored(container, 1) == nil)
            #expect(Self.stored(container, 2)?.summary == "second edit of 2")

            // A save whose only change is such a delete commits nothing new.
            let third = container.newBackgroundContext()
            third.delete(Post.self, id: 1)
            try third.save()
            try container.checkInvariants()
            #expect(container.version == 3)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aContextsOwnEarlierSaveIsNotAConflict(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let context = container.newBackgroundContext()
            context.insert(Self.seed[0])
            try context.save()
            var post = Self.seed[0]
            for round in 1...3 {
                post.noteCount = round
                context.insert(post)
                try context.save()
                try container.checkInvariants()
            }
            #expect(Self.stored(container, 1)?.noteCount == 3)
            #expect(container.version == 4)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aChangeIsBasedOnTheStoredObjectWhenTheContextFirstChangesIt(store: StoreKind) async throws {
        try await withContainer(store) { container in
            container.mainContext.insert(Self.seed[0])
            try container.mainContext.save()
            let mine = container.newBackgroundContext(), theirs = container.newBackgroundContext()
            mine.insert(Self.edited(Self.seed[0], by: "mine"))
            theirs.insert(Self.edited(Self.seed[0], by: "theirs"))
            try theirs.save()
            // Changing the same id again keeps the first base: still a conflict.
            mine.insert(Self.edited(Self.seed[0], by: "mine again"))
            let error = #expect(throws: GraphStoreError.self) { try mine.save() }
            guard case .mergeConflict(let conflicts) = error else {
                Issue.record("expected mergeConflict, got \(String(describing: error))")
                return
            }
            #expect(conflicts.map(\.kind) == [.updatedElsewhere])
            #expect(conflicts.map(\.baseVersion) == [1])
            try container.checkInvariants()
        }
    }
}
