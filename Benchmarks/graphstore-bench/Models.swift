import ExampleModel
import Foundation
import GRDB
import GraphStore

/// The entity of the published Core Data table: `uid: Int32`, `title: String`.
struct Item: Entity, Hashable {
    var id: Int32
    var title: String
}

/// The same item as a GRDB record, in a table `item(id INTEGER PRIMARY KEY, title TEXT)`.
struct ItemRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"
    var id: Int32
    var title: String
}

/// A post as a GRDB record; its tags live in the join table `postTag`.
struct PostRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "post"
    var id: Int64
    var blogName: String
    var kind: String
    var date: Date
    var summary: String
    var body: String?
    var noteCount: Int
}

struct TagRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "tag"
    var id: UUID
    var name: String
}

struct PostTagRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "postTag"
    var postID: Int64
    var tagID: UUID
}

let benchModel: [any Entity.Type] = [Item.self, Post.self, Note.self, Tag.self]

func items(_ count: Int) -> [Item] {
    (0..<count).map { Item(id: Int32($0), title: "Item \($0)") }
}

/// Creates the item schema in an empty database.
func makeItemDatabase(_ url: URL) throws -> DatabaseQueue {
    let queue = try DatabaseQueue(path: url.path)
    try queue.write { db in
        try db.create(table: "item") { t in
            t.primaryKey("id", .integer)
            t.column("title", .text).notNull()
        }
    }
    return queue
}

/// Creates the post/tag schema: posts indexed by date, a unique tag name, a post–tag join table.
func makePostDatabase(_ url: URL) throws -> DatabaseQueue {
    let queue = try DatabaseQueue(path: url.path)
    try queue.write { db in
        try db.create(table: "tag") { t in
            t.primaryKey("id", .blob)
            t.column("name", .text).notNull().unique()
        }
        try db.create(table: "post") { t in
            t.primaryKey("id", .integer)
            t.column("blogName", .text).notNull()
            t.column("kind", .text).notNull()
            t.column("date", .datetime).notNull().indexed()
            t.column("summary", .text).notNull()
            t.column("body", .text)
            t.column("noteCount", .integer).notNull().indexed()
        }
        // The same indexes as `Post.indexes` (date is indexed above).
        try db.create(index: "post_blogName_date", on: "post", columns: ["blogName", "date"])
        try db.create(table: "postTag") { t in
            t.column("postID", .integer).notNull().references("post", onDelete: .cascade)
            t.column("tagID", .blob).notNull().references("tag", onDelete: .cascade).indexed()
            t.primaryKey(["postID", "tagID"])
        }
    }
    return queue
}

let benchTagNames = (0..<50).map { "tag\($0)" }
let benchTags = benchTagNames.map { Tag(id: UUID(), name: $0) }
let benchEpoch = Date(timeIntervalSinceReferenceDate: 790_000_000)

func benchPosts(_ count: Int, first: Int64 = 1) -> [Post] {
    (0..<Int64(count)).map { offset in
        let id = first + offset
        return Post(
            id: id, blogName: "blog\(id % 97)", kind: Post.Kind.allCases[Int(id % 8)],
            date: benchEpoch.addingTimeInterval(Double(id) * 37.5), summary: "Summary of post \(id): a few words about it",
            body: id % 4 == 0 ? nil : "The body of post \(id), somewhat longer than its summary, with text that compresses.",
            noteCount: Int(id % 1000), tagIDs: [benchTags[Int(id % 50)].id, benchTags[Int((id / 50) % 50)].id])
    }
}

func postRecord(_ post: Post) -> PostRecord {
    PostRecord(
        id: post.id, blogName: post.blogName, kind: post.kind.rawValue, date: post.date, summary: post.summary,
        body: post.body, noteCount: post.noteCount)
}

/// Fills a post database with `posts` and their tags in one transaction.
/// `posts.sqlite` in `directory`, made and filled with `posts`: the SQLite side of the
/// scenarios that open or hold a store of posts.
func makeFilledPostDatabase(_ posts: [Post], in directory: URL) throws -> URL {
    let url = directory.appendingPathComponent("posts.sqlite")
    try fillPostDatabase(try makePostDatabase(url), posts: posts)
    return url
}

func fillPostDatabase(_ queue: DatabaseQueue, posts: [Post]) throws {
    try queue.write { db in
        for tag in benchTags { try TagRecord(id: tag.id, name: tag.name).insert(db) }
        for post in posts {
            try postRecord(post).insert(db)
            for tagID in Set(post.tagIDs) { try PostTagRecord(postID: post.id, tagID: tagID).insert(db) }
        }
    }
}

/// Fills a GraphStore container with `posts` and their tags and saves.
func fillContainer(_ container: GraphContainer, posts: [Post]) throws {
    let context = container.newBackgroundContext()
    for tag in benchTags { context.insert(tag) }
    for post in posts { context.insert(post) }
    try context.save()
}

/// Scenario 9's crash: `records` one-post saves on the main context, each changing the summary
/// of the next of `posts` (stepping by a prime), which a journaled store holds only in its
/// journal until a snapshot is written.
func saveChangedPosts(_ container: GraphContainer, _ posts: inout [Post], records: Int) throws {
    for round in 0..<records {
        let index = (round * 7919) % posts.count
        posts[index].summary = "changed \(round)"
        container.mainContext.insert(posts[index])
        try container.mainContext.save()
    }
}

/// GRDB's synchronous write, callable from async code (where GRDB would pick its async overload).
func syncWrite<T>(_ writer: any DatabaseWriter, _ updates: (Database) throws -> T) throws -> T {
    try writer.write(updates)
}

/// GRDB's synchronous read, callable from async code.
func syncRead<T>(_ reader: any DatabaseReader, _ value: (Database) throws -> T) throws -> T {
    try reader.read(value)
}
