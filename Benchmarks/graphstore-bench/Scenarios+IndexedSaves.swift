import ExampleModel
import Foundation
import GraphStore

/// `Post` without its sorted indexes: what a save costs without them.
struct PlainPost: Entity {
    var id: Int64
    var blogName: String
    var kind: Post.Kind
    var date: Date
    var summary: String
    var body: String?
    var noteCount: Int
    var tagIDs: [Tag.ID]

    init(_ post: Post) {
        id = post.id
        blogName = post.blogName
        kind = post.kind
        date = post.date
        summary = post.summary
        body = post.body
        noteCount = post.noteCount
        tagIDs = post.tagIDs
    }

    static var relationships: [Relationship<PlainPost>] { [.toMany(\.tagIDs, Tag.self, deleteRule: .nullify)] }
}

extension Scenarios {
    // MARK: - 10. Saves with sorted indexes

    /// One changed post, and a batch of 500 new posts, saved into a store of 100,000 posts:
    /// `Post` (three sorted indexes) against `PlainPost` (none). Both sides are GraphStore;
    /// the `sqlite` column holds the no-index figure.
    func indexedSaves() throws -> [Row] {
        let count = n(100_000)
        let posts = benchPosts(count)
        let indexed = try GraphContainer(for: [Post.self, Tag.self], store: .inMemory)
        let plain = try GraphContainer(for: [PlainPost.self, Tag.self], store: .inMemory)
        let fill = plain.newBackgroundContext()
        for tag in benchTags { fill.insert(tag) }
        for post in posts { fill.insert(PlainPost(post)) }
        try fill.save()
        let fillIndexed = indexed.newBackgroundContext()
        for tag in benchTags { fillIndexed.insert(tag) }
        for post in posts { fillIndexed.insert(post) }
        try fillIndexed.save()
        var one: (indexed: [Double], plain: [Double]) = ([], [])
        var batch: (indexed: [Double], plain: [Double]) = ([], [])
        for round in 0..<200 {
            var post = posts[(round * 7919) % count]
            post.noteCount += 1
            post.date = post.date.addingTimeInterval(1)
            one.indexed.append(try time {
                indexed.mainContext.insert(post)
                try indexed.mainContext.save()
            })
            one.plain.append(try time {
                plain.mainContext.insert(PlainPost(post))
                try plain.mainContext.save()
            })
        }
        var plainField: (indexed: [Double], plain: [Double]) = ([], [])
        for round in 0..<200 {
            var post = posts[(round * 104_729) % count]
            post.summary = "edited \(round)"
            plainField.indexed.append(try time {
                indexed.mainContext.insert(post)
                try indexed.mainContext.save()
            })
            plainField.plain.append(try time {
                plain.mainContext.insert(PlainPost(post))
                try plain.mainContext.save()
            })
        }
        for round in 0..<20 {
            let fresh = benchPosts(500, first: Int64(count + 1 + round * 500))
            batch.indexed.append(try time {
                for post in fresh { indexed.mainContext.insert(post) }
                try indexed.mainContext.save()
            })
            batch.plain.append(try time {
                for post in fresh { plain.mainContext.insert(PlainPost(post)) }
                try plain.mainContext.save()
            })
        }
        return [
            Row(scenario: "10. save one changed post, store of \(count)", variant: "3 indexes vs none", graphStore: median(one.indexed) * 1000, sqlite: median(one.plain) * 1000, unit: "µs", note: "SQLite column: the same save without indexes"),
            Row(scenario: "10. save one post with an unindexed field changed, store of \(count)", variant: "3 indexes vs none", graphStore: median(plainField.indexed) * 1000, sqlite: median(plainField.plain) * 1000, unit: "µs", note: "SQLite column: the same save without indexes"),
            Row(scenario: "10. save 500 new posts, store of \(count)", variant: "3 indexes vs none", graphStore: median(batch.indexed), sqlite: median(batch.plain), note: "SQLite column: the same save without indexes"),
        ]
    }
}
