import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

@testable import GraphStoreCoding

/// A merge rewrites an object through its `Codable` form: `.mergeByProperty` on a conflict, and
/// a unique constraint moving incoming values to the existing object's id. Every value must come
/// out `==` to the one saved: a `URL` with a base kept its base only in the store's own coders,
/// while the merges turned it into its absolute string, another URL.
@Suite struct ExactMergeTests {
    typealias Link = RelativeURLModels.V1

    /// A link with a unique name, for the identity merge.
    struct Bookmark: Entity, Equatable {
        var id: Int
        var name: String
        var url: URL
        var mirrors: [String: URL]
        var added: Date
        static var uniqueConstraints: [UniqueConstraint<Bookmark>] { [UniqueConstraint(\.name)] }
    }

    @Test(arguments: StoreKind.allCases)
    func mergeByPropertyKeepsURLsWithTheirBase(store: StoreKind) async throws {
        try await withContainer(store, for: [Link.self]) { container in
            let links = RelativeURLModels.links
            let seeding = container.newBackgroundContext()
            seeding.insert(contentsOf: links)
            try seeding.save()
            let mine = container.newBackgroundContext()
            mine.mergePolicy = .mergeByProperty
            let theirs = container.newBackgroundContext()
            var expected: [Link] = []
            for link in links {
                var myCopy = try #require(mine.model(Link.self, id: link.id))
                var theirCopy = try #require(theirs.model(Link.self, id: link.id))
                // Theirs changes one property, mine another: the merge keeps both, and every
                // property it copies from either side or keeps from the store.
                theirCopy.links.append(RelativeURLModels.relative)
                theirs.insert(theirCopy)
                myCopy.place.mirror = RelativeURLModels.urls[(link.id + 2) % RelativeURLModels.urls.count]
                mine.insert(myCopy)
                var merged = link
                merged.links = theirCopy.links
                merged.place = myCopy.place
                expected.append(merged)
            }
            try theirs.save()
            try mine.save()
            let stored = try container.newBackgroundContext().fetch(FetchDescriptor<Link>()).sorted { $0.id < $1.id }
            #expect(stored == expected)
            #expect(stored.first?.link.baseURL == RelativeURLModels.base)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anIdentityMergeKeepsURLsWithTheirBaseAndDatesToTheBit(store: StoreKind) async throws {
        try await withContainer(store, for: [Bookmark.self]) { container in
            let seeding = container.newBackgroundContext()
            let added = Date(timeIntervalSinceReferenceDate: 0.1 + 0.2)
            seeding.insert(Bookmark(id: 1, name: "docs", url: URL(string: "https://old.example/")!, mirrors: [:], added: added))
            try seeding.save()
            let context = container.newBackgroundContext()
            context.mergePolicy = .contextWins
            let incoming = Bookmark(
                id: 2, name: "docs", url: RelativeURLModels.relative,
                mirrors: ["a": RelativeURLModels.urls[1], "b": RelativeURLModels.urls[2]], added: added.addingTimeInterval(1e-9))
            context.insert(incoming)
            try context.save()
            let stored = try #require(container.newBackgroundContext().model(Bookmark.self, id: 1))
            var expected = incoming
            expected.id = 1
            #expect(stored == expected)
            #expect(stored.url.baseURL == RelativeURLModels.base)
            #expect(container.count(of: Bookmark.self) == 1)
        }
    }

    /// A property mine did not change is compared as a value: a dictionary whose entries mine
    /// holds in another order (another capacity) than its base is unchanged, so the store's
    /// newer value stays.
    @Test func aDictionaryInAnotherOrderIsNotAChange() throws {
        let container = try GraphContainer(for: [Bookmark.self], store: .inMemory)
        let mirrors = Dictionary(uniqueKeysWithValues: (0..<40).map { ("m\($0)", URL(string: "https://m\($0).example/")!) })
        let seeding = container.newBackgroundContext()
        seeding.insert(Bookmark(id: 1, name: "docs", url: RelativeURLModels.relative, mirrors: mirrors, added: Date(timeIntervalSinceReferenceDate: 0)))
        try seeding.save()
        let mine = container.newBackgroundContext()
        mine.mergePolicy = .mergeByProperty
        var myCopy = try #require(mine.model(Bookmark.self, id: 1))
        let theirs = container.newBackgroundContext()
        var theirCopy = try #require(theirs.model(Bookmark.self, id: 1))
        theirCopy.mirrors["new"] = URL(string: "https://new.example/")!
        theirs.insert(theirCopy)
        try theirs.save()
        var reordered = [String: URL](minimumCapacity: 4_096)
        for (key, value) in myCopy.mirrors { reordered[key] = value }
        // The test means something only if the two orders differ.
        let reorderedText = try FastJSONEncoder.encode(reordered), originalText = try FastJSONEncoder.encode(myCopy.mirrors)
        try #require(reorderedText != originalText)
        myCopy.mirrors = reordered
        myCopy.name = "documentation"
        mine.insert(myCopy)
        try mine.save()
        let stored = try #require(container.newBackgroundContext().model(Bookmark.self, id: 1))
        #expect(stored.name == "documentation")
        #expect(stored.mirrors == theirCopy.mirrors)
    }
}
