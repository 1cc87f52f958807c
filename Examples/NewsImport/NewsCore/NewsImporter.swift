import Foundation
import GraphStore

/// Imports a region's feed on a background context and reports on the main context only after
/// the import has committed.
public struct NewsImporter: Sendable {
    public let container: GraphContainer

    public init(container: GraphContainer) {
        self.container = container
    }

    /// What an import committed, as the main context sees it afterwards.
    public struct Completion: Sendable, Equatable {
        public var region: Region
        public var imported: Int
        public var articlesInRegion: Int
    }

    /// The region named `name`, created on the main context when missing.
    ///
    /// - Throws: `GraphStoreError` from saving.
    public func region(named name: String, feedURL: String) throws -> Region {
        let main = container.mainContext
        if let existing = try main.fetch(FetchDescriptor<Region>(predicate: #Predicate { $0.name == name })).first {
            return existing
        }
        main.insert(Region(name: name, feedURL: feedURL))
        try main.save()
        return try main.fetch(FetchDescriptor<Region>(predicate: #Predicate { $0.name == name })).first!
    }

    /// Parses `feed` and imports its items into the region with `regionID` on a new background
    /// context. Only the region's id crosses from the caller to the background task; the
    /// background context reads the region itself. The completion is built on the main context
    /// from an `onCommit` action, so it can never report an import that did not commit.
    ///
    /// - Throws: ``RSSParser/Failure`` for a bad feed, `GraphStoreError` from saving (nothing
    ///   is reported then).
    public func importFeed(_ feed: Data, into regionID: Region.ID) async throws -> Completion {
        let items = try RSSParser.items(in: feed)
        let container = container
        let committed = Committed()
        try await container.performBackgroundTask { context in
            context.name = "news import"
            guard var region = context.model(Region.self, id: regionID) else {
                throw GraphStoreError.danglingReference(entity: "import", id: "-", relationship: "region", targetEntity: "Region", targetID: "\(regionID)")
            }
            for item in items {
                context.insert(Article(
                    id: item.guid ?? item.link, regionID: region.id, title: item.title, link: item.link,
                    published: item.published, summary: item.summary))
            }
            region.lastImported = Date()
            context.insert(region)
            context.onCommit { committed.mark() }
            try context.save()
        }
        precondition(committed.isMarked, "onCommit runs before save() returns")
        let main = container.mainContext
        let region = main.model(Region.self, id: regionID)!
        return Completion(
            region: region, imported: items.count,
            articlesInRegion: main.fetchCount(Article.self, referencing: regionID, of: Region.self))
    }
}


/// A flag set by an `onCommit` action.
private final class Committed: Sendable {
    private let flag = Guarded(false)
    func mark() { flag.withLock { $0 = true } }
    var isMarked: Bool { flag.withLock { $0 } }
}
