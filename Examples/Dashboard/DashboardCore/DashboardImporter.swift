import ExampleModel
import Foundation
import GraphStore

/// Imports pages of posts on background contexts: upsert by post id, tags through their
/// unique name, so importing the same page twice changes nothing.
public struct DashboardImporter: Sendable {
    public let container: GraphContainer

    public init(container: GraphContainer) {
        self.container = container
    }

    /// What an import did.
    public struct Report: Sendable, Equatable {
        public var pages = 0
        public var posts = 0
        public var skipped = 0
        public var tags = 0

        public init() {}

        init(pages: Int, posts: Int, skipped: Int, tags: Int) {
            self.pages = pages
            self.posts = posts
            self.skipped = skipped
            self.tags = tags
        }
    }

    /// Imports `page` in one background context and saves it; returns when the page is visible
    /// to every context (not yet durable: call `container.flush()`).
    ///
    /// Each tag is created as a new ``Tag`` value; the unique constraint on its name merges it
    /// into the existing tag (merge policy `.contextWins`), and the posts' references follow.
    ///
    /// - Throws: `GraphStoreError` from the save.
    @discardableResult
    public func importPage(_ page: TumblrPage) async throws -> Report {
        try await container.performBackgroundTask { context in
            context.name = "dashboard import"
            context.mergePolicy = .contextWins
            var tagIDs: [String: Tag.ID] = [:]
            for name in Set(page.posts.flatMap(\.tags)) {
                let tag = Tag(name: name)
                tagIDs[name] = tag.id
                context.insert(tag)
            }
            for post in page.posts {
                var seen = Set<String>()
                let ids = post.tags.filter { seen.insert($0).inserted }.compactMap { tagIDs[$0] }
                context.insert(post.post(tagIDs: ids))
            }
            try context.save()
            return Report(pages: 1, posts: page.posts.count, skipped: page.skipped, tags: tagIDs.count)
        }
    }

    /// Imports pages one after another, each in its own background context.
    public func importPages(_ pages: [TumblrPage]) async throws -> Report {
        var total = Report()
        for page in pages {
            let report = try await importPage(page)
            total.pages += 1
            total.posts += report.posts
            total.skipped += report.skipped
            total.tags += report.tags
        }
        return total
    }

    /// The newest `limit` posts, as the main context sees them.
    public func newestPosts(_ limit: Int = 10) throws -> [Post] {
        try container.mainContext.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: limit))
    }

    /// The names of a post's tags, in order.
    public func tagNames(of post: Post) -> [String] {
        post.tagIDs.compactMap { container.mainContext.model(Tag.self, id: $0)?.name }
    }
}
