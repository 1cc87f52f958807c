import DashboardCore
import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

private typealias Tag = ExampleModel.Tag

@Suite struct DashboardImportTests {
    static let fixtureNames = ["legacy-text", "legacy-photo", "npf-text"]

    static func fixture(_ name: String) throws -> Data {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name).json")
        return try Data(contentsOf: url)
    }

    @Test func everyGeneratedDemoPageImports() async throws {
        let container = try Fixtures.inMemoryContainer()
        let pages = DemoPages.pages(count: 4, postsPerPage: 50)
        let parsed = try pages.map(TumblrPage.parse)
        let report = try await DashboardImporter(container: container).importPages(parsed)
        let expected = parsed.reduce(0) { $0 + $1.posts.count }
        #expect(report.posts == expected)
        #expect(report.skipped == 200 - expected)
        #expect(report.skipped > 0, "the generator includes broken posts")
        #expect(container.count(of: Post.self) == expected)
        let tagNames = Set(parsed.flatMap { $0.posts.flatMap(\.tags) })
        #expect(Set(try container.mainContext.fetch(FetchDescriptor<Tag>()).map(\.name)) == tagNames)
        try container.checkInvariants()
    }

    @Test func importingTwiceGivesNoDuplicates() async throws {
        let container = try Fixtures.inMemoryContainer()
        let importer = DashboardImporter(container: container)
        let pages = try DemoPages.pages(count: 3, postsPerPage: 40).map(TumblrPage.parse)
        _ = try await importer.importPages(pages)
        let posts = container.count(of: Post.self), tags = container.count(of: Tag.self)
        _ = try await importer.importPages(pages)
        #expect(container.count(of: Post.self) == posts)
        #expect(container.count(of: Tag.self) == tags)
        try container.checkInvariants()
    }

    @Test func concurrentPagesShareTags() async throws {
        let container = try Fixtures.inMemoryContainer()
        let importer = DashboardImporter(container: container)
        let pages = try DemoPages.pages(count: 8, postsPerPage: 30).map(TumblrPage.parse)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for page in pages { group.addTask { _ = try await importer.importPage(page) } }
            try await group.waitForAll()
        }
        let names = try container.mainContext.fetch(FetchDescriptor<Tag>()).map(\.name)
        #expect(names.count == Set(names).count)
        #expect(Set(names) == Set(pages.flatMap { $0.posts.flatMap(\.tags) }))
        try container.checkInvariants()
    }

    @Test(arguments: fixtureNames) func realResponsesImport(_ name: String) async throws {
        let page = try TumblrPage.parse(Self.fixture(name))
        #expect(!page.posts.isEmpty)
        let container = try Fixtures.inMemoryContainer()
        let importer = DashboardImporter(container: container)
        try await importer.importPage(page)
        for post in page.posts {
            let stored = try #require(container.mainContext.model(Post.self, id: post.id))
            #expect(stored.blogName == post.blogName)
            #expect(stored.date == Date(timeIntervalSince1970: TimeInterval(post.timestamp)))
            #expect(importer.tagNames(of: stored) == post.tags)
        }
    }

    @Test func legacyTextPostFields() throws {
        let page = try TumblrPage.parse(Self.fixture("legacy-text"))
        let post = try #require(page.posts.first)
        #expect(post.id == 43_330_462_503)
        #expect(post.type == "text")
        #expect(post.tags == ["Projects"])
        #expect(post.timestamp == 1_265_748_300)
        #expect(post.summary == "A snow day means...")
    }

    @Test func unknownTypesAndMissingFieldsAreHandled() throws {
        let body = #"{"response": {"posts": [{"id": 5, "type": "hologram"}, {"type": "text"}, {"id_string": "77", "blog_name": "b", "tags": "not-an-array"}]}}"#
        let page = try TumblrPage.parse(Data(body.utf8))
        #expect(page.posts.map(\.id) == [5, 77])
        #expect(page.skipped == 1)
        #expect(page.posts[0].post(tagIDs: []).kind == .other)
        #expect(page.posts[1].tags.isEmpty)
        #expect(page.posts[1].summary.isEmpty)
    }

    @Test func notAResponseIsAnError() {
        #expect(throws: DecodingError.self) { try TumblrPage.parse(Data("[1, 2, 3]".utf8)) }
    }
}
