import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A person with a unique email (whose other values show which side of a merge won) and an
/// optional unique handle; a membership references a person.
private struct Person: Entity, Hashable {
    var id = UUID()
    var email: String
    var displayName: String
    var handle: String?

    static var uniqueConstraints: [UniqueConstraint<Person>] { [UniqueConstraint(\.email), UniqueConstraint(\.handle)] }
}

private struct Membership: Entity, Hashable {
    var id = UUID()
    var personID: Person.ID?

    static var relationships: [Relationship<Membership>] { [.toOne(\.personID, Person.self, deleteRule: .cascade)] }
}

/// A compound constraint: one booking per room and day.
private struct Booking: Entity, Hashable {
    var id = UUID()
    var room: String
    var day: Int

    static var uniqueConstraints: [UniqueConstraint<Booking>] { [UniqueConstraint(\.room, \.day)] }
}

/// A blog unique by its address, and a post unique by its blog and number: merging an
/// incoming blog into a stored one moves its posts to that blog, where a post of the same
/// number may be already.
private struct Blog: Entity, Hashable {
    var id = UUID()
    var url: String

    static var uniqueConstraints: [UniqueConstraint<Blog>] { [UniqueConstraint(\.url)] }
}

private struct BlogEntry: Entity, Hashable {
    var id = UUID()
    var blogID: Blog.ID?
    var number: Int
    var title: String

    static var uniqueConstraints: [UniqueConstraint<BlogEntry>] { [UniqueConstraint(\.blogID, \.number)] }
    static var relationships: [Relationship<BlogEntry>] { [.toOne(\.blogID, Blog.self, deleteRule: .cascade)] }
}

@Suite struct UniqueConstraintTests {
    static let swift = Tag(name: "swift")
    static let ios = Tag(name: "ios")
    fileprivate static let ann = Person(email: "ann@example.com", displayName: "Ann (stored)", handle: "ann")

    static let types: [any Entity.Type] = exampleModel + [Person.self, Membership.self, Booking.self]
    static let blogTypes: [any Entity.Type] = [Blog.self, BlogEntry.self]

    static func seed(_ container: GraphContainer) throws {
        container.mainContext.insert(swift)
        container.mainContext.insert(ios)
        container.mainContext.insert(ann)
        try container.mainContext.save()
        try container.checkInvariants()
    }

    static func tagNames(_ context: GraphContext, _ ids: [UUID]) -> [String?] {
        ids.map { context.model(Tag.self, id: $0)?.name }
    }

    // MARK: - Merging an incoming duplicate

    /// Two imports of one blog and its post: the incoming blog merges into the stored one,
    /// which moves the incoming post onto the stored post's blog and number, so it merges
    /// too. (The move used to come after the check: the store held the value twice, its
    /// index named one of them, and the store did not open again.)
    @Test(arguments: StoreKind.allCases, [MergePolicy.contextWins, .storeWins, .mergeByProperty])
    func aMergeThatMovesAReferenceOntoAnotherUniqueValueMergesThatObjectToo(store: StoreKind, policy: MergePolicy) async throws {
        try await withContainer(store, for: Self.blogTypes) { container in
            let stored = Blog(url: "https://example.com")
            let storedEntry = BlogEntry(blogID: stored.id, number: 7, title: "stored")
            container.mainContext.insert(stored)
            container.mainContext.insert(storedEntry)
            try container.mainContext.save()

            let context = container.newBackgroundContext()
            context.mergePolicy = policy
            let incoming = Blog(url: "https://example.com")
            context.insert(incoming)
            context.insert(BlogEntry(blogID: incoming.id, number: 7, title: "incoming"))
            context.insert(BlogEntry(blogID: incoming.id, number: 8, title: "new"))
            try context.save()
            try container.checkInvariants()

            let reader = container.newBackgroundContext()
            #expect(try reader.fetch(FetchDescriptor<Blog>()).map(\.id) == [stored.id])
            let entries = try reader.fetch(FetchDescriptor<BlogEntry>(sortBy: [SortDescriptor(\.number)]))
            #expect(entries.map(\.number) == [7, 8])
            #expect(entries.allSatisfy { $0.blogID == stored.id })
            #expect(entries.first?.id == storedEntry.id)
            #expect(entries.first?.title == (policy == .storeWins ? "stored" : "incoming"))
        }
    }

    @Test func underErrorSuchAMergeThrowsAndCommitsNothing() async throws {
        try await withContainer(.inMemory, for: Self.blogTypes) { container in
            let stored = Blog(url: "https://example.com")
            container.mainContext.insert(stored)
            container.mainContext.insert(BlogEntry(blogID: stored.id, number: 7, title: "stored"))
            try container.mainContext.save()
            let version = container.version
            let context = container.newBackgroundContext()
            let incoming = Blog(url: "https://example.com")
            context.insert(incoming)
            context.insert(BlogEntry(blogID: incoming.id, number: 7, title: "incoming"))
            #expect(throws: GraphStoreError.self) { try context.save() }
            #expect(container.version == version)
        }
    }

    @Test(arguments: StoreKind.allCases, [MergePolicy.contextWins, .storeWins, .mergeByProperty])
    func anIncomingDuplicateMergesIntoTheExistingObjectAndReferencesFollow(store: StoreKind, policy: MergePolicy) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let context = container.newBackgroundContext()
            context.mergePolicy = policy
            let incoming = Tag(name: "swift")
            let note = Note(text: "new", createdAt: Fixtures.epoch, tagIDs: [incoming.id, Self.ios.id])
            let both = Note(text: "both", createdAt: Fixtures.epoch, tagIDs: [Self.swift.id, incoming.id])
            let post = Post(id: 1, blogName: "b", date: Fixtures.epoch, summary: "s", tagIDs: [incoming.id])
            context.insert(incoming)
            context.insert(note)
            context.insert(both)
            context.insert(post)
            try context.save()
            try container.checkInvariants()

            let reader = container.newBackgroundContext()
            #expect(container.count(of: Tag.self) == 2)
            #expect(reader.model(Tag.self, id: incoming.id) == nil)
            #expect(reader.model(Tag.self, id: Self.swift.id) == Self.swift)
            #expect(reader.model(Note.self, id: note.id)?.tagIDs == [Self.swift.id, Self.ios.id])
            #expect(reader.model(Note.self, id: both.id)?.tagIDs == [Self.swift.id])
            #expect(reader.model(Post.self, id: 1)?.tagIDs == [Self.swift.id])
        }
    }

    /// `.mergeByProperty` merges a unique collision as `.contextWins` does.
    @Test(arguments: StoreKind.allCases, [MergePolicy.contextWins, .mergeByProperty])
    func contextWinsWritesTheIncomingValuesUnderTheExistingID(store: StoreKind, policy: MergePolicy) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let context = container.newBackgroundContext()
            context.mergePolicy = policy
            let incoming = Person(email: Self.ann.email, displayName: "Ann (incoming)", handle: "annie")
            let membership = Membership(personID: incoming.id)
            context.insert(incoming)
            context.insert(membership)
            try context.save()
            try container.checkInvariants()
            let reader = container.newBackgroundContext()
            #expect(container.count(of: Person.self) == 1)
            let merged = try #require(reader.model(Person.self, id: Self.ann.id))
            #expect(merged.displayName == "Ann (incoming)")
            #expect(merged.handle == "annie")
            #expect(reader.model(Membership.self, id: membership.id)?.personID == Self.ann.id)
            // The unique index follows the new value.
            let taken = Person(email: "other@example.com", displayName: "Other", handle: "ann")
            let other = container.newBackgroundContext()
            other.insert(taken)
            try other.save()
            try container.checkInvariants()
            #expect(container.count(of: Person.self) == 2)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func storeWinsKeepsTheExistingValues(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let context = container.newBackgroundContext()
            context.mergePolicy = .storeWins
            let incoming = Person(email: Self.ann.email, displayName: "Ann (incoming)", handle: "annie")
            let membership = Membership(personID: incoming.id)
            context.insert(incoming)
            context.insert(membership)
            try context.save()
            try container.checkInvariants()
            let reader = container.newBackgroundContext()
            #expect(container.count(of: Person.self) == 1)
            #expect(reader.model(Person.self, id: Self.ann.id) == Self.ann)
            #expect(reader.model(Person.self, id: incoming.id) == nil)
            #expect(reader.model(Membership.self, id: membership.id)?.personID == Self.ann.id)
        }
    }

    @Test(arguments: StoreKind.allCases, [MergePolicy.contextWins, .storeWins, .mergeByProperty])
    func duplicatesWithinOneChangeSetMergeIntoOne(store: StoreKind, policy: MergePolicy) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let context = container.newBackgroundContext()
            context.mergePolicy = policy
            let first = Tag(name: "linux"), second = Tag(name: "linux")
            let note = Note(text: "n", createdAt: Fixtures.epoch, tagIDs: [second.id, first.id])
            context.insert(first)
            context.insert(second)
            context.insert(note)
            try context.save()
            try container.checkInvariants()
            let linux = try container.newBackgroundContext().fetch(FetchDescriptor<ExampleModel.Tag>(predicate: #Predicate { $0.name == "linux" }))
            #expect(linux.count == 1)
            #expect(linux.first?.id == first.id)
            #expect(container.newBackgroundContext().model(Note.self, id: note.id)?.tagIDs == [first.id])
        }
    }

    // MARK: - Renaming onto a taken value

    @Test(arguments: StoreKind.allCases)
    func renamingAnExistingTagOntoAnotherNameMergesItUnderContextWins(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let main = container.mainContext
            let onSwift = Note(text: "swift", createdAt: Fixtures.epoch, tagIDs: [Self.swift.id])
            let onIOS = Note(text: "ios", createdAt: Fixtures.epoch, tagIDs: [Self.ios.id])
            let onBoth = Note(text: "both", createdAt: Fixtures.epoch, tagIDs: [Self.swift.id, Self.ios.id])
            let post = Post(id: 7, blogName: "b", date: Fixtures.epoch, summary: "s", tagIDs: [Self.swift.id])
            for note in [onSwift, onIOS, onBoth] { main.insert(note) }
            main.insert(post)
            try main.save()

            let context = container.newBackgroundContext()
            context.mergePolicy = .contextWins
            var renamed = Self.swift
            renamed.name = "ios"
            context.insert(renamed)
            try context.save()
            try container.checkInvariants()

            let reader = container.newBackgroundContext()
            #expect(try reader.fetch(FetchDescriptor<ExampleModel.Tag>()) == [Self.ios])
            #expect(reader.model(Tag.self, id: Self.swift.id) == nil)
            #expect(reader.model(Note.self, id: onSwift.id)?.tagIDs == [Self.ios.id])
            #expect(reader.model(Note.self, id: onIOS.id)?.tagIDs == [Self.ios.id])
            #expect(reader.model(Note.self, id: onBoth.id)?.tagIDs == [Self.ios.id])
            #expect(reader.model(Post.self, id: 7)?.tagIDs == [Self.ios.id])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func swappingValuesInOneSaveIsNotACollision(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let main = container.mainContext
            var a = Self.swift, b = Self.ios
            swap(&a.name, &b.name)
            main.insert(a)
            main.insert(b)
            try main.save()
            try container.checkInvariants()
            #expect(main.model(Tag.self, id: Self.swift.id)?.name == "ios")
            #expect(main.model(Tag.self, id: Self.ios.id)?.name == "swift")
        }
    }

    /// Merged into the object whose email it takes, an incoming person must not take the
    /// handle of a third: it cannot become both, so the save throws and commits nothing (it
    /// used to commit two people with one handle, which no later open accepted).
    @Test(arguments: StoreKind.allCases, [MergePolicy.contextWins, .mergeByProperty])
    func collidingWithTwoObjectsThroughTwoConstraintsIsRefused(store: StoreKind, policy: MergePolicy) async throws {
        let bob = Person(email: "bob@example.com", displayName: "Bob", handle: "bobby")
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            container.mainContext.insert(bob)
            try container.mainContext.save()
            let context = container.newBackgroundContext()
            context.mergePolicy = policy
            let incoming = Person(email: Self.ann.email, displayName: "Ann with Bob's handle", handle: "bobby")
            context.insert(incoming)
            #expect {
                try context.save()
            } throws: { error in
                guard case .uniqueConstraintViolation(let entity, let constraint, let value, let existing, let incomingID)? = error as? GraphStoreError
                else { return false }
                return entity == "Person" && constraint == "handle" && value == "bobby"
                    && existing == bob.id.uuidString && incomingID == incoming.id.uuidString
            }
            try container.checkInvariants()
            #expect(container.mainContext.model(Person.self, id: Self.ann.id) == Self.ann)
            #expect(container.mainContext.model(Person.self, id: bob.id) == bob)
            // Without the second collision the same merge goes through.
            var merged = incoming
            merged.handle = "ann"
            context.rollback()
            context.insert(merged)
            try context.save()
            try container.checkInvariants()
            #expect(container.mainContext.model(Person.self, id: Self.ann.id)?.displayName == "Ann with Bob's handle")
        }
    }

    /// Merges that move values on within one save are judged by what the save leaves: a
    /// value an earlier merge gave the owner and a later one took back is free again, and the
    /// order of the changes does not matter.
    @Test(arguments: [false, true])
    func mergesAreJudgedByWhatTheSaveLeaves(updateFirst: Bool) async throws {
        let tess = Person(email: "t@example.com", displayName: "Tess", handle: "t")
        let hal = Person(email: "h@example.com", displayName: "Hal", handle: "hh")
        try await withContainer(.inMemory, for: Self.types) { container in
            try Self.seed(container)
            container.mainContext.insert(contentsOf: [tess, hal])
            try container.mainContext.save()
            let context = container.newBackgroundContext()
            context.mergePolicy = .contextWins
            // Two people merge into Ann one after the other, the second taking back the
            // handle the first brought; a third takes that handle for Tess.
            context.insert(Person(email: Self.ann.email, displayName: "first", handle: "a1"))
            context.insert(Person(email: Self.ann.email, displayName: "second", handle: "b1"))
            context.insert(Person(email: tess.email, displayName: "Tess again", handle: "a1"))
            // Hal moves to Ann's email and a newcomer brings Hal's handle to Ann, in either order.
            var moved = hal
            moved.email = Self.ann.email
            let newcomer = Person(email: Self.ann.email, displayName: "newcomer", handle: "hh")
            if updateFirst {
                context.insert(moved)
                context.insert(newcomer)
            } else {
                context.insert(newcomer)
                context.insert(moved)
            }
            try context.save()
            try container.checkInvariants()
            let people = try container.mainContext.fetch(FetchDescriptor<Person>())
            #expect(people.first { $0.email == tess.email }?.handle == "a1")
            #expect(people.first { $0.email == Self.ann.email }?.handle == "hh")
            #expect(people.count == 2)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aValueFreedInTheSameSaveCanBeTaken(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let main = container.mainContext
            let replacement = Tag(name: "swift")
            main.delete(Self.swift)
            main.insert(replacement)
            try main.save()
            try container.checkInvariants()
            #expect(try main.fetch(FetchDescriptor<ExampleModel.Tag>(predicate: #Predicate { $0.name == "swift" })) == [replacement])
        }
    }

    // MARK: - .error

    @Test(arguments: StoreKind.allCases)
    func errorThrowsAndCommitsNothing(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let context = container.newBackgroundContext()
            #expect(context.mergePolicy == .error)
            let incoming = Tag(name: "swift")
            let note = Note(text: "n", createdAt: Fixtures.epoch, tagIDs: [incoming.id])
            context.insert(incoming)
            context.insert(note)
            #expect(throws: GraphStoreError.uniqueConstraintViolation(
                entity: "Tag", constraint: "name", value: "swift", existingID: Self.swift.id.uuidString, incomingID: incoming.id.uuidString)
            ) { try context.save() }
            try container.checkInvariants()
            #expect(container.version == 1)
            #expect(container.count(of: Tag.self) == 2)
            #expect(container.count(of: Note.self) == 0)

            // Renaming onto a taken value throws too.
            context.rollback()
            var renamed = Self.swift
            renamed.name = "ios"
            context.insert(renamed)
            #expect(throws: GraphStoreError.uniqueConstraintViolation(
                entity: "Tag", constraint: "name", value: "ios", existingID: Self.ios.id.uuidString, incomingID: Self.swift.id.uuidString)
            ) { try context.save() }
            try container.checkInvariants()
            #expect(container.newBackgroundContext().model(Tag.self, id: Self.swift.id) == Self.swift)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func duplicatesWithinOneChangeSetThrowUnderError(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let context = container.newBackgroundContext()
            context.insert(Tag(name: "linux"))
            context.insert(Tag(name: "linux"))
            let error = #expect(throws: GraphStoreError.self) { try context.save() }
            guard case .uniqueConstraintViolation(let entity, let constraint, let value, _, _) = error else {
                Issue.record("expected uniqueConstraintViolation, got \(String(describing: error))")
                return
            }
            #expect(entity == "Tag" && constraint == "name" && value == "linux")
            try container.checkInvariants()
            #expect(container.count(of: Tag.self) == 2)
        }
    }

    // MARK: - Optional and compound values

    @Test(arguments: StoreKind.allCases)
    func nilValuesNeverCollide(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let main = container.mainContext
            main.insert(Person(email: "x@example.com", displayName: "X", handle: nil))
            main.insert(Person(email: "y@example.com", displayName: "Y", handle: nil))
            try main.save()
            try container.checkInvariants()
            #expect(container.count(of: Person.self) == 3)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func compoundConstraintsCompareBothValues(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let main = container.mainContext
            main.insert(Booking(room: "A", day: 1))
            main.insert(Booking(room: "A", day: 2))
            main.insert(Booking(room: "B", day: 1))
            try main.save()
            try container.checkInvariants()
            #expect(container.count(of: Booking.self) == 3)

            let clash = Booking(room: "A", day: 2)
            main.insert(clash)
            let error = #expect(throws: GraphStoreError.self) { try main.save() }
            guard case .uniqueConstraintViolation(let entity, let constraint, _, _, let incomingID) = error else {
                Issue.record("expected uniqueConstraintViolation, got \(String(describing: error))")
                return
            }
            #expect(entity == "Booking" && constraint == "(room, day)" && incomingID == clash.id.uuidString)
            try container.checkInvariants()
            #expect(container.count(of: Booking.self) == 3)
        }
    }
}
