import ExampleModel
import Foundation
import GRDB
import GraphStore

extension Scenarios {
    // MARK: - 3. Fetch

    func fetch() throws -> [Row] {
        let count = n(100_000)
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let posts = benchPosts(count)
        let queue = try makePostDatabase(directory.appendingPathComponent("posts.sqlite"))
        try fillPostDatabase(queue, posts: posts)
        let container = try GraphContainer(for: benchModel, store: .inMemory)
        try fillContainer(container, posts: posts)
        let context = container.mainContext
        let tagID = benchTags[7].id
        let (newestGS, newestSQ) = try harness.compare({
            try time {
                let result = try context.fetch(FetchDescriptor<Post>(
                    predicate: #Predicate { $0.noteCount > 100 && $0.blogName != "blog3" },
                    sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
                precondition(result.count == 20)
            }
        }, {
            try time {
                let result = try queue.read { db in
                    try PostRecord.fetchAll(db, sql: "SELECT * FROM post WHERE noteCount > 100 AND blogName != 'blog3' ORDER BY date DESC LIMIT 20")
                }
                precondition(result.count == 20)
            }
        })
        // Queries a sorted index answers, with the same indexes on both sides.
        let blog = "blog3"
        let (blogNewestGS, blogNewestSQ) = try harness.compare({
            try time {
                let result = try context.fetch(FetchDescriptor<Post>(
                    predicate: #Predicate { $0.blogName == blog }, sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
                precondition(result.count == 20)
            }
        }, {
            try time {
                let result = try queue.read { db in
                    try PostRecord.fetchAll(db, sql: "SELECT * FROM post WHERE blogName = ? ORDER BY date DESC LIMIT 20", arguments: [blog])
                }
                precondition(result.count == 20)
            }
        })
        let (plainNewestGS, plainNewestSQ) = try harness.compare({
            try time {
                let result = try context.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
                precondition(result.count == 20)
            }
        }, {
            try time {
                let result = try queue.read { db in try PostRecord.fetchAll(db, sql: "SELECT * FROM post ORDER BY date DESC LIMIT 20") }
                precondition(result.count == 20)
            }
        })
        let from = benchEpoch.addingTimeInterval(3_600), until = benchEpoch.addingTimeInterval(86_400 * 30)
        let (rangeGS, rangeSQ) = try harness.compare({
            try time {
                let result = try context.fetch(FetchDescriptor<Post>(
                    predicate: #Predicate { $0.date >= from && $0.date < until }, sortBy: [SortDescriptor(\.date)], fetchLimit: 50))
                precondition(result.count == 50)
            }
        }, {
            try time {
                let result = try queue.read { db in
                    try PostRecord.fetchAll(db, sql: "SELECT * FROM post WHERE date >= ? AND date < ? ORDER BY date LIMIT 50", arguments: [from, until])
                }
                precondition(result.count == 50)
            }
        })
        let (blogCountGS, blogCountSQ) = try harness.compare({
            try time {
                let result = try context.fetchCount(FetchDescriptor<Post>(predicate: #Predicate { $0.blogName == blog }))
                precondition(result > 0)
            }
        }, {
            try time {
                let result = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM post WHERE blogName = ?", arguments: [blog])! }
                precondition(result > 0)
            }
        })
        let popular = posts[posts.count / 2].noteCount
        let (lookupGS, lookupSQ) = try harness.compare({
            try time {
                let result = try context.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.noteCount == popular }))
                precondition(!result.isEmpty)
            }
        }, {
            try time {
                let result = try queue.read { db in try PostRecord.fetchAll(db, sql: "SELECT * FROM post WHERE noteCount = ?", arguments: [popular]) }
                precondition(!result.isEmpty)
            }
        })
        let (countGS, countSQ) = try harness.compare({
            time {
                let result = context.fetchCount(Post.self, referencing: tagID, of: Tag.self)
                precondition(result > 0)
            }
        }, {
            try time {
                let result = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM postTag WHERE tagID = ?", arguments: [tagID])! }
                precondition(result > 0)
            }
        })
        // Every object of a large table, and a small table read whole: what tracking the
        // versions a fetch read costs per object and per fetch.
        let (allGS, allSQ) = try harness.compare({
            try time {
                let result = try context.fetch(FetchDescriptor<Post>())
                precondition(result.count == count)
            }
        }, {
            try time {
                let result = try queue.read { db in try PostRecord.fetchAll(db, sql: "SELECT * FROM post") }
                precondition(result.count == count)
            }
        })
        let small = try GraphContainer(for: benchModel, store: .inMemory)
        try fillContainer(small, posts: Array(posts.prefix(20)))
        let smallQueue = try makePostDatabase(directory.appendingPathComponent("small.sqlite"))
        try fillPostDatabase(smallQueue, posts: Array(posts.prefix(20)))
        let (smallGS, smallSQ) = try harness.compare({
            // Many fetches per sample: one takes microseconds.
            try time {
                for _ in 0..<1_000 {
                    let result = try small.mainContext.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)]))
                    precondition(result.count == 20)
                }
            } / 1_000
        }, {
            try time {
                for _ in 0..<1_000 {
                    let result = try smallQueue.read { db in try PostRecord.fetchAll(db, sql: "SELECT * FROM post ORDER BY date DESC") }
                    precondition(result.count == 20)
                }
            } / 1_000
        })
        // The same 20 posts through a window: a fetch that remembers each id it returned.
        let windowGS = try harness.single {
            try time {
                for _ in 0..<1_000 {
                    let result = try small.mainContext.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
                    precondition(result.count == 20)
                }
            } / 1_000
        }
        let scanGS = try harness.single {
            try time {
                let result = try context.fetchCount(FetchDescriptor<Post>(predicate: #Predicate { $0.tagIDs.contains(tagID) }))
                precondition(result > 0)
            }
        }
        return [
            Row(scenario: "3. fetch newest 20 (predicate + sort) of \(count) posts", variant: "inMemory", graphStore: newestGS, sqlite: newestSQ, note: "SQLite has an index on date"),
            Row(scenario: "3. fetch all \(count) posts", variant: "inMemory, no predicate", graphStore: allGS, sqlite: allSQ, note: "SQLite: SELECT * into structs"),
            Row(scenario: "3. fetch all 20 posts (sorted) of a 20-post store", variant: "inMemory", graphStore: smallGS, sqlite: smallSQ, note: "mean of 1,000 fetches"),
            Row(scenario: "3. fetch all 20 posts (sorted) of a 20-post store", variant: "inMemory, fetchLimit 20", graphStore: windowGS, sqlite: smallSQ, note: "mean of 1,000 fetches; remembers each id"),
            Row(scenario: "3. count posts by tag, \(count) posts", variant: "inverse index", graphStore: countGS, sqlite: countSQ, note: "SQLite: indexed join table"),
            Row(scenario: "3. count posts by tag, \(count) posts", variant: "#Predicate scan", graphStore: scanGS, sqlite: countSQ, note: "full scan with a predicate"),
            Row(scenario: "3. newest 20 of one blog, \(count) posts", variant: "index (blogName, date)", graphStore: blogNewestGS, sqlite: blogNewestSQ, note: "blogName == X, date desc"),
            Row(scenario: "3. newest 20, no predicate, \(count) posts", variant: "index date", graphStore: plainNewestGS, sqlite: plainNewestSQ),
            Row(scenario: "3. date range, oldest first, limit 50", variant: "index date", graphStore: rangeGS, sqlite: rangeSQ),
            Row(scenario: "3. count posts of one blog, \(count) posts", variant: "index (blogName, date)", graphStore: blogCountGS, sqlite: blogCountSQ, note: "O(log n) rank difference"),
            Row(scenario: "3. posts with one noteCount (non-unique key)", variant: "index noteCount", graphStore: lookupGS, sqlite: lookupSQ),
        ]
    }
}
