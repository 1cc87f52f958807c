import Foundation
import GraphStore
import GraphStoreTestSupport
import NewsCore
import Testing

@Suite struct NewsImportTests {
    static let feed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/world.rss")

    @Test func parsesTheSampleFeed() throws {
        let items = try RSSParser.items(in: Data(contentsOf: Self.feed))
        #expect(items.map(\.guid) == ["world-1", "world-2", nil])
        #expect(items[0].published == Date(timeIntervalSince1970: 1_031_391_751))
        #expect(items[1].published == Date(timeIntervalSince1970: 1_749_571_500))
        #expect(items[2].published == nil)
        #expect(items[0].summary == "Ships <b>return</b> to the harbour.")
        #expect(items[1].title == "Zürich café wins award — “best crème”")
    }

    @Test func importsOnABackgroundContextAndReportsAfterCommit() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let container = try GraphContainer(for: newsModel, store: .file(directory.file("news.json.gz")))
        let importer = NewsImporter(container: container)
        let region = try importer.region(named: "World", feedURL: Self.feed.path)
        let data = try Data(contentsOf: Self.feed)
        let first = try await importer.importFeed(data, into: region.id)
        #expect(first.imported == 3)
        #expect(first.articlesInRegion == 3)
        #expect(first.region.lastImported != nil)
        // Importing again upserts by guid: no duplicates.
        let second = try await importer.importFeed(data, into: region.id)
        #expect(second.articlesInRegion == 3)
        #expect(container.count(of: Article.self) == 3)
        #expect(container.mainContext.model(Article.self, id: "https://news.example/world/3")?.title == "An item without guid or date")
        // Deleting the region cascades to its articles.
        container.mainContext.delete(Region.self, id: region.id)
        try container.mainContext.save()
        #expect(container.count(of: Article.self) == 0)
        try container.checkInvariants()
        try await container.close()
    }

    @Test func aBadFeedIsAnErrorAndCommitsNothing() async throws {
        let container = try GraphContainer(for: newsModel, store: .inMemory)
        let importer = NewsImporter(container: container)
        let region = try importer.region(named: "Broken", feedURL: "-")
        let version = container.version
        await #expect(throws: RSSParser.Failure.self) {
            _ = try await importer.importFeed(Data("<rss><channel><item><title>oops</channel>".utf8), into: region.id)
        }
        #expect(container.version == version)
        #expect(container.count(of: Article.self) == 0)
        #expect(throws: RSSParser.Failure.self) { try RSSParser.items(in: Data()) }
        #expect(throws: RSSParser.Failure.self) { try RSSParser.items(in: Data("<a></b>".utf8)) }
    }
}
