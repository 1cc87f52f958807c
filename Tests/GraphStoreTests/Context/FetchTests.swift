import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

@Suite struct FetchTests {
    static let tags = Fixtures.tagNames.map { Tag(name: $0) }
    /// Posts 1...60: blog `blog(id % 7)`, date epoch + id minutes, no body when id % 3 == 0,
    /// noteCount id % 100.
    static let posts = Fixtures.posts(60, tags: tags.map(\.id))

    static func seed(_ container: GraphContainer) throws {
        let main = container.mainContext
        for tag in tags { main.insert(tag) }
        for post in posts { main.insert(post) }
        try main.save()
        try container.checkInvariants()
    }

    /// Fetches `descriptor` and checks that `fetchCount` and `fetchIdentifiers` agree with it.
    static func fetchChecked<E: Entity>(_ context: GraphContext, _ descriptor: FetchDescriptor<E>) throws -> [E] {
        let objects = try context.fetch(descriptor)
        #expect(try context.fetchCount(descriptor) == objects.count)
        #expect(try context.fetchIdentifiers(descriptor) == objects.map(\.id))
        return objects
    }

    // MARK: - Predicates

    @Test(arguments: StoreKind.allCases)
    func stringPredicates(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let blog3 = try Self.fetchChecked(main, FetchDescriptor<Post>(predicate: #Predicate { $0.blogName == "blog3" }))
            #expect(Set(blog3.map(\.id)) == Set(Self.posts.filter { $0.blogName == "blog3" }.map(\.id)))
            #expect(blog3.count == 9)

            let number4 = try Self.fetchChecked(main, FetchDescriptor<Post>(predicate: #Predicate { $0.summary.contains("number 4") }))
            #expect(Set(number4.map(\.id)) == [4, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49])

            let prefixed = try Self.fetchChecked(main, FetchDescriptor<Post>(predicate: #Predicate { $0.blogName.starts(with: "blog1") }))
            #expect(prefixed.count == Self.posts.filter { $0.blogName == "blog1" }.count)

            let none = try Self.fetchChecked(main, FetchDescriptor<Post>(predicate: #Predicate { $0.blogName == "nobody" }))
            #expect(none.isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func datePredicates(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let from = Fixtures.epoch.addingTimeInterval(10 * 60)
            let to = Fixtures.epoch.addingTimeInterval(20 * 60)
            let window = try Self.fetchChecked(main, FetchDescriptor<Post>(
                predicate: #Predicate { $0.date >= from && $0.date < to },
                sortBy: [SortDescriptor(\.date)]))
            #expect(window.map(\.id) == Array(10..<20))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func optionalPredicates(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let withoutBody = try Self.fetchChecked(main, FetchDescriptor<Post>(predicate: #Predicate { $0.body == nil }))
            #expect(Set(withoutBody.map(\.id)) == Set(Self.posts.filter { $0.id % 3 == 0 }.map(\.id)))

            let bodyMentions5 = try Self.fetchChecked(main, FetchDescriptor<Post>(
                predicate: #Predicate { $0.body?.contains("post 5") == true }))
            // Bodies exist for ids not divisible by 3: 5, 50, 52, 53, 55, 56, 58, 59.
            #expect(Set(bodyMentions5.map(\.id)) == [5, 50, 52, 53, 55, 56, 58, 59])

            let hasBody = try Self.fetchChecked(main, FetchDescriptor<Post>(predicate: #Predicate { $0.body != nil }))
            #expect(hasBody.count + withoutBody.count == Self.posts.count)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func numericAndBooleanPredicates(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let popular = try Self.fetchChecked(main, FetchDescriptor<Post>(
                predicate: #Predicate { $0.noteCount >= 50 && $0.id % 2 == 0 }))
            #expect(Set(popular.map(\.id)) == Set(stride(from: Int64(50), through: 60, by: 2)))

            let notes = [
                Note(text: "a", createdAt: Fixtures.epoch, isArchived: true),
                Note(text: "b", createdAt: Fixtures.epoch, isArchived: false),
            ]
            for note in notes { main.insert(note) }
            try main.save()
            try container.checkInvariants()
            let archived = try Self.fetchChecked(main, FetchDescriptor<Note>(predicate: #Predicate { $0.isArchived }))
            #expect(archived == [notes[0]])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aThrowingPredicateIsReportedAsPredicateFailed(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let descriptor = FetchDescriptor<Post>(predicate: #Predicate { $0.body!.isEmpty })
            let fetchError = #expect(throws: GraphStoreError.self) { try main.fetch(descriptor) }
            let countError = #expect(throws: GraphStoreError.self) { try main.fetchCount(descriptor) }
            for error in [fetchError, countError] {
                guard case .predicateFailed(let entity, _, _) = error else {
                    Issue.record("expected predicateFailed, got \(String(describing: error))")
                    continue
                }
                #expect(entity == "Post")
            }
        }
    }

    // MARK: - Sorting and windows

    @Test(arguments: StoreKind.allCases)
    func multiKeySort(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let sortBy = [SortDescriptor(\Post.blogName), SortDescriptor(\Post.date, order: .reverse)]
            let sorted = try Self.fetchChecked(main, FetchDescriptor<Post>(sortBy: sortBy))
            let expected = Self.posts.sorted { a, b in
                a.blogName != b.blogName ? a.blogName < b.blogName : a.date > b.date
            }
            #expect(sorted.map(\.id) == expected.map(\.id))
            #expect(sorted.first?.id == 56)   // blog0, newest
        }
    }

    @Test(arguments: StoreKind.allCases)
    func limitAndOffsetWindowTheSortedResult(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let sortBy = [SortDescriptor(\Post.blogName), SortDescriptor(\Post.date, order: .reverse)]
            let all = try main.fetch(FetchDescriptor<Post>(sortBy: sortBy)).map(\.id)
            #expect(all.count == 60)
            let windows: [(offset: Int?, limit: Int?)] = [
                (nil, 20), (0, 20), (10, 20), (50, 20), (59, 5), (60, 5), (75, 5), (10, nil), (100, nil), (nil, 0), (5, 0), (nil, 1000),
                (-5, 10), (3, -1),  // negative values count as 0, in fetch and fetchCount alike
            ]
            for (offset, limit) in windows {
                let descriptor = FetchDescriptor<Post>(sortBy: sortBy, fetchLimit: limit, fetchOffset: offset)
                let page = try Self.fetchChecked(main, descriptor).map(\.id)
                let start = min(max(0, offset ?? 0), all.count)
                let end = limit.map { min(all.count, start + max(0, $0)) } ?? all.count
                #expect(page == Array(all[start..<end]), "offset \(String(describing: offset)) limit \(String(describing: limit))")
            }
            // Unsorted windows still partition the whole result.
            var seen: [Int64] = []
            for offset in stride(from: 0, to: 60, by: 25) {
                seen += try main.fetchIdentifiers(FetchDescriptor<Post>(fetchLimit: 25, fetchOffset: offset))
            }
            #expect(seen.count == 60 && Set(seen).count == 60)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func limitWithAPredicateCountsOnlyMatches(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let since = Fixtures.epoch.addingTimeInterval(30 * 60)
            let newest = try Self.fetchChecked(main, FetchDescriptor<Post>(
                predicate: #Predicate { $0.date >= since && $0.body != nil },
                sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
            let expected = Self.posts.filter { $0.id >= 30 && $0.body != nil }.sorted { $0.date > $1.date }.prefix(20)
            #expect(newest.map(\.id) == expected.map(\.id))
            #expect(newest.count == 20)
        }
    }

    // MARK: - Pending changes

    @Test(arguments: StoreKind.allCases)
    func pendingInsertsAndDeletesAreSeenOnlyByTheirContextUntilSave(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let other = container.newBackgroundContext()
            let inserted = Post(id: 1_000, blogName: "blog3", date: Fixtures.epoch, summary: "new")
            var updated = Self.posts[6]   // id 7, blog0
            updated.blogName = "blog3"
            let deleted = Self.posts[2]   // id 3, blog3
            main.insert(inserted)
            main.insert(updated)
            main.delete(deleted)

            let blog3 = FetchDescriptor<Post>(predicate: #Predicate { $0.blogName == "blog3" })
            let storedBlog3 = Set(Self.posts.filter { $0.blogName == "blog3" }.map(\.id))
            #expect(Set(try Self.fetchChecked(main, blog3).map(\.id)) == storedBlog3.union([1_000, 7]).subtracting([3]))
            #expect(Set(try Self.fetchChecked(other, blog3).map(\.id)) == storedBlog3)
            #expect(try main.fetchCount(FetchDescriptor<Post>()) == 60)
            #expect(try other.fetchCount(FetchDescriptor<Post>()) == 60)
            #expect(main.model(Post.self, id: 1_000) == inserted)
            #expect(main.model(Post.self, id: 3) == nil)
            #expect(other.model(Post.self, id: 1_000) == nil)
            #expect(other.model(Post.self, id: 3) == deleted)
            #expect(container.count(of: Post.self) == 60)

            try main.save()
            try container.checkInvariants()
            #expect(Set(try Self.fetchChecked(other, blog3).map(\.id)) == storedBlog3.union([1_000, 7]).subtracting([3]))
            #expect(other.model(Post.self, id: 7) == updated)
            #expect(other.model(Post.self, id: 3) == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func insertingTheSameIDTwiceReplaces(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            var post = Self.posts[0]
            post.summary = "first"
            main.insert(post)
            post.summary = "second"
            main.insert(post)
            #expect(try main.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.id == 1 })).map(\.summary) == ["second"])
            try main.save()
            try container.checkInvariants()
            #expect(container.count(of: Post.self) == 60)
            #expect(container.newBackgroundContext().model(Post.self, id: 1)?.summary == "second")
        }
    }

    // MARK: - Batch delete and lookup by id

    @Test(arguments: StoreKind.allCases)
    func batchDelete(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let deleted = try main.delete(model: Post.self, where: #Predicate { $0.blogName == "blog2" || $0.noteCount < 5 })
            let expected = Self.posts.filter { $0.blogName == "blog2" || $0.noteCount < 5 }
            #expect(deleted == expected.count)
            #expect(try main.fetchCount(FetchDescriptor<Post>()) == 60 - expected.count)
            #expect(container.count(of: Post.self) == 60)
            try main.save()
            try container.checkInvariants()
            #expect(container.count(of: Post.self) == 60 - expected.count)
            #expect(try container.newBackgroundContext().fetchCount(FetchDescriptor<Post>(predicate: #Predicate { $0.blogName == "blog2" })) == 0)

            let everything = try main.delete(model: Post.self)
            #expect(everything == 60 - expected.count)
            try main.save()
            try container.checkInvariants()
            #expect(container.count(of: Post.self) == 0)
            #expect(container.count(of: Tag.self) == Self.tags.count)
        }
    }

    /// A fetch of every object (and an unsorted window of one) overlays the pending changes
    /// of its own entity, and is not disturbed by pending changes of another entity, in a
    /// context and in its child.
    @Test(arguments: StoreKind.allCases)
    func fetchAllOverlaysPendingChangesOfItsEntityOnly(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let stored = try main.fetch(FetchDescriptor<Post>())
            #expect(Set(stored) == Set(Self.posts) && stored.count == Self.posts.count)

            // Pending changes of another entity only: the same objects in the same order.
            main.insert(Tag(name: "pending tag"))
            #expect(try main.fetch(FetchDescriptor<Post>()) == stored)

            // Pending changes of the entity itself: an insert, an update and a delete.
            var changed = Self.posts[4]
            changed.blogName = "changed"
            let inserted = Post(id: 1_000, blogName: "new", kind: .text, date: Fixtures.epoch, summary: "new post")
            main.insert(changed)
            main.insert(inserted)
            main.delete(Post.self, id: 7)
            var expected = Set(Self.posts.filter { $0.id != 5 && $0.id != 7 })
            expected.formUnion([changed, inserted])
            let overlaid = try Self.fetchChecked(main, FetchDescriptor<Post>())
            #expect(Set(overlaid) == expected && overlaid.count == expected.count)

            // Unsorted windows are slices of the unsorted whole, with and without a predicate.
            let notBlog3 = #Predicate<Post> { $0.blogName != "blog3" }
            let filtered = try main.fetch(FetchDescriptor<Post>(predicate: notBlog3))
            #expect(Set(filtered) == expected.filter { $0.blogName != "blog3" })
            for (offset, limit) in [(nil, 1), (0, 10), (20, 30), (55, 10), (58, 5), (60, 5), (nil, 0), (3, -1), (-2, 4)] as [(Int?, Int?)] {
                for (predicate, whole) in [(nil, overlaid), (notBlog3, filtered)] as [(Predicate<Post>?, [Post])] {
                    let page = try Self.fetchChecked(main, FetchDescriptor<Post>(predicate: predicate, fetchLimit: limit, fetchOffset: offset))
                    let start = min(max(0, offset ?? 0), whole.count)
                    let end = limit.map { min(whole.count, start + max(0, $0)) } ?? whole.count
                    #expect(page == Array(whole[start..<end]), "offset \(String(describing: offset)) limit \(String(describing: limit))")
                }
            }

            // A child sees its parent's pending changes under its own.
            let child = main.newChildContext()
            child.delete(Post.self, id: 1_000)
            child.insert(Post(id: 1_001, blogName: "child", kind: .text, date: Fixtures.epoch, summary: "child post"))
            let seenByChild = try child.fetch(FetchDescriptor<Post>())
            #expect(Set(seenByChild.map(\.id)) == Set(expected.map(\.id)).subtracting([1_000]).union([1_001]))
            #expect(seenByChild.first { $0.id == 5 }?.blogName == "changed")

            // Saved, the same objects come back from the store without any overlay.
            try main.save()
            #expect(Set(try main.fetch(FetchDescriptor<Post>())) == expected)
            try container.checkInvariants()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func modelByID(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            #expect(main.model(Post.self, id: 42) == Self.posts[41])
            #expect(main.model(Tag.self, id: Self.tags[0].id) == Self.tags[0])
            #expect(main.model(Post.self, id: 4_242) == nil)
            #expect(main.model(Tag.self, id: UUID()) == nil)
            main.delete(Post.self, id: 42)
            #expect(main.model(Post.self, id: 42) == nil)
            main.rollback()
            #expect(main.model(Post.self, id: 42) == Self.posts[41])
            try container.checkInvariants()
        }
    }
}
