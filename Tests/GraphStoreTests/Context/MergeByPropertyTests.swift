import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// `.mergeByProperty`: on a conflict, the top-level properties the saving context changed
/// relative to its base take its values; the others keep the store's.
@Suite struct MergeByPropertyTests {
    /// A standalone entity (no relationship, no unique constraint) with nested values: its
    /// upserts take the save's direct path.
    struct Profile: Entity, Hashable {
        struct Address: Codable, Hashable, Sendable {
            var street: String
            var city: String
        }

        var id: Int
        var name: String
        var address: Address
        var nickname: String?
        var scores: [Int]
    }

    static let types: [any Entity.Type] = exampleModel + [Profile.self]
    static let swift = Tag(name: "swift"), linux = Tag(name: "linux"), ios = Tag(name: "ios")
    static let note = Note(text: "base", createdAt: Fixtures.epoch, tagIDs: [swift.id])
    static let profile = Profile(id: 1, name: "Ann", address: .init(street: "1 Main St", city: "Oslo"), nickname: "annie", scores: [1, 2])

    /// Seeds the objects, then lets `mine` (of `.mergeByProperty`) read them, `theirs`
    /// change and save, and `mine` change and save; returns what is stored afterwards.
    static func merge<E: Entity>(
        _ object: E, in container: GraphContainer, theirs: (inout E) -> Void, mine: (inout E) -> Void
    ) throws -> E? {
        let seeding = container.newBackgroundContext()
        seeding.insert(contentsOf: [swift, linux, ios])
        seeding.insert(object)
        try seeding.save()
        let mineContext = container.newBackgroundContext()
        mineContext.mergePolicy = .mergeByProperty
        var myCopy = try #require(mineContext.model(E.self, id: object.id))
        let theirContext = container.newBackgroundContext()
        var theirCopy = try #require(theirContext.model(E.self, id: object.id))
        theirs(&theirCopy)
        theirContext.insert(theirCopy)
        try theirContext.save()
        mine(&myCopy)
        mineContext.insert(myCopy)
        try mineContext.save()
        try container.checkInvariants()
        return container.newBackgroundContext().model(E.self, id: object.id)
    }

    @Test(arguments: StoreKind.allCases)
    func disjointPropertiesKeepBothChanges(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            let merged = try Self.merge(Self.note, in: container, theirs: { $0.text = "theirs" }, mine: { $0.isArchived = true })
            #expect(merged?.text == "theirs")
            #expect(merged?.isArchived == true)
            #expect(merged?.tagIDs == [Self.swift.id])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aPropertyBothChangedTakesThisContextsValue(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            let later = Fixtures.epoch.addingTimeInterval(60)
            let merged = try Self.merge(Self.note, in: container, theirs: {
                $0.text = "theirs"
                $0.isArchived = true
            }, mine: {
                $0.text = "mine"
                $0.modifiedAt = later
            })
            #expect(merged?.text == "mine")
            #expect(merged?.modifiedAt == later)
            #expect(merged?.isArchived == true)
        }
    }

    /// A nested value is one property: this context's changed address replaces the stored one
    /// whole, even the field only the other save changed.
    @Test(arguments: StoreKind.allCases)
    func aNestedValueIsOneProperty(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            let merged = try Self.merge(Self.profile, in: container, theirs: {
                $0.address.street = "2 Side St"
                $0.name = "Ann B."
                $0.nickname = nil
            }, mine: {
                $0.address.city = "Bergen"
                $0.scores.append(3)
            })
            #expect(merged?.address == .init(street: "1 Main St", city: "Bergen"))
            #expect(merged?.name == "Ann B.")
            #expect(merged?.nickname == nil)
            #expect(merged?.scores == [1, 2, 3])
        }
    }

    /// An optional this context set to `nil` (a key it no longer encodes) is removed.
    @Test(arguments: StoreKind.allCases)
    func anOptionalThisContextClearedIsCleared(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            let merged = try Self.merge(Self.profile, in: container, theirs: { $0.name = "Ann B." }, mine: { $0.nickname = nil })
            #expect(merged == Profile(id: 1, name: "Ann B.", address: Self.profile.address, nickname: nil, scores: [1, 2]))
        }
    }

    /// An array of relationship ids is one property too; references stay checked.
    @Test(arguments: StoreKind.allCases)
    func arraysOfRelationshipIDs(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            // Only the other save changed the tags: theirs stay.
            let kept = try Self.merge(Self.note, in: container, theirs: { $0.tagIDs.append(Self.linux.id) }, mine: { $0.text = "mine" })
            #expect(kept?.tagIDs == [Self.swift.id, Self.linux.id])
            #expect(kept?.text == "mine")
            #expect(container.newBackgroundContext().fetchIdentifiers(Note.self, referencing: Self.linux.id, of: Tag.self) == [Self.note.id])
        }
        try await withContainer(store, for: Self.types) { container in
            // Both changed them: this context's array wins whole.
            let mine = try Self.merge(Self.note, in: container, theirs: { $0.tagIDs.append(Self.linux.id) }, mine: { $0.tagIDs = [Self.ios.id] })
            #expect(mine?.tagIDs == [Self.ios.id])
            let context = container.newBackgroundContext()
            #expect(context.fetchIdentifiers(Note.self, referencing: Self.linux.id, of: Tag.self).isEmpty)
            #expect(context.fetchIdentifiers(Note.self, referencing: Self.ios.id, of: Tag.self) == [Self.note.id])
        }
    }

    /// An update against a deletion made elsewhere is dropped (the rest of the save commits);
    /// a deletion against an update made elsewhere deletes.
    @Test(arguments: StoreKind.allCases, [false, true])
    func aDeletionWinsAgainstAnUpdate(store: StoreKind, standalone: Bool) async throws {
        try await withContainer(store, for: Self.types) { container in
            let seeding = container.newBackgroundContext()
            seeding.insert(contentsOf: [Self.swift, Self.linux, Self.ios])
            seeding.insert(Self.note)
            seeding.insert(Self.profile)
            try seeding.save()
            let mine = container.newBackgroundContext(), theirs = container.newBackgroundContext()
            mine.mergePolicy = .mergeByProperty
            var myNote = try #require(mine.model(Note.self, id: Self.note.id))
            var myProfile = try #require(mine.model(Profile.self, id: 1))
            // They delete the object; mine updates it and inserts another.
            if standalone { theirs.delete(Profile.self, id: 1) } else { theirs.delete(Note.self, id: Self.note.id) }
            try theirs.save()
            myNote.text = "mine"
            myProfile.name = "mine"
            mine.insert(myNote)
            mine.insert(myProfile)
            let extra = Profile(id: 2, name: "new", address: Self.profile.address, nickname: nil, scores: [])
            mine.insert(extra)
            try mine.save()
            let reader = container.newBackgroundContext()
            #expect(reader.model(Profile.self, id: 2) == extra)
            if standalone {
                #expect(reader.model(Profile.self, id: 1) == nil)
                #expect(reader.model(Note.self, id: Self.note.id)?.text == "mine")
            } else {
                #expect(reader.model(Note.self, id: Self.note.id) == nil)
                #expect(reader.model(Profile.self, id: 1)?.name == "mine")
            }

            // The other way round: theirs updates, mine deletes its stale copy.
            let deleter = container.newBackgroundContext()
            deleter.mergePolicy = .mergeByProperty
            _ = deleter.model(Profile.self, id: 2)
            let updater = container.newBackgroundContext()
            var changed = extra
            changed.name = "changed elsewhere"
            updater.insert(changed)
            try updater.save()
            deleter.delete(Profile.self, id: 2)
            try deleter.save()
            #expect(container.newBackgroundContext().model(Profile.self, id: 2) == nil)
            try container.checkInvariants()
        }
    }

    /// An object both contexts inserted has no base: this context's value wins whole.
    @Test(arguments: StoreKind.allCases)
    func anObjectBothInsertedTakesThisContextsValue(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            let mine = container.newBackgroundContext(), theirs = container.newBackgroundContext()
            mine.mergePolicy = .mergeByProperty
            #expect(mine.model(Profile.self, id: 1) == nil)
            theirs.insert(Self.profile)
            try theirs.save()
            let my = Profile(id: 1, name: "Mine", address: .init(street: "x", city: "y"), nickname: nil, scores: [])
            mine.insert(my)
            try mine.save()
            #expect(container.newBackgroundContext().model(Profile.self, id: 1) == my)
        }
    }

    /// Changing a merged object again in the same save merges the later value too: here a
    /// context that never read the profile logs two changes of it, around another save.
    @Test func aLaterChangeInTheSameSaveIsMergedToo() throws {
        let container = try GraphContainer(for: Self.types, store: .inMemory)
        container.mainContext.insert(Self.profile)
        try container.mainContext.save()
        let mine = container.newBackgroundContext()
        mine.mergePolicy = .mergeByProperty
        var copy = Self.profile
        copy.scores = [9]
        mine.insert(copy)
        let theirs = container.newBackgroundContext()
        var their = Self.profile
        their.name = "theirs"
        theirs.insert(their)
        try theirs.save()
        copy.nickname = "second"
        mine.insert(copy)
        try mine.save()
        let stored = container.newBackgroundContext().model(Profile.self, id: 1)
        #expect(stored == Profile(id: 1, name: "theirs", address: Self.profile.address, nickname: "second", scores: [9]))
        try container.checkInvariants()
    }
}
