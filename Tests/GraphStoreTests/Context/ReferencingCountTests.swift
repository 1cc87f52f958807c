import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// `fetchCount(_:referencing:of:)` takes the inverse index's count and corrects it by the
/// pending changes instead of collecting the referencing ids. Every answer must equal counting
/// the ids `fetchIdentifiers(_:referencing:of:)` returns, and a scan of what the context sees.
@Suite struct ReferencingCountTests {
    typealias Tag = ExampleModel.Tag

    /// An article that can reference one tag twice: as its topic and among its related tags.
    struct Article: Entity, Hashable {
        var id: Int
        var topicID: Tag.ID?
        var relatedIDs: [Tag.ID]

        static var relationships: [Relationship<Article>] {
            [.toOne(\.topicID, Tag.self), .toMany(\.relatedIDs, Tag.self)]
        }
    }

    /// The count three ways: the fast count, the ids, and a scan of every post the context sees.
    static func counts(_ context: GraphContext, _ tag: Tag.ID) throws -> (count: Int, ids: Int, scan: Int) {
        let scan = try context.fetch(FetchDescriptor<Post>()).filter { $0.tagIDs.contains(tag) }.count
        return (context.fetchCount(Post.self, referencing: tag, of: Tag.self),
                context.fetchIdentifiers(Post.self, referencing: tag, of: Tag.self).count, scan)
    }

    @Test(arguments: StoreKind.allCases)
    func pendingChangesCorrectTheIndexedCount(store: StoreKind) async throws {
        let tags = [Tag(name: "swift"), Tag(name: "sqlite")]
        let swift = tags[0].id, sqlite = tags[1].id
        // Posts 1…40: odd ones tagged swift, even ones sqlite, every fifth both.
        let posts = Fixtures.posts(40) { id in id % 5 == 0 ? [swift, sqlite] : [id % 2 == 1 ? swift : sqlite] }
        try await withContainer(store) { container in
            let main = container.mainContext
            main.insert(contentsOf: tags)
            main.insert(contentsOf: posts)
            try main.save()
            let saved = try Self.counts(main, swift)
            #expect(saved.count == 24 && saved.ids == 24 && saved.scan == 24)

            // Pending: a new tagged post, a tagged one untagged, a tagged one deleted, an
            // untagged one tagged, a tagged one changed but still tagged, one tagged twice.
            var new = Fixtures.posts(1, startingAt: 100)[0]
            new.tagIDs = [swift]
            main.insert(new)
            var untagged = posts[0]  // id 1: swift
            untagged.tagIDs = [sqlite]
            main.insert(untagged)
            main.delete(posts[2])  // id 3: swift
            var tagged = posts[1]  // id 2: sqlite
            tagged.tagIDs = [sqlite, swift]
            main.insert(tagged)
            var stillTagged = posts[4]  // id 5: both
            stillTagged.summary = "edited"
            main.insert(stillTagged)
            var twice = posts[6]  // id 7: swift
            twice.tagIDs = [swift, swift]
            main.insert(twice)
            let pending = try Self.counts(main, swift)
            #expect(pending.scan == 24)
            #expect(pending.count == pending.scan && pending.ids == pending.scan)
            let other = try Self.counts(main, sqlite)
            #expect(other.count == other.scan && other.ids == other.scan)

            // A child sees its parent's pending changes under its own.
            let child = main.newChildContext()
            var again = untagged
            again.tagIDs = [swift]
            child.insert(again)
            child.delete(new)
            let inChild = try Self.counts(child, swift)
            #expect(inChild.scan == 24)
            #expect(inChild.count == inChild.scan && inChild.ids == inChild.scan)

            try main.save()
            let afterSave = try Self.counts(main, swift)
            #expect(afterSave.count == 24 && afterSave.ids == 24 && afterSave.scan == 24)
            // A tag nothing references, and an id that is no tag at all.
            #expect(main.fetchCount(Post.self, referencing: UUID(), of: Tag.self) == 0)
        }
    }

    @Test func anObjectReferencingTheTargetTwiceCountsOnce() async throws {
        let tag = Tag(name: "swift")
        try await withContainer(.inMemory, for: [Article.self, Tag.self]) { container in
            let main = container.mainContext
            main.insert(tag)
            main.insert(Article(id: 1, topicID: tag.id, relatedIDs: [tag.id]))
            main.insert(Article(id: 2, topicID: nil, relatedIDs: [tag.id]))
            main.insert(Article(id: 3, topicID: tag.id, relatedIDs: []))
            main.insert(Article(id: 4, topicID: nil, relatedIDs: []))
            try main.save()
            #expect(main.fetchCount(Article.self, referencing: tag.id, of: Tag.self) == 3)
            main.insert(Article(id: 4, topicID: tag.id, relatedIDs: [tag.id]))
            main.insert(Article(id: 1, topicID: nil, relatedIDs: []))
            #expect(main.fetchCount(Article.self, referencing: tag.id, of: Tag.self) == 3)
            #expect(Set(main.fetchIdentifiers(Article.self, referencing: tag.id, of: Tag.self)) == [2, 3, 4])
        }
    }
}
