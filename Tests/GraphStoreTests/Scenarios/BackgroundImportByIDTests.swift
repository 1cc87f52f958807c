import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// Objects fetched on one task are handed to another, by value and by id, changed and saved
/// there; the main context sees the change. Nothing is bound to the task that fetched it.
@Suite struct BackgroundImportByIDTests {
    static let tags = Fixtures.tagNames.map { Tag(name: $0) }
    static let posts = Fixtures.posts(400, tags: tags.map(\.id))

    static func seed(_ container: GraphContainer) throws {
        for tag in tags { container.mainContext.insert(tag) }
        for post in posts { container.mainContext.insert(post) }
        try container.mainContext.save()
        try container.checkInvariants()
    }

    @Test(arguments: StoreKind.allCases)
    func valuesHandedToAnotherTaskAreUpdatedThere(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let popular = try main.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.noteCount >= 90 }))
            #expect(popular.count == 40)

            try await Task.detached {
                let context = container.newBackgroundContext()
                for var post in popular {
                    post.summary = "featured: \(post.summary)"
                    context.insert(post)
                }
                try context.save()
            }.value
            try container.checkInvariants()

            let featured = try main.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.summary.starts(with: "featured: ") }))
            #expect(Set(featured.map(\.id)) == Set(popular.map(\.id)))
            #expect(main.model(Post.self, id: popular[0].id)?.summary == "featured: " + popular[0].summary)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func idsHandedToABackgroundTaskAreLoadedUpdatedAndSaved(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            let ids = try main.fetchIdentifiers(FetchDescriptor<Post>(predicate: #Predicate { $0.blogName == "blog4" }))
            #expect(ids.count == Self.posts.filter { $0.blogName == "blog4" }.count)

            let updated = try await container.performBackgroundTask { context in
                var updated = 0
                for id in ids {
                    guard var post = context.model(Post.self, id: id) else { continue }
                    post.noteCount += 1_000
                    post.tagIDs = [Self.tags[0].id]
                    context.insert(post)
                    updated += 1
                }
                try context.save()
                return updated
            }
            try container.checkInvariants()
            #expect(updated == ids.count)
            let reloaded = ids.compactMap { main.model(Post.self, id: $0) }
            #expect(reloaded.count == ids.count)
            #expect(reloaded.allSatisfy { $0.noteCount >= 1_000 && $0.tagIDs == [Self.tags[0].id] })
            #expect(try main.fetchCount(FetchDescriptor<Post>(predicate: #Predicate { $0.noteCount >= 1_000 })) == ids.count)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func manyTasksUpdateDisjointSlicesWhileTheMainContextReads(store: StoreKind) async throws {
        try await withTimeout(seconds: deadlockBound) {
            try await withContainer(store) { container in
                try Self.seed(container)
                let main = container.mainContext
                let ids = try main.fetchIdentifiers(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.id)]))
                let workers = 8
                let reads = try await withThrowingTaskGroup(of: [Int].self) { group in
                    for worker in 0..<workers {
                        let slice = stride(from: worker, to: ids.count, by: workers).map { ids[$0] }
                        group.addTask {
                            try await container.performBackgroundTask { context in
                                for (n, id) in slice.enumerated() {
                                    guard var post = context.model(Post.self, id: id) else { continue }
                                    post.body = "rewritten by \(worker)"
                                    context.insert(post)
                                    if n % 10 == 9 { try context.save() }
                                }
                                try context.save()
                            }
                            return []
                        }
                    }
                    group.addTask {
                        // The main context keeps reading; each read sees whole saves only.
                        var counts: [Int] = []
                        for _ in 0..<20 {
                            counts.append(try main.fetchCount(FetchDescriptor<Post>(predicate: #Predicate { $0.body?.starts(with: "rewritten") == true })))
                            await Task.yield()
                        }
                        return counts
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                try container.checkInvariants()
                #expect(zip(reads, reads.dropFirst()).allSatisfy { $0 <= $1 })
                let all = try main.fetch(FetchDescriptor<Post>())
                #expect(all.count == Self.posts.count)
                #expect(all.allSatisfy { $0.body?.starts(with: "rewritten by ") == true })
                let byID = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })
                #expect(ids.enumerated().allSatisfy { index, id in byID[id]?.body == "rewritten by \(index % workers)" })
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theMainContextKeepsItsPendingChangesWhileOthersSave(store: StoreKind) async throws {
        try await withContainer(store) { container in
            try Self.seed(container)
            let main = container.mainContext
            var mine = Self.posts[0]
            mine.summary = "edited on main"
            main.insert(mine)
            try await container.performBackgroundTask { context in
                guard var other = context.model(Post.self, id: Self.posts[1].id) else { return }
                other.summary = "edited in background"
                context.insert(other)
                #expect(context.model(Post.self, id: Self.posts[0].id) == Self.posts[0])
                try context.save()
            }
            #expect(main.model(Post.self, id: Self.posts[1].id)?.summary == "edited in background")
            #expect(main.model(Post.self, id: Self.posts[0].id)?.summary == "edited on main")
            try main.save()
            try container.checkInvariants()
            #expect(container.newBackgroundContext().model(Post.self, id: Self.posts[0].id)?.summary == "edited on main")
        }
    }
}
