import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A Tumblr-style dashboard refresh: a background context imports 5,000 posts page by page
/// while the main context keeps showing the newest 20.
///
/// Pages arrive in date order (page k holds posts k·500+1 ... (k+1)·500, each newer than the
/// last), so in every committed version the newest 20 posts are the last 20 of the last page
/// committed. A fetch that saw a page half-committed would break that.
@Suite struct DashboardRefreshTests {
    static let postCount = 5_000
    static let pageSize = 500
    static let pageCount = postCount / pageSize
    static let newestCount = 20
    /// The tag names the server uses; every page uses all of them.
    static let tagNames = Fixtures.tagNames + (0..<25).map { "topic\($0)" }

    /// One page as the decoder produces it: fresh `Tag` values (new ids every time) and posts
    /// referencing them, each with one or two tags.
    static func page(_ index: Int) -> (tags: [ExampleModel.Tag], posts: [Post]) {
        let tags = tagNames.map { Tag(name: $0) }
        var posts = Fixtures.posts(pageSize, startingAt: Int64(index * pageSize + 1), tags: tags.map(\.id))
        for i in posts.indices {
            let second = tags[Int((posts[i].id * 7 + 3) % Int64(tags.count))].id
            if !posts[i].tagIDs.contains(second) { posts[i].tagIDs.append(second) }
        }
        return (tags, posts)
    }

    /// The names of the tags `page(_:)` gives post `id`.
    static func expectedTagNames(_ id: Int64) -> [String] {
        let first = tagNames[Int(id % Int64(tagNames.count))]
        let second = tagNames[Int((id * 7 + 3) % Int64(tagNames.count))]
        return first == second ? [first] : [first, second]
    }

    /// Imports every page in a background context that upserts posts by server id and merges
    /// tags through their unique name, saving after each page.
    static func importAllPages(_ container: GraphContainer) async throws {
        try await container.performBackgroundTask { context in
            context.name = "dashboard import"
            context.mergePolicy = .contextWins
            for index in 0..<pageCount {
                let (tags, posts) = page(index)
                for tag in tags { context.insert(tag) }
                for post in posts { context.insert(post) }
                try context.save()
            }
        }
    }

    /// What one refresh of the main context saw.
    struct Refresh: Sendable {
        let newestIDs: [Int64]
        let datesDescending: Bool
        let count: Int
    }

    static func refresh(_ main: GraphContext) throws -> Refresh {
        let since = Fixtures.epoch
        let newest = try main.fetch(FetchDescriptor<Post>(
            predicate: #Predicate { $0.date >= since },
            sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: newestCount))
        let descending = zip(newest, newest.dropFirst()).allSatisfy { $0.date > $1.date }
        return Refresh(newestIDs: newest.map(\.id), datesDescending: descending, count: try main.fetchCount(FetchDescriptor<Post>()))
    }

    /// Serialized: the stores' cases would otherwise run three imports and three busy
    /// refreshers at once, starving every other suite on a small machine (under TSan, past
    /// their deadlock bounds).
    @Test(.serialized, arguments: StoreKind.allCases)
    func importWhileTheMainContextRefreshes(store: StoreKind) async throws {
        try await withTimeout(seconds: deadlockBound) {
            try await withContainer(store) { container in
                let main = container.mainContext
                let importFinished = Guarded(false)

                let refreshes = try await withThrowingTaskGroup(of: [Refresh].self) { group in
                    group.addTask {
                        defer { importFinished.withLock { $0 = true } }
                        try await Self.importAllPages(container)
                        return []
                    }
                    group.addTask {
                        var refreshes: [Refresh] = []
                        // One more refresh after the import finished, so the last one sees everything.
                        var finished = false
                        repeat {
                            finished = importFinished.value
                            refreshes.append(try Self.refresh(main))
                            await Task.yield()
                        } while !finished
                        return refreshes
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }

                // Every refresh saw one committed version: whole pages only, newest first.
                #expect(!refreshes.isEmpty)
                for refresh in refreshes {
                    #expect(refresh.newestIDs.count <= Self.newestCount)
                    #expect(refresh.datesDescending)
                    let top = refresh.newestIDs.first ?? 0
                    #expect(top % Int64(Self.pageSize) == 0, "saw a page half-committed: newest id \(top)")
                    #expect(refresh.newestIDs == Array(stride(from: top, to: max(0, top - Int64(Self.newestCount)), by: -1)))
                }
                // Refreshes never went back in time.
                let tops = refreshes.map { $0.newestIDs.first ?? 0 }
                #expect(zip(tops, tops.dropFirst()).allSatisfy { $0 <= $1 })
                let counts = refreshes.map(\.count)
                #expect(zip(counts, counts.dropFirst()).allSatisfy { $0 <= $1 })
                #expect(counts.allSatisfy { $0 % Self.pageSize == 0 })
                #expect(refreshes.last?.newestIDs.first == Int64(Self.postCount))
                #expect(refreshes.last?.count == Self.postCount)

                try container.checkInvariants()
                #expect(container.version == UInt64(Self.pageCount))
                let firstImport = try Self.checkImported(container)

                // The next refresh brings the same pages again: upserts, no duplicates.
                try await Self.importAllPages(container)
                try container.checkInvariants()
                let secondImport = try Self.checkImported(container)
                #expect(secondImport.tags == firstImport.tags)
                #expect(secondImport.posts == firstImport.posts)
            }
        }
    }

    /// Checks the imported graph as the main context sees it and returns it (tags by name,
    /// posts by id).
    static func checkImported(_ container: GraphContainer) throws -> (tags: [String: UUID], posts: [Post]) {
        let main = container.mainContext
        let posts = try main.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.id)]))
        #expect(posts.count == postCount)
        #expect(posts.map(\.id).elementsEqual(1...Int64(postCount)))
        let tags = try main.fetch(FetchDescriptor<ExampleModel.Tag>())
        #expect(tags.count == tagNames.count)
        #expect(Set(tags.map(\.name)) == Set(tagNames))
        let byID = Dictionary(uniqueKeysWithValues: tags.map { ($0.id, $0.name) })
        #expect(posts.allSatisfy { post in post.tagIDs.allSatisfy { byID[$0] != nil } })
        // Each post kept the tags it was imported with, by name, in order.
        #expect(posts.allSatisfy { post in post.tagIDs.map { byID[$0] } == expectedTagNames(post.id) })
        return (Dictionary(uniqueKeysWithValues: tags.map { ($0.name, $0.id) }), posts)
    }
}
