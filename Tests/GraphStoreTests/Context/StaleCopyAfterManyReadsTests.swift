import ExampleModel
import Foundation
@testable import GraphStore
import GraphStoreTestSupport
import Testing

/// A copy held while another context deletes the object stays a conflict however many ids the
/// context looks up in the meantime. The per-id read records are bounded, but only by dropping
/// what changes no base: ids read while absent, or deleted by the context itself, that have no
/// object now. The record of an object the context read (or saved, or read through its
/// parent's pending change) is kept: without it, saving the copy would be based on "no object"
/// and bring the deleted object back.
@Suite struct StaleCopyAfterManyReadsTests {
    static let post = Post(id: 1, blogName: "staff", date: Fixtures.epoch, summary: "original")
    /// Past the record limit of an entity with no stored objects, so that the lookups prune.
    static let lookups = EntityReads.limit(storedCount: 0) + 104

    /// The policies under which a save must keep another context's deletion.
    static let policies: [MergePolicy] = [.error, .storeWins, .mergeByProperty]

    /// Seeds the post and returns a background context of `policy`.
    static func setUp(_ container: GraphContainer, policy: MergePolicy) throws -> GraphContext {
        let seed = container.newBackgroundContext()
        seed.insert(post)
        try seed.save()
        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        return context
    }

    /// Another context deletes the post.
    static func deleteElsewhere(_ container: GraphContainer) throws {
        let other = container.newBackgroundContext()
        other.delete(Post.self, id: post.id)
        try other.save()
    }

    /// Looks up `count` ids that name no post, as a find-or-create import does.
    static func lookUpAbsentIDs(in context: GraphContext, count: Int = lookups, from first: Int64 = 1_000) {
        var found = 0
        for id in first..<first + Int64(count) where context.model(Post.self, id: id) != nil { found += 1 }
        #expect(found == 0)
    }

    /// Saving `context` keeps the deletion: `.error` throws a conflict naming the post, the
    /// other policies save and leave it deleted.
    static func expectSaveKeepsTheDeletion(
        _ context: GraphContext, policy: MergePolicy, container: GraphContainer, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        if policy == .error {
            #expect(sourceLocation: sourceLocation) {
                try context.save()
            } throws: { error in
                guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
                return conflicts.map(\.id) == ["\(post.id)"] && conflicts[0].kind == .deletedElsewhere
            }
        } else {
            try context.save()
        }
        #expect(
            container.newBackgroundContext().model(Post.self, id: post.id) == nil,
            "under \(policy) the post another context deleted came back", sourceLocation: sourceLocation)
        try container.checkInvariants()
    }

    // MARK: - A top-level context

    /// The reviewer's case: a copy read, the post deleted elsewhere, then thousands of lookups
    /// of new ids before the copy is saved.
    @Test(arguments: policies)
    func aCopyReadBeforeADeletionElsewhereConflictsAfterManyLookups(policy: MergePolicy) throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let importer = try Self.setUp(container, policy: policy)
        var copy = try #require(importer.model(Post.self, id: Self.post.id))
        try Self.deleteElsewhere(container)

        Self.lookUpAbsentIDs(in: importer)

        copy.summary = "edited from a stale copy"
        importer.insert(copy)
        try Self.expectSaveKeepsTheDeletion(importer, policy: policy, container: container)
    }

    /// The same, for a copy read by a fetch with a predicate (one record per returned id).
    @Test(arguments: policies)
    func aCopyFetchedBeforeADeletionElsewhereConflictsAfterManyLookups(policy: MergePolicy) throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let importer = try Self.setUp(container, policy: policy)
        var copy = try #require(try importer.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.blogName == "staff" })).first)
        try Self.deleteElsewhere(container)

        Self.lookUpAbsentIDs(in: importer)

        copy.summary = "edited from a stale copy"
        importer.insert(copy)
        try Self.expectSaveKeepsTheDeletion(importer, policy: policy, container: container)
    }

    /// A copy the context saved itself is what it last read: once deleted elsewhere, saving
    /// it again is a conflict, lookups in between or not.
    @Test(arguments: policies)
    func aCopySavedBeforeADeletionElsewhereConflictsAfterManyLookups(policy: MergePolicy) throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let editor = try Self.setUp(container, policy: policy)
        var copy = try #require(editor.model(Post.self, id: Self.post.id))
        copy.summary = "saved by the editor"
        editor.insert(copy)
        try editor.save()
        try Self.deleteElsewhere(container)

        Self.lookUpAbsentIDs(in: editor)

        copy.summary = "edited again from a stale copy"
        editor.insert(copy)
        try Self.expectSaveKeepsTheDeletion(editor, policy: policy, container: container)
    }

    /// What the pruning may drop changes no base: re-inserting a post the context deleted
    /// itself, after the lookups, is no conflict.
    @Test func reinsertingAnObjectDeletedByTheContextItselfAfterManyLookupsSaves() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let editor = try Self.setUp(container, policy: .error)
        let copy = try #require(editor.model(Post.self, id: Self.post.id))
        editor.delete(copy)
        try editor.save()

        Self.lookUpAbsentIDs(in: editor)

        editor.insert(copy)
        try editor.save()
        #expect(container.newBackgroundContext().model(Post.self, id: Self.post.id) == copy)
    }

    // MARK: - A child context

    /// The editor inserts the post without saving and a child reads it through that change;
    /// returns the child and its copy.
    static func draftReadInAChild(of editor: GraphContext) throws -> (sheet: GraphContext, copy: Post) {
        editor.insert(post)
        let sheet = editor.newChildContext()
        return (sheet, try #require(sheet.model(Post.self, id: post.id)))
    }

    /// A child's copy read through its parent's change stays based on what the parent's save
    /// wrote after the parent settles thousands of other ids (here: deletions of ids that name
    /// no post, dropped by a rollback).
    @Test(arguments: policies)
    func aChildsCopyConflictsAfterItsParentSettlesManyIDs(policy: MergePolicy) throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let editor = container.newBackgroundContext()
        editor.mergePolicy = policy
        var (sheet, copy) = try Self.draftReadInAChild(of: editor)
        try editor.save()
        try Self.deleteElsewhere(container)

        for id in Int64(1_000)..<1_000 + Int64(Self.lookups) { editor.delete(Post.self, id: id) }
        editor.rollback()

        copy.summary = "edited in the sheet from a stale copy"
        sheet.insert(copy)
        try sheet.save()
        try Self.expectSaveKeepsTheDeletion(editor, policy: policy, container: container)
    }

    /// A child's record of a read through its parent's pending change survives the child's own
    /// lookups, although the store has no object at that id when they prune.
    @Test(arguments: policies)
    func aChildsCopyConflictsAfterTheChildLooksUpManyIDs(policy: MergePolicy) throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let editor = container.newBackgroundContext()
        editor.mergePolicy = policy
        var (sheet, copy) = try Self.draftReadInAChild(of: editor)

        Self.lookUpAbsentIDs(in: sheet)

        try editor.save()
        try Self.deleteElsewhere(container)
        copy.summary = "edited in the sheet from a stale copy"
        sheet.insert(copy)
        try sheet.save()
        try Self.expectSaveKeepsTheDeletion(editor, policy: policy, container: container)
    }

    // MARK: - Memory

    /// Lookups of ever new absent ids keep the records bounded by the entity's limit.
    @Test func recordsOfIDsReadAbsentStayBounded() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let importer = container.newBackgroundContext()
        let entity = container.core.schema.index(of: Post.self)
        var most = 0
        for round in 0..<10 {
            Self.lookUpAbsentIDs(in: importer, count: 2_000, from: Int64(round * 2_000 + 1_000))
            most = max(most, importer.withState { $0.reads[entity].count })
        }
        #expect(most <= EntityReads.limit(storedCount: 0))
    }

    /// The records of objects read and then deleted elsewhere are kept through pruning, and
    /// the records of absent ids then accumulate until they double what was kept: lookups do
    /// not each walk every record. A fetch of every object forgets them all.
    @Test func recordsOfObjectsReadAreKeptAndPruningWaitsForThemToDouble() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let reader = container.newBackgroundContext(), writer = container.newBackgroundContext()
        let entity = container.core.schema.index(of: Post.self)
        let held = EntityReads.limit(storedCount: 0) + 904
        let posts = Fixtures.posts(held, startingAt: 1)
        writer.insert(contentsOf: posts)
        try writer.save()
        for post in posts { _ = reader.model(Post.self, id: post.id) }
        try writer.delete(model: Post.self)
        try writer.save()

        // The first lookup prunes (the entity holds no object now): every held record stays,
        // the absent id's goes.
        Self.lookUpAbsentIDs(in: reader, count: 1, from: 1_000_000)
        #expect(reader.withState { $0.reads[entity].count } == held)
        // Then no lookup prunes until the records pass twice what that pruning kept.
        Self.lookUpAbsentIDs(in: reader, count: held, from: 1_000_001)
        #expect(reader.withState { $0.reads[entity].count } == 2 * held)
        var most = 0
        for round in 0..<4 {
            Self.lookUpAbsentIDs(in: reader, count: held, from: Int64(2_000_000 + round * held))
            most = max(most, reader.withState { $0.reads[entity].count })
        }
        #expect(most <= 2 * held)
        let kept = reader.withState { state in
            posts.filter { post in
                if case .some(.some) = state.reads[entity].record(for: ObjectKey(post.id))?.storedObject { true } else { false }
            }.count
        }
        #expect(kept == held)

        _ = try reader.fetch(FetchDescriptor<Post>())
        #expect(reader.withState { $0.reads[entity].count } == 0)
    }

    /// What a parent's rollbacks settle for its children, of ids that name no object, stays
    /// bounded by the entity's limit; what its save wrote is kept.
    @Test func childBasesOfIDsWithNoObjectStayBounded() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let editor = container.newBackgroundContext()
        let entity = container.core.schema.index(of: Post.self)
        let (sheet, _) = try Self.draftReadInAChild(of: editor)
        try editor.save()
        try Self.deleteElsewhere(container)
        var most = 0
        for round in 0..<10 {
            for id in Int64(round * 2_000 + 1_000)..<Int64(round * 2_000 + 3_000) { editor.delete(Post.self, id: id) }
            editor.rollback()
            most = max(most, editor.withState { $0.childBases[entity].count })
        }
        #expect(most <= EntityReads.limit(storedCount: 0))
        #expect(editor.withState { $0.childBases[entity].base(for: ObjectKey(Self.post.id), seen: 0) } != nil)
        withExtendedLifetime(sheet) {}
    }
}
