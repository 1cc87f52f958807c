import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A group whose deletion takes its labels along; a label has a unique name.
private struct LabelGroup: Entity, Hashable {
    var id = UUID()
    var title: String
}

private struct Label: Entity, Hashable {
    var id = UUID()
    var name: String
    var groupID: LabelGroup.ID?

    static var uniqueConstraints: [UniqueConstraint<Label>] { [UniqueConstraint(\.name)] }
    static var relationships: [Relationship<Label>] { [.toOne(\.groupID, LabelGroup.self, deleteRule: .cascade)] }
}

/// A card holds labels; a deleted label leaves it (`.nullify`).
private struct Card: Entity, Hashable {
    var id = UUID()
    var text: String
    var labelIDs: [Label.ID]

    static var relationships: [Relationship<Card>] { [.toMany(\.labelIDs, Label.self, deleteRule: .nullify)] }
}

/// Two unique values per member, so that one merge can free a value another object then takes.
private struct Member: Entity, Hashable {
    var id = UUID()
    var email: String
    var handle: String
    var displayName: String

    static var uniqueConstraints: [UniqueConstraint<Member>] { [UniqueConstraint(\.email), UniqueConstraint(\.handle)] }
}

/// A badge names a member; a deleted member leaves it without one.
private struct Badge: Entity, Hashable {
    var id = UUID()
    var memberID: Member.ID?

    static var relationships: [Relationship<Badge>] { [.toOne(\.memberID, Member.self, deleteRule: .nullify)] }
}

/// A board; deleting it takes it off its pins (`.nullify`).
private struct Board: Entity, Hashable {
    var id = UUID()
}

/// A pin with a unique name on a board.
private struct Pin: Entity, Hashable {
    var id = UUID()
    var name: String
    var note: String
    var boardID: Board.ID?

    static var uniqueConstraints: [UniqueConstraint<Pin>] { [UniqueConstraint(\.name)] }
    static var relationships: [Relationship<Pin>] { [.toOne(\.boardID, Board.self, deleteRule: .nullify)] }
}

/// An owner a locker's reference keeps from being deleted (`.deny`).
private struct Owner: Entity, Hashable {
    var id = UUID()
}

private struct Locker: Entity, Hashable {
    var id = UUID()
    var name: String
    var ownerID: Owner.ID?

    static var uniqueConstraints: [UniqueConstraint<Locker>] { [UniqueConstraint(\.name)] }
    static var relationships: [Relationship<Locker>] { [.toOne(\.ownerID, Owner.self, deleteRule: .deny)] }
}

/// Unique constraints and delete rules in one save: the unique check sees what the delete rules
/// delete, and the values the merges leave.
@Suite struct UniqueConstraintDeleteRuleTests {
    /// Saves `seed`, then returns a new background context of `policy`: the store as a save
    /// under test finds it.
    static func context(of policy: MergePolicy, in container: GraphContainer, after seed: [any Entity]) throws -> GraphContext {
        for object in seed { container.mainContext.insert(object) }
        try container.mainContext.save()
        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        return context
    }

    static let types: [any Entity.Type] = [LabelGroup.self, Label.self, Card.self, Member.self, Badge.self, Board.self, Pin.self, Owner.self, Locker.self]

    /// A stored label that a cascade deletes in the same save no longer holds its name: an
    /// incoming label of that name is kept as itself under every policy, and the card that
    /// references it keeps the reference. (The unique check used to run before the cascade:
    /// the incoming label was merged into the doomed one, which the cascade then deleted, so
    /// the save left no label of that name and an untagged card; `.error` threw.)
    @Test(arguments: StoreKind.allCases, [MergePolicy.error, .contextWins, .storeWins, .mergeByProperty])
    func aHolderACascadeDeletesDoesNotTakeTheIncomingObject(store: StoreKind, policy: MergePolicy) async throws {
        let old = LabelGroup(title: "old"), new = LabelGroup(title: "new")
        let doomed = Label(name: "swift", groupID: old.id)
        try await withContainer(store, for: Self.types) { container in
            let context = try Self.context(of: policy, in: container, after: [old, new, doomed])
            let incoming = Label(name: "swift", groupID: new.id)
            let card = Card(text: "card", labelIDs: [incoming.id])
            context.delete(old)
            context.insert(incoming)
            context.insert(card)
            try context.save()
            try container.checkInvariants()

            let reader = container.newBackgroundContext()
            #expect(reader.model(LabelGroup.self, id: old.id) == nil)
            #expect(reader.model(Label.self, id: doomed.id) == nil)
            #expect(try reader.fetch(FetchDescriptor<Label>()) == [incoming])
            #expect(reader.model(Card.self, id: card.id)?.labelIDs == [incoming.id])
        }
    }

    /// The same with the stored holder changed in the save as well: the cascade still wins.
    @Test(arguments: [MergePolicy.contextWins, .storeWins, .mergeByProperty])
    func aChangedHolderACascadeDeletesDoesNotTakeTheIncomingObject(policy: MergePolicy) async throws {
        let old = LabelGroup(title: "old")
        let doomed = Label(name: "swift", groupID: old.id)
        try await withContainer(.inMemory, for: Self.types) { container in
            let context = try Self.context(of: policy, in: container, after: [old, doomed])
            var renamed = doomed
            renamed.name = "swiftlang"
            context.insert(renamed)
            let incoming = Label(name: "swiftlang")
            context.insert(incoming)
            context.delete(old)
            try context.save()
            try container.checkInvariants()
            #expect(try container.mainContext.fetch(FetchDescriptor<Label>()) == [incoming])
        }
    }

    /// Merged into a stored member, an incoming one gives it other values: a value the member
    /// had just taken in the same save is free again for the objects that follow. (It stayed
    /// claimed, so a third member of that handle was merged into the first and its own values
    /// were lost.)
    @Test(arguments: [MergePolicy.contextWins, .mergeByProperty])
    func aValueAMergeReplacesIsFreeForTheObjectsThatFollow(policy: MergePolicy) async throws {
        let ann = Member(email: "ann@example.com", handle: "ann", displayName: "Ann")
        try await withContainer(.inMemory, for: Self.types) { container in
            let context = try Self.context(of: policy, in: container, after: [ann])
            var renamed = ann
            renamed.handle = "ann2"
            let joining = Member(email: ann.email, handle: "jj", displayName: "Joining")
            let lee = Member(email: "lee@example.com", handle: "ann2", displayName: "Lee")
            context.insert(renamed)
            context.insert(joining)
            context.insert(lee)
            try context.save()
            try container.checkInvariants()

            let members = try container.mainContext.fetch(FetchDescriptor<Member>(sortBy: [SortDescriptor(\.email)]))
            #expect(members.count == 2)
            #expect(members.first { $0.id == ann.id }.map { [$0.email, $0.handle, $0.displayName] } == [ann.email, "jj", "Joining"])
            #expect(members.first { $0.id == lee.id } == lee)
        }
    }

    /// A stored value that a merge moves off its stored holder is free too: an incoming member
    /// of Ann's old handle stays itself once Ann took another in a merge.
    @Test(arguments: [MergePolicy.contextWins, .mergeByProperty])
    func aStoredValueAMergeReplacesIsFree(policy: MergePolicy) async throws {
        let ann = Member(email: "ann@example.com", handle: "ann", displayName: "Ann")
        try await withContainer(.inMemory, for: Self.types) { container in
            let context = try Self.context(of: policy, in: container, after: [ann])
            let joining = Member(email: ann.email, handle: "jj", displayName: "Joining")
            let kim = Member(email: "kim@example.com", handle: "ann", displayName: "Kim")
            context.insert(joining)
            context.insert(kim)
            try context.save()
            try container.checkInvariants()

            let members = try container.mainContext.fetch(FetchDescriptor<Member>())
            #expect(members.count == 2)
            #expect(members.first { $0.id == ann.id }?.handle == "jj")
            #expect(members.first { $0.id == kim.id } == kim)
        }
    }

    /// Under `.storeWins` a newcomer merges into Kay, whom the same save merges into Oz (her
    /// new handle is his): a badge naming the newcomer ends up naming Oz, the one that stays.
    /// (It named Kay, whom the merge deletes, so the badge lost its member.)
    @Test func referencesFollowAMergeIntoAnObjectThatMergesOn() async throws {
        let kay = Member(email: "kay@example.com", handle: "kk", displayName: "Kay")
        let oz = Member(email: "oz@example.com", handle: "oo", displayName: "Oz")
        try await withContainer(.inMemory, for: Self.types) { container in
            let context = try Self.context(of: .storeWins, in: container, after: [kay, oz])
            let newcomer = Member(email: kay.email, handle: "nn", displayName: "Newcomer")
            let badge = Badge(memberID: newcomer.id)
            var moved = kay
            moved.handle = oz.handle
            context.insert(newcomer)
            context.insert(moved)
            context.insert(badge)
            try context.save()
            try container.checkInvariants()

            let reader = container.newBackgroundContext()
            #expect(reader.model(Member.self, id: newcomer.id) == nil)
            #expect(reader.model(Member.self, id: kay.id) == nil)
            #expect(reader.model(Member.self, id: oz.id) == oz)
            #expect(reader.model(Badge.self, id: badge.id)?.memberID == oz.id)
        }
    }

    /// An object inserted and deleted again before the first save is deleted as far as its
    /// delete rules go: a card that lists it loses it (`.nullify`), and a label on a shelf-like
    /// group the context inserted and deleted goes with it (`.cascade`). (The save used to throw
    /// `danglingReference`.)
    @Test(arguments: StoreKind.allCases)
    func anObjectDeletedBeforeItWasEverSavedAppliesItsDeleteRules(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            let context = container.mainContext
            let kept = Label(name: "kept")
            let dropped = Label(name: "dropped")
            let group = LabelGroup(title: "short-lived")
            let grouped = Label(name: "grouped", groupID: group.id)
            let card = Card(text: "card", labelIDs: [dropped.id, kept.id])
            context.insert(contentsOf: [kept, dropped, grouped])
            context.insert(group)
            context.insert(card)
            context.delete(dropped)
            context.delete(group)
            try context.save()
            try container.checkInvariants()

            let reader = container.newBackgroundContext()
            #expect(reader.model(Card.self, id: card.id)?.labelIDs == [kept.id])
            #expect(try reader.fetch(FetchDescriptor<Label>()) == [kept])
        }
    }

    /// An incoming pin merges into the stored one of its name while the save deletes the
    /// stored pin's board: the merge keeps the incoming values (under the policies that take
    /// them), and the stored pin is off the deleted board. (The nullified stored pin, written
    /// by the delete rule before the unique check, overwrote the merged values.)
    @Test(arguments: StoreKind.allCases, [MergePolicy.contextWins, .mergeByProperty])
    func aMergeIntoAnObjectADeleteRuleNullifiesKeepsTheIncomingValues(store: StoreKind, policy: MergePolicy) async throws {
        let board = Board()
        let stored = Pin(name: "n", note: "stored", boardID: board.id)
        try await withContainer(store, for: Self.types) { container in
            let context = try Self.context(of: policy, in: container, after: [board, stored])
            context.insert(Pin(name: "n", note: "incoming", boardID: nil))
            context.delete(board)
            try context.save()
            try container.checkInvariants()
            #expect(try container.mainContext.fetch(FetchDescriptor<Pin>()) == [Pin(id: stored.id, name: "n", note: "incoming", boardID: nil)])
        }
    }

    /// An incoming locker referencing an owner merges into the stored locker of its name while
    /// the save deletes that owner: the merged locker references it, so `.deny` refuses the
    /// save, naming the owner and the stored locker, and nothing is committed.
    @Test(arguments: [MergePolicy.contextWins, .mergeByProperty])
    func denyIsJudgedOnWhatTheMergesLeave(policy: MergePolicy) async throws {
        let owner = Owner()
        let stored = Locker(name: "k", ownerID: nil)
        try await withContainer(.inMemory, for: Self.types) { container in
            let context = try Self.context(of: policy, in: container, after: [owner, stored])
            context.insert(Locker(name: "k", ownerID: owner.id))
            context.delete(owner)
            #expect {
                try context.save()
            } throws: { error in
                guard case .deleteDenied(let entity, let id, let referencingEntity, let referencingID, _)? = error as? GraphStoreError else { return false }
                return entity == "Owner" && id == owner.id.uuidString && referencingEntity == "Locker" && referencingID == stored.id.uuidString
            }
            #expect(container.mainContext.model(Owner.self, id: owner.id) == owner)
            #expect(try container.mainContext.fetch(FetchDescriptor<Locker>()) == [stored])
        }
    }
}
