import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A child context changed again, from another thread, while its save pushes the same object
/// into its parent: the newer change is based through the parent's change that took the pushed
/// one, as a change made just after the save would be. The parent's save of the pushed value,
/// then the child's next save and the parent's, neither conflict with the context's own saves
/// nor drop the newer value.
@Suite struct ChildChangedDuringItsSaveTests {
    struct Item: Entity {
        var id: Int
        var value: Int
    }

    @Test(arguments: [MergePolicy.error, .storeWins])
    func aChangeMadeDuringTheChildsSaveReachesTheStore(policy: MergePolicy) async throws {
        let rounds = 100
        let container = try GraphContainer(for: [Item.self], store: .inMemory)
        for round in 0..<rounds {
            let seeder = container.newBackgroundContext()
            seeder.insert(Item(id: round, value: 0))
            try seeder.save()
            let parent = container.newBackgroundContext()
            parent.mergePolicy = policy
            let child = parent.newChildContext()
            child.mergePolicy = policy
            _ = child.model(Item.self, id: round)
            child.insert(Item(id: round, value: 1))
            // The child saves on one thread while another changes the object again.
            async let saving: Void = offCooperativePool { try child.save() }
            async let changing: Void = offCooperativePool { child.insert(Item(id: round, value: 2)) }
            _ = try await (saving, changing)
            try parent.save()
            try child.save()
            try parent.save()
            let stored = container.newBackgroundContext().model(Item.self, id: round)?.value
            #expect(stored == 2, "round \(round): stored \(String(describing: stored))")
            if stored != 2 { return }
        }
    }
}
