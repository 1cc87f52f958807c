import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A customer that invoices protect from deletion.
private struct Customer: Entity, Hashable {
    var id = UUID()
    var name: String
}

private struct Invoice: Entity, Hashable {
    var id = UUID()
    var customerID: Customer.ID?

    static var relationships: [Relationship<Invoice>] { [.toOne(\.customerID, Customer.self, deleteRule: .deny)] }
}

/// Units of work that publish a domain event from `onCommit`: the event must arrive after the
/// write it announces is visible to everyone, exactly once, and never for a failed write.
@Suite struct UnitOfWorkTests {
    static let takenTagName = "taken"
    fileprivate static let customer = Customer(name: "ACME")
    fileprivate static let invoice = Invoice(customerID: customer.id)

    static let types: [any Entity.Type] = exampleModel + [Customer.self, Invoice.self]

    /// Stores the taken tag, the customer and its invoice.
    static func seed(_ container: GraphContainer) throws {
        container.mainContext.insert(Tag(name: takenTagName))
        container.mainContext.insert(customer)
        container.mainContext.insert(invoice)
        try container.mainContext.save()
        try container.checkInvariants()
    }

    /// What a unit of work reports back.
    struct Unit: Sendable {
        let noteID: UUID
        let saved: Bool
        /// Whether the unit's event had been published when `save()` returned.
        let publishedBeforeSaveReturned: Bool
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentUnitsPublishEveryEventAfterTheirCommit(store: StoreKind) async throws {
        try await withTimeout(seconds: deadlockBound) {
            try await withContainer(store, for: Self.types) { container in
                try Self.seed(container)
                let unitCount = 1_000, workers = 8
                /// Note id → what each event handler saw when it checked for the note.
                let events = Guarded<[UUID: [Bool]]>([:])

                let units = try await withThrowingTaskGroup(of: [Unit].self) { group in
                    for worker in 0..<workers {
                        group.addTask {
                            var units: [Unit] = []
                            // One unit in eleven also claims a taken tag name and must fail: 1,000 succeed.
                            for unit in stride(from: worker, to: unitCount + unitCount / 10, by: workers) {
                                let context = container.newBackgroundContext()
                                context.name = "unit \(unit)"
                                let note = Note(text: "unit \(unit)", createdAt: Fixtures.epoch.addingTimeInterval(Double(unit)))
                                context.insert(note)
                                let fails = unit % 11 == 10
                                if fails { context.insert(Tag(name: Self.takenTagName)) }
                                context.onCommit {
                                    let seen = container.newBackgroundContext().model(Note.self, id: note.id) == note
                                    events.withLock { $0[note.id, default: []].append(seen) }
                                }
                                var saved = true
                                do {
                                    try context.save()
                                } catch GraphStoreError.uniqueConstraintViolation(entity: "Tag", constraint: "name", _, _, _) where fails {
                                    saved = false
                                    context.rollback()
                                }
                                let published = events.withLock { $0[note.id] != nil }
                                units.append(Unit(noteID: note.id, saved: saved, publishedBeforeSaveReturned: published))
                            }
                            return units
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                try container.checkInvariants()

                let saved = units.filter(\.saved), failed = units.filter { !$0.saved }
                #expect(saved.count == unitCount)
                #expect(failed.count == unitCount / 10)
                #expect(saved.allSatisfy { $0.publishedBeforeSaveReturned })
                #expect(failed.allSatisfy { !$0.publishedBeforeSaveReturned })
                let log = events.value
                #expect(log.count == unitCount)
                let unannounced = Set(log.keys).symmetricDifference(saved.map(\.noteID))
                #expect(unannounced.isEmpty, "\(unannounced.count) units' events missing or unexpected")
                #expect(log.values.allSatisfy { $0 == [true] }, "every event arrives once and sees its object")
                #expect(container.count(of: Note.self) == unitCount)
                let reader = container.newBackgroundContext()
                #expect(failed.allSatisfy { reader.model(Note.self, id: $0.noteID) == nil })
                #expect(container.count(of: ExampleModel.Tag.self) == 1)
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aUnitViolatingAUniqueConstraintPublishesNothing(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let context = container.newBackgroundContext()
            let published = Guarded(0)
            context.insert(Tag(name: Self.takenTagName))
            context.insert(Note(text: "n", createdAt: Fixtures.epoch))
            context.onCommit { published.withLock { $0 += 1 } }
            let error = #expect(throws: GraphStoreError.self) { try context.save() }
            guard case .uniqueConstraintViolation = error else {
                Issue.record("expected uniqueConstraintViolation, got \(String(describing: error))")
                return
            }
            try container.checkInvariants()
            #expect(published.value == 0)
            #expect(container.count(of: Note.self) == 0)

            // rollback() drops the registered action with the changes.
            context.rollback()
            #expect(!context.hasChanges)
            context.insert(Tag(name: "free"))
            try context.save()
            try container.checkInvariants()
            #expect(published.value == 0)
            #expect(container.count(of: ExampleModel.Tag.self) == 2)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aUnitWhoseDeleteIsDeniedPublishesNothing(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let context = container.newBackgroundContext()
            let published = Guarded(0)
            context.delete(Self.customer)
            context.onCommit { published.withLock { $0 += 1 } }
            #expect(throws: GraphStoreError.deleteDenied(
                entity: "Customer", id: Self.customer.id.uuidString, referencingEntity: "Invoice",
                referencingID: Self.invoice.id.uuidString, relationship: "customerID")) { try context.save() }
            try container.checkInvariants()
            #expect(published.value == 0)
            #expect(container.count(of: Customer.self) == 1)

            context.rollback()
            try context.save()
            #expect(published.value == 0)
            // Deleting the invoice first makes the unit valid; its event runs once.
            context.delete(Self.invoice)
            context.delete(Self.customer)
            context.onCommit { published.withLock { $0 += 1 } }
            try context.save()
            try container.checkInvariants()
            #expect(published.value == 1)
            #expect(container.count(of: Customer.self) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anActionKeptAfterAFailedSaveRunsOnceWithTheNextSuccessfulSave(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let context = container.newBackgroundContext()
            let published = Guarded(0)
            let duplicate = Tag(name: Self.takenTagName)
            let note = Note(text: "n", createdAt: Fixtures.epoch)
            context.insert(duplicate)
            context.insert(note)
            context.onCommit { published.withLock { $0 += 1 } }
            #expect(throws: GraphStoreError.self) { try context.save() }
            #expect(published.value == 0)

            // Undo the offending insert without rolling back: the action is still registered.
            context.delete(ExampleModel.Tag.self, id: duplicate.id)
            try context.save()
            try container.checkInvariants()
            #expect(published.value == 1)
            #expect(container.newBackgroundContext().model(Note.self, id: note.id) == note)

            context.insert(Tag(name: "another"))
            try context.save()
            try container.checkInvariants()
            #expect(published.value == 1)
        }
    }

    /// An event handler may write through the context that published it (say, an outbox
    /// entry): actions run after the save has released the context.
    @Test(arguments: StoreKind.allCases)
    func anActionMaySaveItsOwnContextAgain(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let context = container.newBackgroundContext()
            let note = Note(text: "order placed", createdAt: Fixtures.epoch)
            let followUp = Note(text: "receipt sent", createdAt: Fixtures.epoch)
            let log = Guarded<[String]>([])
            context.insert(note)
            context.onCommit {
                context.insert(followUp)
                context.onCommit { log.withLock { $0.append("follow-up committed") } }
                do {
                    try context.save()
                } catch {
                    log.withLock { $0.append("follow-up failed: \(error)") }
                }
            }
            try context.save()
            try container.checkInvariants()
            #expect(log.value == ["follow-up committed"])
            #expect(container.version == 3)
            let reader = container.newBackgroundContext()
            #expect(reader.model(Note.self, id: note.id) == note)
            #expect(reader.model(Note.self, id: followUp.id) == followUp)
            #expect(!context.hasChanges)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func actionsRunInRegistrationOrder(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let context = container.newBackgroundContext()
            let order = Guarded<[Int]>([])
            context.insert(Note(text: "n", createdAt: Fixtures.epoch))
            for n in 0..<5 { context.onCommit { order.withLock { $0.append(n) } } }
            try context.save()
            try container.checkInvariants()
            #expect(order.value == [0, 1, 2, 3, 4])
        }
    }
}
