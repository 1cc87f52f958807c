import Foundation
import GraphStore

/// A region with its own feed of articles.
public struct Region: Entity, Hashable {
    public var id: UUID
    public var name: String
    public var feedURL: String
    public var lastImported: Date?

    public init(id: UUID = UUID(), name: String, feedURL: String, lastImported: Date? = nil) {
        self.id = id
        self.name = name
        self.feedURL = feedURL
        self.lastImported = lastImported
    }

    public static var uniqueConstraints: [UniqueConstraint<Region>] { [UniqueConstraint(\.name)] }
}

/// An article of a region's feed, keyed by the feed item's guid (or link).
public struct Article: Entity, Hashable {
    public var id: String
    public var regionID: Region.ID?
    public var title: String
    public var link: String
    public var published: Date?
    public var summary: String

    public init(id: String, regionID: Region.ID?, title: String, link: String, published: Date?, summary: String) {
        self.id = id
        self.regionID = regionID
        self.title = title
        self.link = link
        self.published = published
        self.summary = summary
    }

    /// Deleting a region deletes its articles.
    public static var relationships: [Relationship<Article>] { [.toOne(\.regionID, Region.self, deleteRule: .cascade)] }
}

/// Every entity of the news example.
public let newsModel: [any Entity.Type] = [Region.self, Article.self]
