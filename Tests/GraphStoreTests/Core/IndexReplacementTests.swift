import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A commit moves only the unique values and references of an updated object that differ,
/// object by object in whatever order the change set holds them. Values must still be able to
/// move between objects in one commit: names rotated through a cycle of tags, a deleted tag's
/// name taken by a new one, posts retagged while the tags they leave are renamed or deleted.
/// After every save the indexes must equal a rebuild from the tables.
@Suite struct IndexReplacementTests {
    typealias Tag = ExampleModel.Tag

    @Test(arguments: [StoreKind.inMemory, .file], [UInt64(1), 2, 3])
    func randomCommitsKeepUniqueValuesAndReferencesInStep(store: StoreKind, seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        var nextName = 0
        func freshName() -> String {
            nextName += 1
            return "tag\(nextName)"
        }
        var tags = (0..<12).map { _ in Tag(name: freshName()) }
        var posts = Fixtures.posts(60) { _ in
            (0..<Int.random(in: 0...3, using: &random)).map { _ in tags.randomElement(using: &random)!.id }
        }
        try await withContainer(store) { container in
            let main = container.mainContext
            main.insert(contentsOf: tags)
            main.insert(contentsOf: posts)
            try main.save()
            for _ in 0..<60 {
                // Rotate the names of a few tags: each takes the next one's name.
                let cycle = Array(tags.indices.shuffled(using: &random).prefix(Int.random(in: 2...5, using: &random)))
                let names = cycle.map { tags[$0].name }
                for (offset, index) in cycle.enumerated() {
                    tags[index].name = names[(offset + 1) % names.count]
                    main.insert(tags[index])
                }
                // Sometimes delete a tag outside the cycle and give its name to a new one.
                if Bool.random(using: &random), let victim = tags.indices.filter({ !cycle.contains($0) }).randomElement(using: &random) {
                    let gone = tags.remove(at: victim)
                    main.delete(gone)
                    let heir = Tag(name: gone.name)
                    tags.append(heir)
                    main.insert(heir)
                    // The delete rule (nullify) takes the tag out of its posts.
                    for index in posts.indices { posts[index].tagIDs.removeAll { $0 == gone.id } }
                }
                // Retag some posts, change another field of others, with repeated tags too.
                for index in posts.indices.shuffled(using: &random).prefix(8) {
                    if Bool.random(using: &random) {
                        posts[index].tagIDs = (0..<Int.random(in: 0...3, using: &random)).map { _ in tags.randomElement(using: &random)!.id }
                    } else {
                        posts[index].summary = "edited \(random.next())"
                    }
                    main.insert(posts[index])
                }
                try main.save()
                try container.checkInvariants()
                for tag in tags {
                    #expect(main.model(Tag.self, unique: \.name, tag.name)?.id == tag.id)
                    let referencing = Set(posts.filter { $0.tagIDs.contains(tag.id) }.map(\.id))
                    #expect(Set(main.fetchIdentifiers(Post.self, referencing: tag.id, of: Tag.self)) == referencing)
                    #expect(main.fetchCount(Post.self, referencing: tag.id, of: Tag.self) == referencing.count)
                }
            }
            #expect(try main.fetch(FetchDescriptor<Tag>()).count == tags.count)
        }
    }
}
