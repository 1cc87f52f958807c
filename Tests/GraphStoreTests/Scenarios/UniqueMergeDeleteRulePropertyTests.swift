import Foundation
import GraphStore
import GraphStoreTestSupport
import PropertyBased
import Testing

/// One save that mixes unique merges with delete rules, at random, checked against what the
/// context asked for: a shelf's deletion takes its tabs along (`.cascade`), a tab has a unique
/// name, and a sheet lists tabs (`.nullify`).
@Suite struct UniqueMergeDeleteRulePropertyTests {
    struct Shelf: Entity, Hashable {
        var id: Int
    }

    struct Tab: Entity, Hashable {
        var id: Int
        var name: String
        var shelfID: Int?

        static var uniqueConstraints: [UniqueConstraint<Tab>] { [UniqueConstraint(\.name)] }
        static var relationships: [Relationship<Tab>] { [.toOne(\.shelfID, Shelf.self, deleteRule: .cascade)] }
    }

    struct Sheet: Entity, Hashable {
        var id: Int
        var tabIDs: [Int]

        static var relationships: [Relationship<Sheet>] { [.toMany(\.tabIDs, Tab.self, deleteRule: .nullify)] }
    }

    static let types: [any Entity.Type] = [Shelf.self, Tab.self, Sheet.self]
    static let names = ["a", "b", "c", "d", "e"]
    static let shelves = 0...2
    /// Stored tabs are 0...3 (named a...d); the context inserts 10...13.
    static let tabIDs = [0, 1, 2, 3, 10, 11, 12, 13]

    enum Step: Sendable, CustomStringConvertible {
        case insertTab(id: Int, name: Int, shelf: Int)
        case rename(tab: Int, name: Int)
        case move(tab: Int, shelf: Int)
        case deleteTab(Int)
        case deleteShelf(Int)
        case insertSheet(id: Int, tabs: [Int])

        var description: String {
            switch self {
            case let .insertTab(id, name, shelf): "insert tab \(id) \(names[name]) on \(shelf)"
            case let .rename(tab, name): "rename tab \(tab) to \(names[name])"
            case let .move(tab, shelf): "move tab \(tab) to \(shelf)"
            case let .deleteTab(tab): "delete tab \(tab)"
            case let .deleteShelf(shelf): "delete shelf \(shelf)"
            case let .insertSheet(id, tabs): "insert sheet \(id) \(tabs)"
            }
        }
    }

    /// A shelf, or -1 for none.
    static let shelf = Gen<Int>.int(in: -1...2)
    static let name = Gen<Int>.int(in: 0...(names.count - 1))
    static let tab = Gen<Int>.int(in: 0...(tabIDs.count - 1)).map { tabIDs[$0] }
    static let step = Gen<Step>.frequency(
        (weight: 4, gen: zip(Gen<Int>.int(in: 10...13), name, shelf).map { Step.insertTab(id: $0, name: $1, shelf: $2) }),
        (weight: 3, gen: zip(tab, name).map { Step.rename(tab: $0, name: $1) }),
        (weight: 2, gen: zip(tab, shelf).map { Step.move(tab: $0, shelf: $1) }),
        (weight: 1, gen: tab.map { Step.deleteTab($0) }),
        (weight: 2, gen: Gen<Int>.int(in: shelves).map { Step.deleteShelf($0) }),
        (weight: 3, gen: zip(Gen<Int>.int(in: 20...21), tab.array(of: 0...3)).map { Step.insertSheet(id: $0, tabs: $1) }))
    /// Each stored tab's shelf, and each stored sheet's tabs.
    static let seed = zip(shelf.array(of: 4...4), tab.map { $0 % 4 }.array(of: 0...3).array(of: 2...2))

    @Test(arguments: MergePolicy.allCases)
    func oneSaveLeavesWhatItsContextAskedFor(policy: MergePolicy) async throws {
        await propertyCheck(count: 300, input: Self.seed, Self.step.array(of: 1...12)) { seed, steps in
            try Self.run(seed: seed, steps: steps, policy: policy)
        }
    }

    // MARK: - Running and checking

    static func run(seed: ([Int], [[Int]]), steps: [Step], policy: MergePolicy) throws {
        let container = try GraphContainer(for: types, store: .inMemory)
        let main = container.mainContext
        for shelf in shelves { main.insert(Shelf(id: shelf)) }
        for (id, shelf) in seed.0.enumerated() { main.insert(Tab(id: id, name: names[id], shelfID: shelf < 0 ? nil : shelf)) }
        for (id, tabs) in seed.1.enumerated() { main.insert(Sheet(id: 20 + id, tabIDs: tabs)) }
        try main.save()
        let before = try State(container.newBackgroundContext())

        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        var deletedShelves: Set<Int> = []
        for step in steps {
            switch step {
            case let .insertTab(id, name, shelf):
                context.insert(Tab(id: id, name: names[name], shelfID: shelf < 0 ? nil : shelf))
            case let .rename(id, name):
                guard var tab = context.model(Tab.self, id: id) else { continue }
                tab.name = names[name]
                context.insert(tab)
            case let .move(id, shelf):
                guard var tab = context.model(Tab.self, id: id) else { continue }
                tab.shelfID = shelf < 0 ? nil : shelf
                context.insert(tab)
            case let .deleteTab(id):
                context.delete(Tab.self, id: id)
            case let .deleteShelf(shelf):
                context.delete(Shelf.self, id: shelf)
                deletedShelves.insert(shelf)
            case let .insertSheet(id, tabs):
                context.insert(Sheet(id: id, tabIDs: tabs.filter { context.model(Tab.self, id: $0) != nil }))
            }
        }
        // What the context asked for: its view before the save.
        let asked = try State(context)
        do {
            try context.save()
        } catch let error as GraphStoreError {
            guard case .uniqueConstraintViolation = error, policy == .error else {
                Issue.record("\(policy): unexpected \(error) for \(steps)")
                return
            }
            #expect(try State(container.newBackgroundContext()) == before, "a refused save changed the store")
            return
        }
        try container.checkInvariants()
        let after = try State(container.newBackgroundContext())
        /// A tab the save must delete: deleted by the context (so not in its view) or on a
        /// shelf it deletes.
        func isDoomed(_ id: Int) -> Bool {
            guard let tab = asked.tabs[id] else { return true }
            return tab.shelfID.map(deletedShelves.contains) ?? false
        }
        let holders = Dictionary(after.tabs.values.map { ($0.name, $0.id) }, uniquingKeysWith: { first, _ in first })

        #expect(Set(after.shelves) == Set(before.shelves).subtracting(deletedShelves), "\(policy): shelves after \(steps)")
        for tab in asked.tabs.values where !isDoomed(tab.id) {
            #expect(holders[tab.name] != nil, "\(policy): no tab holds \(tab.name), which tab \(tab.id) was saved with, after \(steps)")
        }
        for tab in before.tabs.values where asked.tabs[tab.id] == tab && !isDoomed(tab.id) {
            #expect(holders[tab.name] == tab.id, "\(policy): untouched tab \(tab.id) (\(tab.name)) lost its name after \(steps)")
        }
        for tab in after.tabs.values {
            #expect(tab.shelfID.map(deletedShelves.contains) != true, "\(policy): tab \(tab.id) is on deleted shelf \(tab.shelfID!) after \(steps)")
        }
        for sheet in asked.sheets.values {
            // Each listed tab: gone if the save deletes it, else the tab that holds its name.
            let expected = Set(sheet.tabIDs.compactMap { id in isDoomed(id) ? nil : asked.tabs[id].flatMap { holders[$0.name] } })
            #expect(after.sheets[sheet.id].map { Set($0.tabIDs) } == expected, "\(policy): sheet \(sheet.id) after \(steps)")
        }
    }

    /// Every object one context sees.
    struct State: Equatable {
        var shelves: [Int]
        var tabs: [Int: Tab]
        var sheets: [Int: Sheet]

        init(_ context: GraphContext) throws {
            shelves = try context.fetch(FetchDescriptor<Shelf>()).map(\.id).sorted()
            tabs = Dictionary(uniqueKeysWithValues: try context.fetch(FetchDescriptor<Tab>()).map { ($0.id, $0) })
            sheets = Dictionary(uniqueKeysWithValues: try context.fetch(FetchDescriptor<Sheet>()).map { ($0.id, $0) })
        }
    }
}
