import ExampleModel
import Foundation
@testable import GraphStore
import GraphStoreTestSupport
import Testing

/// A context's own saves are never a conflict with itself, and a save that deletes a whole
/// entity runs the delete rules of references the same save writes.
@Suite struct OwnChangeConflictTests {
    /// A context that read every post deletes them and saves, then re-creates one (an undo).
    /// No other context touched the store: no conflict, and the post is stored, also past the
    /// number of deleted ids after which the context forgets what it read of them.
    @Test(arguments: [MergePolicy.error, .storeWins, .mergeByProperty], [4_000, 5_000])
    func recreatingAnObjectAfterALargeOwnDeleteIsNoConflict(policy: MergePolicy, count: Int) throws {
        let container = try Fixtures.inMemoryContainer()
        let posts = Fixtures.posts(count)
        container.mainContext.insert(contentsOf: posts)
        try container.mainContext.save()

        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        #expect(try context.fetch(FetchDescriptor<Post>()).count == count)
        for post in posts { context.delete(post) }
        try context.save()
        #expect(container.count(of: Post.self) == 0)

        context.insert(posts[0])
        try context.save()
        #expect(container.newBackgroundContext().model(Post.self, id: posts[0].id) != nil)
        try container.checkInvariants()
    }

    /// Deleting every tag and saving a note that names one of them, in one save: the note's
    /// `.nullify` relationship drops the id, as when the tags are deleted one by one.
    @Test(arguments: [true, false])
    func deletingAllTagsNullifiesAReferenceTheSameSaveWrites(wholeEntity: Bool) throws {
        let container = try Fixtures.inMemoryContainer()
        let tag = Tag(name: "swift")
        container.mainContext.insert(tag)
        try container.mainContext.save()

        let context = container.newBackgroundContext()
        let note = Note(text: "tagged", createdAt: Fixtures.epoch, tagIDs: [tag.id])
        context.insert(note)
        if wholeEntity {
            try context.delete(model: Tag.self)
        } else {
            context.delete(tag)
        }
        try context.save()

        let stored = try #require(container.newBackgroundContext().model(Note.self, id: note.id))
        #expect(stored.tagIDs.isEmpty)
        #expect(container.count(of: Tag.self) == 0)
        try container.checkInvariants()
    }
}
