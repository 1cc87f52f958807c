import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// An entity with no unique constraint and no relationship in or out has its conflicts checked
/// while the commit writes; the outcomes must be those of every other entity.
@Suite struct StandaloneEntityConflictTests {
    struct Counter: Entity, Hashable {
        var id: Int
        var value: Int
    }

    static let types: [any Entity.Type] = [Counter.self, Note.self, ExampleModel.Tag.self]

    static func seed(_ container: GraphContainer) throws {
        let main = container.mainContext
        for id in 0..<4 { main.insert(Counter(id: id, value: 0)) }
        try main.save()
    }

    /// Context A changes counters 0, 1 and deletes 2's base object elsewhere; B saves first.
    static func race(_ policy: MergePolicy, in container: GraphContainer) throws -> GraphContext {
        let a = container.newBackgroundContext(), b = container.newBackgroundContext()
        a.mergePolicy = policy
        a.insert(Counter(id: 0, value: 10))   // conflicts: B updates 0
        a.insert(Counter(id: 1, value: 11))   // no conflict
        a.insert(Counter(id: 2, value: 12))   // conflicts: B deletes 2
        a.insert(Counter(id: 9, value: 19))   // conflicts: B inserts 9
        b.insert(Counter(id: 0, value: 20))
        b.delete(Counter.self, id: 2)
        b.insert(Counter(id: 9, value: 29))
        try b.save()
        return a
    }

    static func values(_ container: GraphContainer) throws -> [Int: Int] {
        Dictionary(uniqueKeysWithValues: try container.mainContext.fetch(FetchDescriptor<Counter>()).map { ($0.id, $0.value) })
    }

    @Test(arguments: StoreKind.allCases)
    func errorListsEveryConflictAndCommitsNothing(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let a = try Self.race(.error, in: container)
            let before = try Self.values(container)
            #expect {
                try a.save()
            } throws: { error in
                guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
                let kinds = Dictionary(uniqueKeysWithValues: conflicts.map { ($0.id, $0.kind) })
                return kinds == ["0": .updatedElsewhere, "2": .deletedElsewhere, "9": .insertedElsewhere]
            }
            #expect(try Self.values(container) == before)
            try container.checkInvariants()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func errorAlsoListsStandaloneConflictsWhenAnotherEntityConflicts(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let note = Note(text: "n")
            container.mainContext.insert(note)
            try container.mainContext.save()
            let a = try Self.race(.error, in: container)
            var changed = note
            changed.text = "a"
            a.insert(changed)
            var other = note
            other.text = "b"
            container.mainContext.insert(other)
            try container.mainContext.save()
            #expect {
                try a.save()
            } throws: { error in
                guard case .mergeConflict(let conflicts) = error as? GraphStoreError else { return false }
                return Set(conflicts.map(\.entity)) == ["Note", "Counter"] && conflicts.count == 4
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func storeWinsDropsOnlyTheConflictingChanges(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let a = try Self.race(.storeWins, in: container)
            try a.save()
            #expect(try Self.values(container) == [0: 20, 1: 11, 3: 0, 9: 29])
            try container.checkInvariants()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func contextWinsOverwrites(store: StoreKind) async throws {
        try await withContainer(store, for: Self.types) { container in
            try Self.seed(container)
            let a = try Self.race(.contextWins, in: container)
            try a.save()
            #expect(try Self.values(container) == [0: 10, 1: 11, 2: 12, 3: 0, 9: 19])
            try container.checkInvariants()
        }
    }
}
