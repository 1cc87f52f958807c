import Foundation
@testable import GraphStore
import GraphStoreTestSupport
import Testing

/// Folder ← Item (toOne folderID, cascade); Label ← Item (toOne labelID, nullify).
private struct Folder: Entity, Hashable {
    var id = UUID()
    var name: String
}

private struct Label: Entity, Hashable {
    var id = UUID()
    var name: String
}

private struct Item: Entity, Hashable {
    var id = UUID()
    var title: String
    var folderID: Folder.ID?
    var labelID: Label.ID?

    static var relationships: [Relationship<Item>] {
        [.toOne(\.folderID, Folder.self, deleteRule: .cascade), .toOne(\.labelID, Label.self, deleteRule: .nullify)]
    }
}

/// What a context's save deleted or changed through a delete rule (a cascade, a nullified
/// reference) is that context's own write, as what it changed by hand is: a copy it held from
/// before, changed and saved, is based on what its save left, not a conflict with it.
@Suite struct OwnDeleteRuleBaseTests {
    private static let folders = [Folder(name: "inbox"), Folder(name: "archive")]
    private static let label = Label(name: "urgent")
    private static let item = Item(title: "v0", folderID: folders[0].id, labelID: label.id)

    /// How the context came to hold its copy of the item before the save that ran the rule.
    enum Held: CaseIterable, Sendable {
        /// It looked the item up.
        case lookedUp
        /// It saved the item itself and read nothing of the entity.
        case savedItself
        /// Another context saved the item; this one only holds a copy (as from `observe`)
        /// and never read the entity: its change of the item is based on the stored one.
        case heldOnly
    }

    private static func makeContainer(_ held: Held, policy: MergePolicy) throws -> (GraphContainer, GraphContext, Item) {
        let container = try GraphContainer(for: [Folder.self, Label.self, Item.self], store: .inMemory)
        let main = container.mainContext
        main.mergePolicy = policy
        let seeder = held == .savedItself ? main : container.newBackgroundContext()
        for folder in folders { seeder.insert(folder) }
        seeder.insert(label)
        seeder.insert(item)
        try seeder.save()
        var copy = item
        if held == .lookedUp { copy = try #require(main.model(Item.self, id: item.id)) }
        return (container, main, copy)
    }

    private static func stored(_ container: GraphContainer) -> Item? {
        container.newBackgroundContext().model(Item.self, id: item.id)
    }

    /// The context deletes the folder, which cascades to the item; then it saves its copy of
    /// the item again, moved to the other folder: under every policy the item is back.
    @Test(arguments: MergePolicy.allCases, Held.allCases)
    func reinsertingAnObjectItsSaveCascadedAwayIsNotAConflict(policy: MergePolicy, held: Held) throws {
        let (container, main, held) = try Self.makeContainer(held, policy: policy)
        main.delete(Self.folders[0])
        try main.save()
        #expect(Self.stored(container) == nil)
        var moved = held
        moved.folderID = Self.folders[1].id
        main.insert(moved)
        try main.save()
        #expect(Self.stored(container) == moved)
        try container.checkInvariants()
    }

    /// `main` deletes the label (its save nullifies the item's reference), then saves its copy
    /// `held` with a new title and no label: that copy is what the store holds.
    private static func expectEditAfterNullifyStored(
        _ held: Item, saving main: GraphContext, container: GraphContainer, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        main.delete(label)
        try main.save()
        #expect(stored(container)?.labelID == nil, sourceLocation: sourceLocation)
        var edited = held
        edited.title = "v1"
        edited.labelID = nil
        main.insert(edited)
        try main.save()
        #expect(stored(container) == edited, sourceLocation: sourceLocation)
        try container.checkInvariants()
    }

    /// The context deletes the label, which nullifies the item's reference; then it saves its
    /// copy of the item with a new title and no label: under every policy that copy is stored.
    @Test(arguments: MergePolicy.allCases, Held.allCases)
    func changingAnObjectItsSaveNullifiedIsNotAConflict(policy: MergePolicy, held: Held) throws {
        let (container, main, held) = try Self.makeContainer(held, policy: policy)
        try Self.expectEditAfterNullifyStored(held, saving: main, container: container)
    }

    /// The context saved the item without reading the entity, another context then changed
    /// the item table, and the save that nullifies the item's label also inserts another item:
    /// the nullified item is still the context's own write.
    @Test(arguments: MergePolicy.allCases)
    func aRuleWriteInAnEntityTheSaveAlsoChangedIsNotAConflict(policy: MergePolicy) throws {
        let (container, main, held) = try Self.makeContainer(.savedItself, policy: policy)
        let other = container.newBackgroundContext()
        other.insert(Item(title: "someone else's"))
        try other.save()
        main.insert(Item(title: "second"))
        try Self.expectEditAfterNullifyStored(held, saving: main, container: container)
    }

    /// Another context's change of the item after the cascade is still a conflict for the
    /// copy held from before it.
    @Test(arguments: [MergePolicy.error, .storeWins])
    func aLaterSaveOfAnotherContextStillConflicts(policy: MergePolicy) throws {
        let (container, main, held) = try Self.makeContainer(.lookedUp, policy: policy)
        main.delete(Self.label)
        try main.save()
        let other = container.newBackgroundContext()
        var theirs = try #require(other.model(Item.self, id: Self.item.id))
        theirs.title = "theirs"
        other.insert(theirs)
        try other.save()
        var mine = held
        mine.title = "mine"
        mine.labelID = nil
        main.insert(mine)
        if policy == .error {
            #expect {
                try main.save()
            } throws: { error in
                guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
                return conflicts.map(\.kind) == [.updatedElsewhere]
            }
        } else {
            try main.save()
        }
        #expect(Self.stored(container) == theirs)
    }

    /// A rule of the context's save that rewrote a version another context saved, which this
    /// context never saw, is not what it knows of the object: its held copy, changed and saved,
    /// is a conflict, and under the other policies the other context's change survives. With
    /// the copy looked up (the rule's entity not changed by the save) or saved by the context
    /// itself, the save also inserting another item (its records then kept id by id).
    @Test(arguments: [Held.lookedUp, .savedItself], [MergePolicy.error, .storeWins, .mergeByProperty])
    func aRuleThatRewroteAnotherSaveDoesNotRebaseAHeldCopy(held how: Held, policy: MergePolicy) throws {
        let container = try GraphContainer(for: [Folder.self, Label.self, Item.self], store: .inMemory)
        let context = container.newBackgroundContext(), other = container.newBackgroundContext()
        context.mergePolicy = policy
        container.mainContext.insert(contentsOf: Self.folders)
        container.mainContext.insert(Self.label)
        try container.mainContext.save()
        var held = Self.item
        if how == .savedItself {
            context.insert(Self.item)
            try context.save()
        } else {
            container.mainContext.insert(Self.item)
            try container.mainContext.save()
            held = try #require(context.model(Item.self, id: Self.item.id))
        }
        var theirs = try #require(other.model(Item.self, id: Self.item.id))
        theirs.title = "other's title"
        other.insert(theirs)
        try other.save()

        context.delete(Self.label)
        if how == .savedItself { context.insert(Item(title: "another", folderID: Self.folders[1].id)) }
        try context.save()
        #expect(container.mainContext.model(Item.self, id: Self.item.id)?.labelID == nil)

        held.labelID = nil
        held.folderID = Self.folders[1].id
        context.insert(held)
        if policy == .error {
            #expect(throws: GraphStoreError.self, "the other save was overwritten") { try context.save() }
        } else {
            try context.save()
        }
        #expect(container.mainContext.model(Item.self, id: Self.item.id)?.title == "other's title")
    }
}
