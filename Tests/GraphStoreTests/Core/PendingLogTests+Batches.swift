import Foundation
import GraphStore
import GraphStoreTestSupport
import PropertyBased
import Testing

extension PendingLogTests {
    // MARK: - Large batches

    /// 20,000 new counters, a few hundred of them changed again before the save, into an empty
    /// table (built on two threads) and into a table holding one object (written in order):
    /// the same objects, each id reported once, in the order of its first change.
    @Test(arguments: [false, true])
    func aLargeBatchKeepsTheLastValueAndReportsEachIDOnceInOrder(batch: Bool) async throws {
        let ids = (0..<20_000).map { ($0 * 7_919) % 20_000 }
        let again = ids.prefix(700).reversed().map { Counter(id: $0, value: -$0) }
        for seeded in [false, true] {
            let container = try GraphContainer(for: Self.types, store: .inMemory)
            let stream = container.changes
            if seeded {
                container.mainContext.insert(Counter(id: 50_000, value: 1))
                try container.mainContext.save()
            }
            let main = container.mainContext
            let first = ids.map { Counter(id: $0, value: $0) }
            if batch {
                main.insert(contentsOf: first)
                main.insert(contentsOf: again)
            } else {
                for counter in first + again { main.insert(counter) }
            }
            try main.save()
            try await container.close()
            var changes: [GraphChange] = []
            for await change in stream { changes.append(change) }

            let written = try #require(changes.last)
            #expect(written.insertedIDs(Counter.self) == ids, "seeded: \(seeded)")
            #expect(written.updatedCount == 0 && written.deletedCount == 0)
            let values = try Self.values(container.newBackgroundContext(), Counter.self)
            #expect(values.count == 20_000 + (seeded ? 1 : 0))
            let changedAgain = Set(again.map(\.id))
            #expect(ids.allSatisfy { values[$0] == (changedAgain.contains($0) ? -$0 : $0) })
            try container.checkInvariants()
        }
    }

    /// A large batch logged before another context filled the table: the store moved on, so
    /// the bases are read from the table the batch was logged on, and every id the other
    /// context inserted in between conflicts.
    @Test func aLargeBatchConflictsWithObjectsInsertedSinceItWasLogged() async throws {
        let container = try GraphContainer(for: Self.types, store: .inMemory)
        let main = container.mainContext
        main.insert(contentsOf: (0..<20_000).map { Counter(id: $0, value: 1) })
        let other = container.newBackgroundContext()
        other.insert(contentsOf: [Counter(id: 3, value: 2), Counter(id: 19_999, value: 2)])
        try other.save()
        #expect {
            try main.save()
        } throws: { error in
            guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
            return conflicts.map(\.id).sorted() == ["19999", "3"] && conflicts.allSatisfy { $0.kind == .insertedElsewhere }
        }
        #expect(try main.fetchCount(FetchDescriptor<Counter>()) == 20_000)
        main.mergePolicy = .storeWins
        try main.save()
        let values = try Self.values(container.newBackgroundContext(), Counter.self)
        #expect(values.count == 20_000 && values[3] == 2 && values[19_999] == 2 && values[4] == 1)
        try container.checkInvariants()
    }

    // MARK: - Threads

    /// Four threads log changes into one context and two of them save it, while two more save
    /// other ids of the same entity through their own contexts, so the store moves on between
    /// almost every logged change: the context's saves never conflict with each other or with
    /// the disjoint writers, and nothing is lost.
    @Test func loggingThreadsRaceSavesOfTheSameEntity() async throws {
        let container = try GraphContainer(for: Self.types, store: .inMemory)
        let shared = container.newBackgroundContext()
        let failures = Guarded<[String]>([])
        let rounds = 1_500
        // Real threads, all at once (a concurrentPerform on two cores would run them two by
        // two), awaited without blocking a thread of the test runner's pool.
        let finished = DispatchGroup()
        for worker in 0..<6 {
            finished.enter()
            Thread {
                defer { finished.leave() }
                do {
                    if worker >= 4 {
                        // Another context's saves of ids 1,000 and up.
                        for round in 0..<rounds {
                            let other = container.newBackgroundContext()
                            other.insert(Counter(id: 1_000 + (worker - 4) * 50 + round % 50, value: round))
                            try other.save()
                        }
                        return
                    }
                    for round in 0..<rounds {
                        if round % 3 == 0 {
                            shared.insert(contentsOf: (0..<5).map { Counter(id: (round + $0 * 7) % 200, value: round) })
                        } else {
                            shared.insert(Counter(id: (round * 13 + worker) % 200, value: round))
                        }
                        if round % 50 == 0 { _ = shared.model(Counter.self, id: round % 200) }
                        if worker % 2 == 0, round % 40 == 39 { try shared.save() }
                    }
                } catch {
                    failures.withLock { $0.append("worker \(worker): \(error)") }
                }
            }.start()
        }
        await withCheckedContinuation { continuation in
            finished.notify(queue: .global()) { continuation.resume() }
        }
        try shared.save()
        #expect(failures.value.isEmpty, "\(failures.value)")
        #expect(!shared.hasChanges)
        let values = try Self.values(container.newBackgroundContext(), Counter.self)
        #expect(values.count == 300)
        // Each writer's last round wrote each of its ids last.
        for writer in 0..<2 {
            for round in (rounds - 50)..<rounds {
                #expect(values[1_000 + writer * 50 + round % 50] == round)
            }
        }
        try container.checkInvariants()
    }

    // MARK: - Reading a log

    /// A child context reads its parent's logged changes, and its save lands in the parent's
    /// changes with the parent's bases.
    @Test(arguments: StoreKind.allCases)
    func aChildSeesAndExtendsItsParentsLoggedChanges(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            let main = container.mainContext
            main.insert(Counter(id: 1, value: 1))
            try main.save()

            main.insert(Counter(id: 1, value: 2))
            main.insert(Counter(id: 2, value: 2))
            let child = main.newChildContext()
            #expect(child.model(Counter.self, id: 1)?.value == 2)
            #expect(try child.fetchCount(FetchDescriptor<Counter>()) == 2)
            child.insert(Counter(id: 1, value: 3))
            child.insert(Counter(id: 3, value: 3))
            try child.save()
            main.insert(Counter(id: 4, value: 4))
            #expect(try Self.values(main, Counter.self) == [1: 3, 2: 2, 3: 3, 4: 4])

            // Counter 1 is based on the version the parent first changed: another context's
            // update in between conflicts.
            let other = container.newBackgroundContext()
            other.insert(Counter(id: 1, value: 9))
            try other.save()
            #expect {
                try main.save()
            } throws: { error in
                guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
                return conflicts.map(\.id) == ["1"] && conflicts[0].kind == .updatedElsewhere
            }
            main.mergePolicy = .contextWins
            try main.save()
            #expect(try Self.values(container.newBackgroundContext(), Counter.self) == [1: 3, 2: 2, 3: 3, 4: 4])
            try container.checkInvariants()
        }
    }
}
