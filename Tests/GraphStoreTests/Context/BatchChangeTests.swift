import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// `insert(contentsOf:)` and `delete(model:where:)` record many changes at once; the result
/// must be the same as one change at a time.
@Suite struct BatchChangeTests {
    @Test(arguments: StoreKind.allCases)
    func insertContentsOfEqualsInsertingOneByOne(store: StoreKind) async throws {
        let posts = Fixtures.posts(300)
        try await withContainer(store) { batch in
            try await withContainer(store) { single in
                batch.mainContext.insert(contentsOf: posts)
                for post in posts { single.mainContext.insert(post) }
                try batch.mainContext.save()
                try single.mainContext.save()
                let sortBy = [SortDescriptor(\Post.id)]
                #expect(try batch.mainContext.fetch(FetchDescriptor<Post>(sortBy: sortBy)) == posts)
                #expect(try single.mainContext.fetch(FetchDescriptor<Post>(sortBy: sortBy)) == posts)
                try batch.checkInvariants()
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aBatchIsBasedOnTheStoredVersions(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let posts = Fixtures.posts(10)
            container.mainContext.insert(contentsOf: posts)
            try container.mainContext.save()
            // Replacing stored objects in a batch is an update, not a conflict...
            let context = container.newBackgroundContext()
            context.insert(contentsOf: posts.map { post in
                var changed = post
                changed.noteCount += 1
                return changed
            })
            // ...unless another save changed one of them first.
            var other = posts[3]
            other.summary = "changed elsewhere"
            container.mainContext.insert(other)
            try container.mainContext.save()
            #expect {
                try context.save()
            } throws: { error in
                guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
                return conflicts.map(\.id) == [String(posts[3].id)] && conflicts[0].kind == .updatedElsewhere
            }
            context.rollback()
            context.insert(contentsOf: [posts[0]])
            try context.save()
            try container.checkInvariants()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aChildsBatchIsBasedOnItsParentsChanges(store: StoreKind) async throws {
        try await withContainer(store) { container in
            let parent = container.newBackgroundContext()
            let posts = Fixtures.posts(5)
            parent.insert(contentsOf: posts)
            let child = parent.newChildContext()
            child.insert(contentsOf: posts.map { post in
                var changed = post
                changed.summary = "child"
                return changed
            })
            try child.save()
            try parent.save()
            #expect(try container.mainContext.fetch(FetchDescriptor<Post>()).allSatisfy { $0.summary == "child" })
            #expect(container.count(of: Post.self) == 5)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deleteModelWhereMarksEveryMatch(store: StoreKind) async throws {
        try await withContainer(store) { container in
            container.mainContext.insert(contentsOf: Fixtures.posts(100))
            try container.mainContext.save()
            let marked = try container.mainContext.delete(model: Post.self, where: #Predicate { $0.id > 40 })
            #expect(marked == 60)
            try container.mainContext.save()
            #expect(container.count(of: Post.self) == 40)
            // Without a predicate: what this context sees, pending inserts included and pending
            // deletes not counted twice; a child sees its parent's changes too.
            let main = container.mainContext
            main.insert(contentsOf: Fixtures.posts(5, startingAt: 1_000))
            main.delete(Post.self, id: 1)
            let child = main.newChildContext()
            child.insert(contentsOf: Fixtures.posts(2, startingAt: 2_000))
            #expect(try child.delete(model: Post.self) == 39 + 5 + 2)
            #expect(try child.fetchCount(FetchDescriptor<Post>()) == 0)
            #expect(try main.fetchCount(FetchDescriptor<Post>()) == 44)
            try child.save()
            #expect(try main.fetchCount(FetchDescriptor<Post>()) == 0)
            try main.save()
            #expect(container.count(of: Post.self) == 0)
            try container.checkInvariants()
        }
    }
}
