import Foundation
import GraphStore

/// The example model shared by the examples, tests and benchmarks: Tumblr-style posts,
/// Vesper-style notes, and tags with unique names.

/// A tag with a unique name, shared by posts and notes.
public struct Tag: Entity, Hashable {
    public var id: UUID
    public var name: String

    public init(id: UUID = UUID(), name: String) {
        self.id = id
        self.name = name
    }

    public static var uniqueConstraints: [UniqueConstraint<Tag>] { [UniqueConstraint(\.name)] }
}

/// A Tumblr-style dashboard post, keyed by the server's id.
public struct Post: Entity, Hashable {
    /// The kind of post, as the Tumblr API names it; unknown kinds are kept as `.other`.
    public enum Kind: String, Codable, Sendable, Hashable, CaseIterable {
        case text, photo, quote, link, chat, audio, video, answer, other
    }

    /// The server's post id.
    public var id: Int64
    public var blogName: String
    public var kind: Kind
    public var date: Date
    public var summary: String
    public var body: String?
    public var noteCount: Int
    public var tagIDs: [Tag.ID]

    public init(
        id: Int64, blogName: String, kind: Kind = .text, date: Date, summary: String,
        body: String? = nil, noteCount: Int = 0, tagIDs: [Tag.ID] = []
    ) {
        self.id = id
        self.blogName = blogName
        self.kind = kind
        self.date = date
        self.summary = summary
        self.body = body
        self.noteCount = noteCount
        self.tagIDs = tagIDs
    }

    public static var relationships: [Relationship<Post>] { [.toMany(\.tagIDs, Tag.self, deleteRule: .nullify)] }

    /// Newest first, newest of one blog first, and by popularity.
    public static var indexes: [EntityIndex<Post>] {
        [EntityIndex(\.date), EntityIndex(\.blogName, \.date), EntityIndex(\.noteCount)]
    }
}

/// A Vesper-style note: text, dates, an archived flag and ordered tags.
public struct Note: Entity, Hashable {
    public var id: UUID
    public var text: String
    public var createdAt: Date
    public var modifiedAt: Date
    public var isArchived: Bool
    public var tagIDs: [Tag.ID]

    public init(
        id: UUID = UUID(), text: String, createdAt: Date = .now, modifiedAt: Date? = nil,
        isArchived: Bool = false, tagIDs: [Tag.ID] = []
    ) {
        self.id = id
        self.text = text
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt ?? createdAt
        self.isArchived = isArchived
        self.tagIDs = tagIDs
    }

    public static var relationships: [Relationship<Note>] { [.toMany(\.tagIDs, Tag.self, deleteRule: .nullify)] }
}

/// Every entity of the example model, for `GraphContainer(for:store:)`.
public let exampleModel: [any Entity.Type] = [Post.self, Note.self, Tag.self]
