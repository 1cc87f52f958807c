import ExampleModel
import Foundation
import HashTreeCollections
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

    /// Above ``TableBuilder/parallelThreshold`` a table is built in two halves split on a hash
    /// bit, from ids read once up front: the result holds the same ids in the same order (so
    /// the same trie) as one built by inserting every object in order.
    @Test func aTableBuiltInHalvesMatchesOneBuiltByInserts() throws {
        let tags = Self.tags(TableBuilder.parallelThreshold + 3_000)
        let version = try Self.load(tags).get()
        var reference = TreeDictionary<ObjectKey, StoredObject>()
        for tag in tags { reference[ObjectKey(tag.id)] = StoredObject(value: tag, version: 7) }
        let table = version.tables[Self.schema.index(of: Tag.self)]
        #expect(table.count == tags.count)
        #expect(Array(table.keys) == Array(reference.keys))
        #expect(tags.allSatisfy { tag in (table[ObjectKey(tag.id)]?.value as? Tag).map { $0.id == tag.id && $0.name == tag.name } ?? false })
        try version.checkInvariants(schema: Self.schema)
    }

    /// A duplicate id in each half of a table built in two halves: the one met first in order
    /// is reported, whichever half holds it.
    @Test func theFirstDuplicateIdOfEitherHalfIsReported() throws {
        let count = TableBuilder.parallelThreshold + 3_000
        let tags = Self.tags(count)
        func half(_ position: Int) -> Int { TableBuilder.half(of: ObjectKey(tags[position].id)) }
        // An original in each half, among the first objects.
        let original = [try #require((0..<100).first { half($0) == 0 }), try #require((0..<100).first { half($0) == 1 })]
        for (firstHalf, early, late) in [(0, count / 2, count - 10), (1, count / 2, count - 10), (0, count - 20, count - 10)] {
            var copy = tags
            copy[early].id = tags[original[firstHalf]].id
            copy[late].id = tags[original[1 - firstHalf]].id
            guard case .failure(let problem) = Self.load(copy) else { Issue.record("loaded"); continue }
            #expect(problem.id == tags[original[firstHalf]].id.uuidString && problem.message == "the id appears twice")
        }
    }
}
