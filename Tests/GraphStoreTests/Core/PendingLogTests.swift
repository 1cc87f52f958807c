import Foundation
import GraphStore
import GraphStoreTestSupport
import PropertyBased
import Testing

/// A top-level context logs its changes and reads each one's base later, from the table of the
/// store version it was made on; a save writes a standalone entity's log straight into the new
/// table (a large batch into an empty table on two threads). Every outcome must be the one a
/// context that looks each change up at once gives: the model below is that context.
@Suite struct PendingLogTests {
    /// No relationship in or out, no unique constraint: its upserts take the save's direct path.
    struct Counter: CounterEntity {
        var id: Int
        var value: Int
    }

    /// The same fields, but referenced by `Holder`: its changes take the general path.
    struct LinkedCounter: CounterEntity {
        var id: Int
        var value: Int
    }

    struct Holder: Entity {
        var id: Int
        var counterIDs: [Int]
        static var relationships: [Relationship<Holder>] { [.toMany(\.counterIDs, LinkedCounter.self, deleteRule: .nullify)] }
    }

    static let types: [any Entity.Type] = [Counter.self, LinkedCounter.self, Holder.self]

    enum Step: Sendable, CustomStringConvertible {
        case insert(Int, Int)
        case insertMany([Int], Int)
        case delete(Int)
        /// `delete(model:)`: a clear marker, after which the context records changes eagerly.
        case deleteAll
        /// A child context's insert, saved into the context.
        case childInserts(Int, Int)
        case otherWrites(Int, Int)
        case otherDeletes(Int)
        /// A fetch of every object: reads the whole table.
        case fetch
        /// `model(_:id:)`: reads one id.
        case read(Int)
        /// A fetch with a predicate: reads the ids it returns.
        case fetchEven
        case save
        case rollback

        var description: String {
            switch self {
            case .insert(let id, let value): "insert \(id)=\(value)"
            case .insertMany(let ids, let value): "insert \(ids)=\(value)"
            case .delete(let id): "delete \(id)"
            case .deleteAll: "delete all"
            case .childInserts(let id, let value): "child inserts \(id)=\(value)"
            case .otherWrites(let id, let value): "other writes \(id)=\(value)"
            case .otherDeletes(let id): "other deletes \(id)"
            case .fetch: "fetch"
            case .read(let id): "read \(id)"
            case .fetchEven: "fetch even"
            case .save: "save"
            case .rollback: "rollback"
            }
        }
    }

    /// Few ids, so that changes hit the same objects again and race with other contexts.
    static let id = Gen<Int>.int(in: 0...5)
    static let value = Gen<Int>.int(in: 0...999)
    static let step = Gen<Step>.frequency(
        (weight: 6, gen: zip(id, value).map { Step.insert($0, $1) }),
        (weight: 2, gen: zip(id.array(of: 1...4), value).map { Step.insertMany($0, $1) }),
        (weight: 2, gen: id.map { Step.delete($0) }),
        (weight: 1, gen: Gen.always(Step.deleteAll)),
        (weight: 1, gen: zip(id, value).map { Step.childInserts($0, $1) }),
        (weight: 3, gen: zip(id, value).map { Step.otherWrites($0, $1) }),
        (weight: 1, gen: id.map { Step.otherDeletes($0) }),
        (weight: 2, gen: Gen.always(Step.fetch)),
        (weight: 2, gen: id.map { Step.read($0) }),
        (weight: 1, gen: Gen.always(Step.fetchEven)),
        (weight: 3, gen: Gen.always(Step.save)),
        (weight: 1, gen: Gen.always(Step.rollback)))

    @Test(arguments: [MergePolicy.error, .contextWins, .storeWins])
    func standaloneEntityMatchesTheModel(policy: MergePolicy) async throws {
        await propertyCheck(count: 150, input: Self.step.array(of: 1...40)) { steps in
            try Self.run(steps, Counter.self, policy: policy)
        }
    }

    @Test(arguments: [MergePolicy.error, .contextWins, .storeWins])
    func referencedEntityMatchesTheModel(policy: MergePolicy) async throws {
        await propertyCheck(count: 150, input: Self.step.array(of: 1...40)) { steps in
            try Self.run(steps, LinkedCounter.self, policy: policy)
        }
    }

    /// Runs `steps` on a container's main context and on the model, comparing after each.
    static func run<E: CounterEntity>(_ steps: [Step], _ type: E.Type, policy: MergePolicy) throws {
        let container = try GraphContainer(for: types, store: .inMemory)
        let main = container.mainContext
        main.mergePolicy = policy
        var model = Model(policy: policy)
        for (index, step) in steps.enumerated() {
            let trace = "step \(index) \(step) of \(steps)"
            switch step {
            case .insert(let id, let value):
                main.insert(E(id: id, value: value))
                model.change(id, to: value)
            case .insertMany(let ids, let value):
                main.insert(contentsOf: ids.map { E(id: $0, value: value) })
                for id in ids { model.change(id, to: value) }
            case .delete(let id):
                main.delete(E.self, id: id)
                model.change(id, to: nil)
            case .deleteAll:
                _ = try main.delete(model: E.self)
                model.deleteAll()
            case .childInserts(let id, let value):
                let child = main.newChildContext()
                child.insert(E(id: id, value: value))
                try child.save()
                model.changeThroughChild(id, to: value)
            case .otherWrites(let id, let value):
                let other = container.newBackgroundContext()
                other.insert(E(id: id, value: value))
                try other.save()
                model.store(id, value)
            case .otherDeletes(let id):
                let other = container.newBackgroundContext()
                other.delete(E.self, id: id)
                try other.save()
                model.store(id, nil)
            case .fetch:
                #expect(try values(main, E.self) == model.seenByContext, "\(trace)")
                model.readAll()
            case .read(let id):
                #expect(main.model(E.self, id: id)?.value == model.seenByContext[id], "\(trace)")
                model.read([id])
            case .fetchEven:
                let even = try main.fetch(FetchDescriptor<E>(predicate: #Predicate { $0.value % 2 == 0 }))
                let expected = model.seenByContext.filter { $0.value % 2 == 0 }
                #expect(Dictionary(uniqueKeysWithValues: even.map { ($0.id, $0.value) }) == expected, "\(trace)")
                model.read(expected.keys)
            case .save:
                let expected = model.save()
                do {
                    try main.save()
                    #expect(expected == nil, "\(trace): expected a conflict on \(expected ?? [])")
                } catch GraphStoreError.mergeConflict(let conflicts) {
                    #expect(Set(conflicts.map(\.id)) == expected.map { Set($0.map(String.init)) }, "\(trace)")
                }
                #expect(main.hasChanges == !model.pending.isEmpty, "\(trace)")
            case .rollback:
                main.rollback()
                model.pending = [:]
                model.fromChild = []
                model.madeThrough = []
                model.markedOnly = []
                model.isMarked = false
                model.isMarkPure = false
            }
            #expect(try values(container.newBackgroundContext(), E.self) == model.committed, "\(trace)")
        }
        try container.checkInvariants()
    }

    static func values<E: CounterEntity>(_ context: GraphContext, _ type: E.Type) throws -> [Int: Int] {
        Dictionary(uniqueKeysWithValues: try context.fetch(FetchDescriptor<E>()).map { ($0.id, $0.value) })
    }

    /// A context that records each change's base when it is made: the reference behaviour.
    ///
    /// A change is based on the version the context last read of the id (a fetch of every
    /// object reads the whole table, absent ids included, and `model(_:id:)` and a fetch with a
    /// predicate read the ids they return, except the ids the context has its own pending change
    /// of) or last saved, else on the version stored when the context first changed it: a
    /// save is what the context last read of the ids it wrote, whether or not it read the
    /// entity before.
    struct Model {
        let policy: MergePolicy
        /// id → (value, version of the write).
        var objects: [Int: (value: Int, version: Int)] = [:]
        /// id → (value or nil for a deletion, version the change is based on).
        var pending: [Int: (value: Int?, base: Int?)] = [:]
        var writes = 0
        /// The versions of the last whole-table read (absent: no object then), if any.
        var whole: [Int: Int]?
        /// Reads of single ids since (nil: read while absent), and what saves left at them.
        var byID: [Int: Int?] = [:]
        /// Whether the context recorded a read of the entity (a fetch or `model(_:id:)` of an id
        /// its pending changes do not answer).
        var hasRead = false
        /// Pending ids holding a child's value the context has not read.
        var fromChild: Set<Int> = []
        /// Those of them the child made through the context's own change.
        var madeThrough: Set<Int> = []
        /// What the context knew of an id (version, nil for none) before it saved a child's value
        /// there that it has not read since: its own later changes are based on that.
        var unreadPrior: [Int: Int?] = [:]

        /// What the context knows of `id` for its own changes.
        func known(_ id: Int) -> Int?? {
            unreadPrior[id] ?? lastRead(id)
        }

        var committed: [Int: Int] { objects.mapValues(\.value) }

        var seenByContext: [Int: Int] {
            var seen = committed
            for (id, change) in pending { seen[id] = change.value }
            return seen
        }

        /// The version the context last read of `id`; `.none` when it never read it.
        func lastRead(_ id: Int) -> Int?? {
            if let read = byID[id] { return read }
            if let whole { return .some(whole[id]) }
            return .none
        }

        mutating func change(_ id: Int, to value: Int?) {
            var base = pending[id].map(\.base) ?? known(id) ?? objects[id]?.version
            let wasUnread = fromChild.remove(id) != nil, wasMadeThrough = madeThrough.remove(id) != nil
            if wasUnread, !wasMadeThrough {
                // Over a child's value the context never read: its copy is from before it.
                base = known(id) ?? base
            }
            pending[id] = (value, base)
            // An id the marker covers keeps the marker's base: still not one the context read.
            isMarkPure = false
        }

        /// A child that never read `id` changes it and saves into the context: based as the
        /// context's own change would be (on what the context read, not on what it knew before a
        /// child's value), a value the context has not read.
        mutating func changeThroughChild(_ id: Int, to value: Int?) {
            // What the context knew before the child's value: what it read, else its own
            // change's base.
            if unreadPrior[id] == nil, let knew = lastRead(id) ?? pending[id].map(\.base) { unreadPrior[id] = knew }
            let base = pending[id].map(\.base) ?? lastRead(id) ?? objects[id]?.version
            if pending[id] != nil { madeThrough.insert(id) } else { madeThrough.remove(id) }
            pending[id] = (value, base)
            fromChild.insert(id)
            isMarkPure = false
        }

        /// A fetch of every object: the ids the context's pending changes answer are not read
        /// from the store, so their changes' bases stay what the context last saw of them.
        mutating func readAll() {
            fromChild = []
            madeThrough = []
            if isMarked {
                // The fetch hides the marked objects: what the context knew of them stays. It
                // reads the objects stored since the marking, and keeps its changes' bases.
                var recorded = false
                for (id, change) in pending where !markedOnly.contains(id) {
                    byID[id] = .some(change.base)
                    unreadPrior[id] = nil
                    recorded = true
                }
                for (id, object) in objects where pending[id] == nil {
                    byID[id] = .some(object.version)
                    unreadPrior[id] = nil
                    recorded = true
                }
                if recorded { hasRead = true }
                return
            }
            whole = objects.mapValues(\.version)
            byID = [:]
            unreadPrior = [:]
            for (id, change) in pending { byID[id] = .some(change.base) }
            hasRead = true
        }

        /// Reads `ids`: those the context's pending changes do not answer.
        mutating func read(_ ids: some Sequence<Int>) {
            for id in ids {
                if let change = pending[id] {
                    // Reading a child's value makes it what the context knows.
                    madeThrough.remove(id)
                    guard fromChild.remove(id) != nil else { continue }
                    byID[id] = .some(change.base)
                } else {
                    byID[id] = .some(objects[id]?.version)
                }
                unreadPrior[id] = nil
                hasRead = true
            }
        }

        /// Whether a `delete(model:)` is pending (the context holds a clear marker).
        var isMarked = false
        /// The ids whose pending change is based on the version a marker holds, not on one the
        /// context read: the marker's own deletions, changes the marker stands for, and changes
        /// made after the marking of objects it covers.
        var markedOnly: Set<Int> = []
        /// Whether the marker stands alone: nothing changed since marking, in the context or
        /// the store, so the save drops the table whole (and the context then knows it empty).
        var isMarkPure = false

        /// The first `delete(model:)` before a save deletes every stored object (based on the
        /// version it has, or the one the context's earlier change of it was based on) and drops
        /// what the context only inserted; a second one reads and deletes what the context
        /// sees, id by id.
        mutating func deleteAll() {
            guard !isMarked else {
                readAll()
                for id in seenByContext.keys { change(id, to: nil) }
                return
            }
            isMarked = true
            fromChild = []
            madeThrough = []
            let keepsOlderBases = pending.contains { id, change in objects[id].map { $0.version != change.base } ?? false }
            for (id, object) in objects where pending[id] == nil {
                pending[id] = (nil, object.version)
                markedOnly.insert(id)
            }
            for (id, change) in pending {
                guard let stored = objects[id] else {
                    pending[id] = nil
                    continue
                }
                pending[id] = (nil, change.base)
                // A change based on the version the marker holds: the marker stands for it.
                if change.base == stored.version { markedOnly.insert(id) }
            }
            isMarkPure = !keepsOlderBases
        }

        mutating func store(_ id: Int, _ value: Int?) {
            // Deleting what is gone writes nothing.
            if value == nil, objects[id] == nil { return }
            writes += 1
            objects[id] = value.map { ($0, writes) }
            isMarkPure = false
        }

        /// Saves the pending changes; returns the conflicting ids when the save must throw.
        mutating func save() -> [Int]? {
            var conflicting: [Int] = []
            for (id, change) in pending {
                let stored = objects[id]?.version
                // Deleting what is already gone is not a conflict.
                if change.value == nil, stored == nil { continue }
                if stored != change.base { conflicting.append(id) }
            }
            if policy == .error, !conflicting.isEmpty { return conflicting.sorted() }
            let dropsTable = isMarked && isMarkPure && !objects.isEmpty
            // Its own change saved is what it knows; a child's value it has not read is not.
            for id in pending.keys where !fromChild.contains(id) && !(policy == .storeWins && conflicting.contains(id)) { unreadPrior[id] = nil }
            fromChild = []
            madeThrough = []
            for (id, change) in pending.sorted(by: { $0.key < $1.key }) where policy != .storeWins || !conflicting.contains(id) {
                store(id, change.value)
                // The context knows what it wrote, and that what it deleted is gone (even when
                // another save deleted it first).
                byID[id] = .some(objects[id]?.version)
            }
            if dropsTable {
                // Having read the entity, the context knows the dropped objects gone (recorded
                // above) and the rest of the table empty, and keeps what it read of other ids;
                // else it knows the dropped objects gone and forgets what its earlier saves
                // left at other ids, gone with the table.
                if hasRead {
                    if whole == nil { whole = [:] }
                } else {
                    byID = byID.filter { pending[$0.key] != nil }
                }
                unreadPrior = [:]
            }
            pending = [:]
            markedOnly = []
            isMarked = false
            isMarkPure = false
            return nil
        }
    }
}

/// The counters the model runs on.
protocol CounterEntity: Entity, Hashable where ID == Int {
    init(id: Int, value: Int)
    var value: Int { get }
}
