import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Opening a store builds the tables and the indexes on two threads for large graphs; the
/// problem reported must be the one building them in order meets first, at any size.
@Suite struct GraphLoadingTests {
    typealias Tag = ExampleModel.Tag

    static let schema = Schema(exampleModel)

    static func tags(_ count: Int) -> [Tag] {
        (0..<count).map { Tag(id: UUID(), name: "tag \($0)") }
    }

    static func load(_ tags: [Tag], posts: [Post] = []) -> Result<GraphVersion, LoadProblem> {
        var objects: [[any Entity]] = schema.entities.map { _ in [] }
        objects[schema.index(of: Tag.self)] = tags
        objects[schema.index(of: Post.self)] = posts
        do {
            return .success(try GraphVersion.loaded(objects, number: 7, schema: schema))
        } catch {
            return .failure(error)
        }
    }

    /// Small graphs load on one thread, large ones on two.
    @Test(arguments: [300, 12_000])
    func theFirstProblemInOrderIsReported(count: Int) throws {
        let late = count - 10, early = count / 3
        // A duplicate id after a duplicate name: the name is reported.
        var tags = Self.tags(count)
        tags[late].id = tags[0].id
        tags[early].name = tags[1].name
        guard case .failure(let nameFirst) = Self.load(tags) else { Issue.record("loaded"); return }
        #expect(nameFirst.id == tags[early].id.uuidString && nameFirst.message.contains("name tag 1 is also held by"))

        // A duplicate id before a duplicate name: the id is reported.
        tags = Self.tags(count)
        tags[early].id = tags[0].id
        tags[late].name = tags[1].name
        guard case .failure(let idFirst) = Self.load(tags) else { Issue.record("loaded"); return }
        #expect(idFirst.id == tags[0].id.uuidString && idFirst.message == "the id appears twice")

        // Both on one object: the id check comes first.
        tags = Self.tags(count)
        tags[late] = tags[0]
        guard case .failure(let same) = Self.load(tags) else { Issue.record("loaded"); return }
        #expect(same.message == "the id appears twice")
    }

    @Test(arguments: [300, 12_000])
    func aGoodGraphLoadsWithItsIndexes(count: Int) throws {
        let tags = Self.tags(count)
        let posts = Fixtures.posts(count, tags: [tags[3].id, tags[5].id])
        let version = try Self.load(tags, posts: posts).get()
        #expect(version.number == 7)
        #expect(version.tables[Self.schema.index(of: Post.self)].count == count)
        #expect(version.tables.map(\.count).reduce(0, +) == 2 * count)
        try version.checkInvariants(schema: Self.schema)

        // A reference to a tag that is not in the file.
        guard case .failure(let dangling) = Self.load(Array(tags.dropFirst(4)), posts: posts) else { Issue.record("loaded"); return }
        #expect(dangling.entity == "Post" && dangling.message.contains("references Tag \(tags[3].id)"))
    }
}
