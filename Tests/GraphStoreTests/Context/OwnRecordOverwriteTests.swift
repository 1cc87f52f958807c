import ExampleModel
import Foundation
@testable import GraphStore
import GraphStoreTestSupport
import Synchronization
import Testing

/// A change `.storeWins` dropped is not the context's write, even where a delete rule of the
/// same save rewrote the object: the rule rewrote the version another context saved, which
/// this context never saw, so its held copy, changed and saved, is a conflict.
///
/// Before, a dropped change still counted as the context's own at its id: the save settled the
/// rule's rewrite of the other context's version as what the context knew (in ``GraphContext``'s
/// settling of an entity it read, and in ``SavedChanges`` for one it had only saved), and the
/// held copy, saved again under `.error`, overwrote that version without a conflict.
@Suite struct DroppedChangeRuleRewriteTests {
    /// How the context came to know the note before the other context saved it.
    enum Known: CaseIterable, Sendable {
        /// It looked the note up.
        case read
        /// It saved the note itself and read nothing of the entity.
        case saved
    }

    @Test(arguments: Known.allCases, [false, true])
    func droppedChangeThenNullifyKeepsHeldCopyConflicting(known: Known, dropsDeletion: Bool) throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let tag = Tag(name: "t")
        let note = Note(text: "v0", createdAt: Fixtures.epoch, tagIDs: [tag.id])
        let a = container.newBackgroundContext()
        var held: Note
        switch known {
        case .read:
            let seeder = container.newBackgroundContext()
            seeder.insert(tag)
            seeder.insert(note)
            try seeder.save()
            held = try #require(a.model(Note.self, id: note.id))
        case .saved:
            a.insert(tag)
            a.insert(note)
            try a.save()
            held = note
        }

        let b = container.newBackgroundContext()
        var fromB = try #require(b.model(Note.self, id: note.id))
        fromB.text = "from B"
        b.insert(fromB)
        try b.save()

        // A's change of the note conflicts and is dropped; deleting the tag nullifies the
        // note's reference, rewriting B's version in the same save.
        a.mergePolicy = .storeWins
        held.isArchived = true
        if dropsDeletion { a.delete(held) } else { a.insert(held) }
        a.delete(tag)
        try a.save()
        let afterDrop = try #require(container.newBackgroundContext().model(Note.self, id: note.id))
        #expect(afterDrop.text == "from B" && afterDrop.tagIDs.isEmpty && !afterDrop.isArchived)

        // A's copy never saw B's text.
        a.mergePolicy = .error
        held.tagIDs = []
        a.insert(held)
        #expect(throws: GraphStoreError.self) { try a.save() }
        #expect(container.newBackgroundContext().model(Note.self, id: note.id)?.text == "from B")

        // Reading the note again takes what the rule left as the base.
        a.rollback()
        var fresh = try #require(a.model(Note.self, id: note.id))
        fresh.isArchived = true
        a.insert(fresh)
        try a.save()
        #expect(container.newBackgroundContext().model(Note.self, id: note.id) == fresh)
    }

    /// Where the rule rewrote the version the context knew (nobody else saved the note), the
    /// rewrite is remembered under `.storeWins` too: the held copy, saved again, is no conflict.
    @Test func ruleRewriteOfKnownVersionIsRemembered() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let tag = Tag(name: "t")
        let note = Note(text: "v0", createdAt: Fixtures.epoch, tagIDs: [tag.id])
        let seeder = container.newBackgroundContext()
        seeder.insert(tag)
        seeder.insert(note)
        try seeder.save()
        let a = container.newBackgroundContext()
        a.mergePolicy = .storeWins
        var held = try #require(a.model(Note.self, id: note.id))
        a.delete(tag)
        try a.save()
        a.mergePolicy = .error
        held.tagIDs = []
        held.isArchived = true
        a.insert(held)
        try a.save()
        #expect(container.newBackgroundContext().model(Note.self, id: note.id)?.isArchived == true)
    }
}

/// A key whose comparison blocks once when armed: it holds a fetch that sorts or filters by it
/// after the fetch read the table and before it records what it read.
private struct GateKey: Codable, Sendable, Hashable, Comparable {
    var value: Int
    static let armed = Atomic<Bool>(false)
    static let entered = DispatchSemaphore(value: 0)
    static let release = DispatchSemaphore(value: 0)

    private static func gate() {
        guard armed.exchange(false, ordering: .sequentiallyConsistent) else { return }
        entered.signal()
        release.wait()
    }

    static func < (a: GateKey, b: GateKey) -> Bool {
        gate()
        return a.value < b.value
    }

    static func == (a: GateKey, b: GateKey) -> Bool {
        gate()
        return a.value == b.value
    }
}

private struct Gated: Entity, Hashable {
    var id: Int
    var token: Int
    var key: GateKey
}

/// A fetch reads the table without the context's lock and records what it read afterwards: a
/// save of the context, and a read after it, can come in between. What the fetch read is then
/// older than what the context knows, and must not replace it: the context's next change does
/// not conflict with its own save.
///
/// Before, only a record a save left was kept over such a fetch's: once the context read the
/// id again (or fetched every object) after its save, the older fetch replaced that newer
/// record (or, for a fetch of every object, the newer table) with the version before the save,
/// and the context's next change conflicted with its own save: `.error` threw, and `.storeWins`
/// returned from a save that silently dropped the change.
@Suite(.serialized) struct LateFetchRecordTests {
    enum Later: CaseIterable, Sendable {
        /// Nothing between the save and the fetch's recording.
        case none
        /// The context looks the id up again.
        case model
        /// The context fetches every object again.
        case fetchAll
    }

    /// Runs `fetch` on another thread until it blocks in a comparison, after it read the table.
    private static func startBlockedFetch(_ fetch: @escaping @Sendable () throws -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        GateKey.armed.store(true, ordering: .sequentiallyConsistent)
        Thread.detachNewThread {
            #expect(throws: Never.self) { try fetch() }
            done.signal()
        }
        GateKey.entered.wait()
        return done
    }

    private static func descriptor(withPredicate: Bool) -> FetchDescriptor<Gated> {
        if withPredicate {
            let two = GateKey(value: 2)
            return FetchDescriptor<Gated>(predicate: #Predicate { $0.key != two })
        }
        return FetchDescriptor<Gated>(sortBy: [SortDescriptor(\.key)])
    }

    /// Saves ids 1 and 2, reads 1, and starts a fetch that blocks after reading that table;
    /// then `change` is saved, `later` read, and the fetch finishes.
    private static func race(
        _ context: GraphContext, later: Later, withPredicate: Bool, change: (GraphContext) -> Void
    ) throws {
        context.insert(Gated(id: 1, token: 0, key: GateKey(value: 1)))
        context.insert(Gated(id: 2, token: 0, key: GateKey(value: 2)))
        try context.save()
        _ = context.model(Gated.self, id: 1)
        let descriptor = Self.descriptor(withPredicate: withPredicate)
        let done = Self.startBlockedFetch { _ = try context.fetch(descriptor) }
        change(context)
        try context.save()
        switch later {
        case .none: break
        case .model: _ = context.model(Gated.self, id: 1)
        case .fetchAll: _ = try context.fetch(FetchDescriptor<Gated>())
        }
        GateKey.release.signal()
        done.wait()
    }

    @Test(arguments: Later.allCases, [false, true])
    func olderFetchRecordingLastKeepsOwnSave(later: Later, withPredicate: Bool) throws {
        let container = try GraphContainer(for: [Gated.self], store: .inMemory)
        let context = container.newBackgroundContext()
        try Self.race(context, later: later, withPredicate: withPredicate) { $0.insert(Gated(id: 1, token: 1, key: GateKey(value: 1))) }
        context.insert(Gated(id: 1, token: 2, key: GateKey(value: 1)))
        try context.save()
        #expect(container.newBackgroundContext().model(Gated.self, id: 1)?.token == 2)
    }

    /// The context deleted the id and read it absent again: the older fetch's object must not
    /// come back as the base of the context's next insert.
    @Test(arguments: Later.allCases, [false, true])
    func olderFetchRecordingLastKeepsOwnDeletion(later: Later, withPredicate: Bool) throws {
        let container = try GraphContainer(for: [Gated.self], store: .inMemory)
        let context = container.newBackgroundContext()
        try Self.race(context, later: later, withPredicate: withPredicate) { $0.delete(Gated.self, id: 1) }
        context.insert(Gated(id: 1, token: 2, key: GateKey(value: 1)))
        try context.save()
        #expect(container.newBackgroundContext().model(Gated.self, id: 1)?.token == 2)
    }

    /// Under `.storeWins` the false conflict dropped the change from a save that returned.
    @Test func storeWinsKeepsOwnChangeAfterOlderFetch() throws {
        let container = try GraphContainer(for: [Gated.self], store: .inMemory)
        let context = container.newBackgroundContext()
        context.mergePolicy = .storeWins
        try Self.race(context, later: .model, withPredicate: false) { $0.insert(Gated(id: 1, token: 1, key: GateKey(value: 1))) }
        context.insert(Gated(id: 1, token: 2, key: GateKey(value: 1)))
        try context.save()
        #expect(container.newBackgroundContext().model(Gated.self, id: 1)?.token == 2)
    }

    /// Another context's save after the fetch's read is still a conflict for the context's
    /// copy: only what is newer than the fetch stays.
    @Test func otherSaveAfterOlderFetchStillConflicts() throws {
        let container = try GraphContainer(for: [Gated.self], store: .inMemory)
        let context = container.newBackgroundContext()
        try Self.race(context, later: .model, withPredicate: false) { $0.insert(Gated(id: 1, token: 1, key: GateKey(value: 1))) }
        let other = container.newBackgroundContext()
        other.insert(Gated(id: 1, token: 9, key: GateKey(value: 1)))
        try other.save()
        context.insert(Gated(id: 1, token: 2, key: GateKey(value: 1)))
        #expect(throws: GraphStoreError.self) { try context.save() }
        #expect(container.newBackgroundContext().model(Gated.self, id: 1)?.token == 9)
    }
}
