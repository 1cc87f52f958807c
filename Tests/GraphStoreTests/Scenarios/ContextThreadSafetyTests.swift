import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A reading whose unique key is a computed property, so a test can run code while a save
/// commits (unique keys are evaluated under the commit).
private struct Gauge: Entity {
    var id: UUID
    var reading: Int

    /// Runs once, the next time a unique key is computed, then clears itself.
    static let whileCommitting = Guarded<(@Sendable () -> Void)?>(nil)

    var commitKey: String {
        let hook = Self.whileCommitting.withLock { hook in
            defer { hook = nil }
            return hook
        }
        hook?()
        return id.uuidString
    }

    static var uniqueConstraints: [UniqueConstraint<Gauge>] { [UniqueConstraint(\.commitKey)] }
}

/// An entity with no relationship and no unique constraint.
private struct Meter: Entity {
    var id: Int
    var reading: Int
}

/// A context is `Sendable` and safe to use from many tasks at once: no change is lost when
/// tasks insert while others save, and `perform` blocks never overlap.
@Suite struct ContextThreadSafetyTests {
    @Test(arguments: StoreKind.allCases)
    func insertsFromManyTasksSurviveConcurrentSavesOfTheSameContext(store: StoreKind) async throws {
        try await withTimeout(seconds: deadlockBound) {
            try await withContainer(store) { container in
                let shared = container.newBackgroundContext()
                let tasks = 4, notesPerTask = 250
                let inserted = try await withThrowingTaskGroup(of: [UUID].self) { group in
                    for task in 0..<tasks {
                        group.addTask {
                            var ids: [UUID] = []
                            for n in 0..<notesPerTask {
                                let note = Note(text: "task \(task) note \(n)", createdAt: Fixtures.epoch)
                                shared.insert(note)
                                ids.append(note.id)
                                // Half of the tasks save now and then, while the others keep inserting.
                                if task % 2 == 0, n % 25 == 24 { try shared.save() }
                            }
                            return ids
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                try shared.save()
                try container.checkInvariants()
                #expect(!shared.hasChanges)
                #expect(container.count(of: Note.self) == tasks * notesPerTask)
                let stored = Set(try container.newBackgroundContext().fetchIdentifiers(FetchDescriptor<Note>()))
                #expect(stored == Set(inserted))
            }
        }
    }

    /// The tests that change a context from inside its own save, through `Gauge`'s hook.
    ///
    /// Serialized: `Gauge.whileCommitting` is one hook for the whole process, so no two of
    /// these tests (or two stores' cases of one) may set and consume it at the same time.
    @Suite(.serialized) struct DuringASave {
        /// An object changed again while a save of the same context commits it: the next save
        /// writes the newer value, and does not conflict with the context's own commit.
        @Test(arguments: StoreKind.allCases)
        func aChangeMadeAgainDuringASaveIsSavedNextWithoutConflict(store: StoreKind) async throws {
            try await withContainer(store, for: exampleModel + [Gauge.self]) { container in
                let context = container.newBackgroundContext()
                #expect(context.mergePolicy == .error)
                let id = UUID()
                context.insert(Gauge(id: id, reading: 1))
                try context.save()
                try container.checkInvariants()

                context.insert(Gauge(id: id, reading: 2))
                // While the save below commits reading 2, the context changes the gauge again.
                Gauge.whileCommitting.withLock { $0 = { context.insert(Gauge(id: id, reading: 3)) } }
                try context.save()
                try container.checkInvariants()
                #expect(Gauge.whileCommitting.value == nil, "the hook did not run during the save")
                #expect(container.newBackgroundContext().model(Gauge.self, id: id)?.reading == 2)
                #expect(context.hasChanges)

                try context.save()
                try container.checkInvariants()
                #expect(!context.hasChanges)
                #expect(container.newBackgroundContext().model(Gauge.self, id: id)?.reading == 3)
            }
        }

        /// The same for an entity whose upserts a save writes straight from the context's log (no
        /// relationship, no unique constraint): the change made during the save stays pending, is
        /// based on what the save wrote, and a new object inserted meanwhile is saved next.
        @Test(arguments: StoreKind.allCases)
        func aLoggedChangeMadeAgainDuringASaveIsSavedNextWithoutConflict(store: StoreKind) async throws {
            try await withContainer(store, for: exampleModel + [Gauge.self, Meter.self]) { container in
                let context = container.newBackgroundContext()
                context.insert(Meter(id: 1, reading: 1))
                try context.save()

                context.insert(Meter(id: 1, reading: 2))
                context.insert(Gauge(id: UUID(), reading: 0))
                Gauge.whileCommitting.withLock {
                    $0 = {
                        context.insert(Meter(id: 1, reading: 3))
                        context.insert(Meter(id: 2, reading: 3))
                    }
                }
                try context.save()
                #expect(Gauge.whileCommitting.value == nil, "the hook did not run during the save")
                #expect(container.newBackgroundContext().model(Meter.self, id: 1)?.reading == 2)
                #expect(container.newBackgroundContext().model(Meter.self, id: 2) == nil)
                #expect(context.hasChanges)

                try context.save()
                try container.checkInvariants()
                #expect(!context.hasChanges)
                #expect(container.newBackgroundContext().model(Meter.self, id: 1)?.reading == 3)
                #expect(container.newBackgroundContext().model(Meter.self, id: 2)?.reading == 3)
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func changesRacingSavesOfTheSameContextNeverConflictWithThem(store: StoreKind) async throws {
        try await withTimeout(seconds: deadlockBound) {
            try await withContainer(store) { container in
                let shared = container.newBackgroundContext()
                let post = Fixtures.posts(1)[0]
                shared.insert(post)
                try shared.save()
                let rounds = 5_000
                let saveErrors = Guarded<[String]>([])
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for round in 1...rounds {
                            var changed = post
                            changed.noteCount = round
                            shared.insert(changed)
                        }
                    }
                    group.addTask {
                        for _ in 0..<rounds / 5 {
                            do { try shared.save() } catch { saveErrors.withLock { $0.append("\(error)") } }
                        }
                    }
                }
                try shared.save()
                try container.checkInvariants()
                #expect(saveErrors.value.isEmpty, "\(saveErrors.value.count) saves failed; first: \(saveErrors.value.first ?? "")")
                #expect(container.newBackgroundContext().model(Post.self, id: post.id)?.noteCount == rounds)
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func performBlocksRunOneAtATimeAndPerformAndWaitIsReentrant(store: StoreKind) async throws {
        try await withTimeout(seconds: deadlockBound) {
            try await withContainer(store) { container in
                let context = container.newBackgroundContext()
                let state = Guarded((active: 0, maxActive: 0, runs: 0))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for n in 0..<50 {
                        group.addTask {
                            try await context.perform {
                                state.withLock { $0.active += 1; $0.maxActive = max($0.maxActive, $0.active) }
                                // Nested performAndWait on the same context runs in place.
                                context.performAndWait {
                                    context.insert(Tag(name: "tag \(n)"))
                                }
                                try context.save()
                                state.withLock { $0.active -= 1; $0.runs += 1 }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                try container.checkInvariants()
                #expect(state.value.runs == 50)
                #expect(state.value.maxActive == 1)
                #expect(container.count(of: ExampleModel.Tag.self) == 50)
                let value = try context.performAndWait { () throws -> Int in try context.fetchCount(FetchDescriptor<ExampleModel.Tag>()) }
                #expect(value == 50)
            }
        }
    }
}
