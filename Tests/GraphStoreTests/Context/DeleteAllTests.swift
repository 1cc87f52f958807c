import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// `delete(model:)` without a predicate on a top-level context records "every object the
/// context sees" instead of each id, and a save drops the table whole when nothing changed it
/// in between. Every outcome must be the one deleting the ids one by one gives.
@Suite struct DeleteAllTests {
    typealias Tag = ExampleModel.Tag

    /// Every change `stream` delivers until it ends.
    static func collect(_ stream: AsyncStream<GraphChange>) async -> [GraphChange] {
        var received: [GraphChange] = []
        for await change in stream { received.append(change) }
        return received
    }

    @Test(arguments: StoreKind.allCases)
    func deletesEveryObjectAndReportsEachID(store: StoreKind) async throws {
        let tags = Fixtures.tagNames.map { Tag(name: $0) }
        let posts = Fixtures.posts(300, tags: [tags[0].id, tags[1].id])
        try await withContainer(store) { container in
            let stream = container.changes
            let main = container.mainContext
            main.insert(contentsOf: tags)
            main.insert(contentsOf: posts)
            try main.save()

            #expect(try main.delete(model: Post.self) == 300)
            #expect(main.hasChanges)
            try main.save()
            #expect(!main.hasChanges)
            #expect(container.count(of: Post.self) == 0)
            #expect(container.count(of: Tag.self) == 5)
            // The posts' references are gone from the inverse index too.
            #expect(main.fetchCount(Post.self, referencing: tags[0].id, of: Tag.self) == 0)
            try container.checkInvariants()

            // Tags are referenced by nothing now: they go the same way.
            #expect(try main.delete(model: Tag.self) == 5)
            try main.save()
            #expect(container.count(of: Tag.self) == 0)
            try container.checkInvariants()

            // Nothing to delete: nothing is committed.
            #expect(try main.delete(model: Post.self) == 0)
            try main.save()

            try await container.close()
            let received = await Self.collect(stream)
            #expect(received.map(\.version) == [1, 2, 3])
            #expect(Set(received[1].deletedIDs(Post.self)) == Set(posts.map(\.id)))
            #expect(received[1].deletedCount == 300 && received[1].insertedCount == 0 && received[1].updatedCount == 0)
            #expect(Set(received[2].deletedIDs(Tag.self)) == Set(tags.map(\.id)))
        }
    }

    @Test(arguments: MergePolicy.allCases)
    func anObjectChangedElsewhereAfterMarkingConflicts(policy: MergePolicy) async throws {
        try await withContainer(.inMemory) { container in
            let posts = Fixtures.posts(50)
            container.mainContext.insert(contentsOf: posts)
            try container.mainContext.save()

            let deleter = container.newBackgroundContext()
            deleter.mergePolicy = policy
            #expect(try deleter.delete(model: Post.self) == 50)

            let other = container.newBackgroundContext()
            var changed = posts[6]
            changed.summary = "changed elsewhere"
            other.insert(changed)
            other.insert(Fixtures.posts(1, startingAt: 500)[0])  // inserted after the marking
            try other.save()

            switch policy {
            case .error:
                #expect {
                    try deleter.save()
                } throws: { error in
                    guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
                    return conflicts.map(\.id) == ["7"] && conflicts[0].kind == .updatedElsewhere
                }
                #expect(container.count(of: Post.self) == 51)
                #expect(deleter.hasChanges)
            case .contextWins, .mergeByProperty:
                // Under `.mergeByProperty` a deletion wins against an update made elsewhere.
                try deleter.save()
                #expect(try container.mainContext.fetchIdentifiers(FetchDescriptor<Post>()) == [500])
            case .storeWins:
                try deleter.save()
                #expect(try container.mainContext.fetchIdentifiers(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.id)])) == [7, 500])
            }
            try container.checkInvariants()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theContextSeesTheDeletionBeforeItSaves(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let main = container.mainContext
            let posts = Fixtures.posts(40)
            main.insert(contentsOf: posts)
            try main.save()

            #expect(try main.delete(model: Post.self) == 40)
            #expect(try main.fetchCount(FetchDescriptor<Post>()) == 0)
            #expect(main.model(Post.self, id: 3) == nil)
            let child = main.newChildContext()
            #expect(try child.fetchCount(FetchDescriptor<Post>()) == 0)
            #expect(try child.delete(model: Post.self) == 0)
            // Other contexts still see the objects until the save.
            #expect(try container.newBackgroundContext().fetchCount(FetchDescriptor<Post>()) == 40)

            main.rollback()
            #expect(!main.hasChanges)
            #expect(try main.fetchCount(FetchDescriptor<Post>()) == 40)
            #expect(main.model(Post.self, id: 3) == posts[2])
            try main.save()
            #expect(container.count(of: Post.self) == 40)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func changesMadeAfterTheMarkingOverrideIt(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let main = container.mainContext
            let posts = Fixtures.posts(20)
            main.insert(contentsOf: posts)
            try main.save()

            // Pending changes made before the marking are folded into it...
            var edited = posts[0]
            edited.summary = "edited before"
            main.insert(edited)
            main.insert(Fixtures.posts(1, startingAt: 100)[0])
            main.delete(posts[1])
            #expect(try main.delete(model: Post.self) == 20)   // 19 stored + 1 pending insert

            // ...and changes made after it win over it: a marked id written again is kept
            // (an update of the stored object), a new id is inserted.
            var kept = posts[4]
            kept.summary = "written again"
            main.insert(kept)
            main.insert(Fixtures.posts(1, startingAt: 200)[0])
            #expect(try main.fetchIdentifiers(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.id)])) == [5, 200])

            let stream = container.changes
            try main.save()
            #expect(try main.fetchIdentifiers(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.id)])) == [5, 200])
            #expect(main.model(Post.self, id: 5)?.summary == "written again")
            try container.checkInvariants()

            // Saving again does not conflict with what the save wrote.
            kept.summary = "and again"
            main.insert(kept)
            try main.save()
            #expect(container.mainContext.model(Post.self, id: 5)?.summary == "and again")

            try await container.close()
            let received = await Self.collect(stream)
            #expect(received.first?.updatedIDs(Post.self) == [5])
            #expect(received.first?.insertedIDs(Post.self) == [200])
            #expect(Set(received.first?.deletedIDs(Post.self) ?? []) == Set(posts.map(\.id)).subtracting([5]))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func referencedObjectsStillFollowTheirDeleteRules(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let main = container.mainContext
            let tags = Fixtures.tagNames.map { Tag(name: $0) }
            main.insert(contentsOf: tags)
            main.insert(contentsOf: Fixtures.posts(30, tags: [tags[2].id]))
            try main.save()

            #expect(try main.delete(model: Tag.self) == 5)
            try main.save()
            // Post.tagIDs nullifies: every post lost its tag, none was deleted.
            #expect(container.count(of: Tag.self) == 0)
            #expect(try main.fetch(FetchDescriptor<Post>()).allSatisfy { $0.tagIDs.isEmpty })
            #expect(container.count(of: Post.self) == 30)
            try container.checkInvariants()
        }
    }

    @Test func aSecondMarkingKeepsTheFirstOnesBases() async throws {
        try await withContainer(.inMemory) { container in
            let posts = Fixtures.posts(10)
            container.mainContext.insert(contentsOf: posts)
            try container.mainContext.save()

            let deleter = container.newBackgroundContext()
            #expect(try deleter.delete(model: Post.self) == 10)
            var changed = posts[0]
            changed.noteCount = 99
            container.mainContext.insert(changed)
            try container.mainContext.save()
            // Marking again does not forget that post 1 changed after the first marking.
            #expect(try deleter.delete(model: Post.self) == 0)
            #expect(throws: GraphStoreError.self) { try deleter.save() }
            deleter.rollback()
            #expect(try deleter.delete(model: Post.self) == 10)
            try deleter.save()
            #expect(container.count(of: Post.self) == 0)
        }
    }
}
