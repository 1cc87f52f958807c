import Foundation
import GraphStore
import GraphStoreTestSupport
import PropertyBased
import Testing

/// Several contexts read, change and save the same few objects in random order; every save's
/// outcome and the stored graph must match a reference model of the semantics: a change is
/// based on what its context last read or saved of the id (or, neither, on the object stored
/// when it first changed it), and the policy decides a conflicting save. Under `.error` no save is ever
/// lost without a conflict being thrown.
@Suite struct ContextInterleavingTests {
    /// No relationship in or out: its upserts take the save's direct path.
    struct Pair: PairEntity {
        var id: Int
        var a: Int
        var b: Int
    }

    /// Referenced by `PairHolder`: its changes take the general path.
    struct LinkedPair: PairEntity {
        var id: Int
        var a: Int
        var b: Int
    }

    struct PairHolder: Entity {
        var id: Int
        var pairIDs: [Int]
        static var relationships: [Relationship<PairHolder>] { [.toMany(\.pairIDs, LinkedPair.self, deleteRule: .nullify)] }
    }

    static let types: [any Entity.Type] = [Pair.self, LinkedPair.self, PairHolder.self]
    static let contextCount = 3

    enum Field: Sendable { case a, b }

    enum Step: Sendable, CustomStringConvertible {
        /// `model(_:id:)`.
        case read(context: Int, id: Int)
        /// A fetch of every object.
        case fetchAll(context: Int)
        /// A fetch with a predicate: reads what it returns.
        case fetchEvenA(context: Int)
        /// Changes one field of the context's copy of the object (the value it last read or
        /// wrote; a new object when it has none) and inserts it.
        case edit(context: Int, id: Int, field: Field, value: Int)
        /// The same, in a child context of `context` that reads the object first and saves.
        case editInChild(context: Int, id: Int, field: Field, value: Int)
        case delete(context: Int, id: Int)
        case save(context: Int)
        case rollback(context: Int)

        var description: String {
            switch self {
            case let .read(c, id): "c\(c) read \(id)"
            case let .fetchAll(c): "c\(c) fetch all"
            case let .fetchEvenA(c): "c\(c) fetch even a"
            case let .edit(c, id, field, value): "c\(c) edit \(id).\(field)=\(value)"
            case let .editInChild(c, id, field, value): "c\(c) child edits \(id).\(field)=\(value)"
            case let .delete(c, id): "c\(c) delete \(id)"
            case let .save(c): "c\(c) save"
            case let .rollback(c): "c\(c) rollback"
            }
        }
    }

    static let context = Gen<Int>.int(in: 0...(contextCount - 1))
    static let id = Gen<Int>.int(in: 0...3)
    static let value = Gen<Int>.int(in: 0...99)
    static let field = Gen<Bool>.bool.map { $0 ? Field.a : .b }
    static let step = Gen<Step>.frequency(
        (weight: 4, gen: zip(context, id).map { Step.read(context: $0, id: $1) }),
        (weight: 2, gen: context.map { Step.fetchAll(context: $0) }),
        (weight: 1, gen: context.map { Step.fetchEvenA(context: $0) }),
        (weight: 6, gen: zip(context, id, field, value).map { Step.edit(context: $0, id: $1, field: $2, value: $3) }),
        (weight: 1, gen: zip(context, id, field, value).map { Step.editInChild(context: $0, id: $1, field: $2, value: $3) }),
        (weight: 2, gen: zip(context, id).map { Step.delete(context: $0, id: $1) }),
        (weight: 5, gen: context.map { Step.save(context: $0) }),
        (weight: 1, gen: context.map { Step.rollback(context: $0) }))

    @Test(arguments: MergePolicy.allCases)
    func standaloneEntityMatchesTheModel(policy: MergePolicy) async throws {
        await propertyCheck(count: 120, input: Self.step.array(of: 1...50)) { steps in
            try Self.run(steps, Pair.self, policy: policy)
        }
    }

    @Test(arguments: MergePolicy.allCases)
    func referencedEntityMatchesTheModel(policy: MergePolicy) async throws {
        await propertyCheck(count: 120, input: Self.step.array(of: 1...50)) { steps in
            try Self.run(steps, LinkedPair.self, policy: policy)
        }
    }

    /// Runs `steps` on contexts of one container and on the model, comparing every outcome.
    static func run<E: PairEntity>(_ steps: [Step], _ type: E.Type, policy: MergePolicy) throws {
        let container = try GraphContainer(for: types, store: .inMemory)
        let contexts = (0..<contextCount).map { _ in container.newBackgroundContext() }
        for context in contexts { context.mergePolicy = policy }
        var model = Model(policy: policy, contextCount: contextCount)
        /// Per context, the value it last read or wrote of each id: what its next edit changes.
        var copies = Array(repeating: [Int: E](), count: contextCount)
        for (index, step) in steps.enumerated() {
            let trace = "step \(index) \(step) of \(steps)"
            switch step {
            case let .read(c, id):
                let read = contexts[c].model(E.self, id: id)
                #expect(read.map(Value.init) == model.seen(by: c)[id], "\(trace)")
                if let read { copies[c][id] = read }
                model.read(c, [id])
            case let .fetchAll(c):
                let all = try contexts[c].fetch(FetchDescriptor<E>())
                #expect(Dictionary(uniqueKeysWithValues: all.map { ($0.id, Value($0)) }) == model.seen(by: c), "\(trace)")
                for object in all { copies[c][object.id] = object }
                model.readAll(c)
            case let .fetchEvenA(c):
                let even = try contexts[c].fetch(FetchDescriptor<E>(predicate: #Predicate { $0.a % 2 == 0 }))
                let expected = model.seen(by: c).filter { $0.value.a % 2 == 0 }
                #expect(Dictionary(uniqueKeysWithValues: even.map { ($0.id, Value($0)) }) == expected, "\(trace)")
                for object in even { copies[c][object.id] = object }
                model.read(c, expected.keys)
            case let .edit(c, id, field, value):
                let edited = Self.edit(copies[c][id] ?? E(id: id, a: 0, b: 0), field, value)
                copies[c][id] = edited
                contexts[c].insert(edited)
                model.change(c, id, to: Value(edited))
            case let .editInChild(c, id, field, value):
                let child = contexts[c].newChildContext()
                let read = child.model(E.self, id: id)
                #expect(read.map(Value.init) == model.seen(by: c)[id], "\(trace)")
                let edited = Self.edit(read ?? E(id: id, a: 0, b: 0), field, value)
                child.insert(edited)
                try child.save()
                copies[c][id] = edited
                model.changeThroughChild(c, id, to: Value(edited))
            case let .delete(c, id):
                contexts[c].delete(E.self, id: id)
                copies[c][id] = nil
                model.change(c, id, to: nil)
            case let .save(c):
                let expected = model.save(c)
                do {
                    try contexts[c].save()
                    #expect(expected == nil, "\(trace): expected a conflict on \(expected ?? [])")
                } catch GraphStoreError.mergeConflict(let conflicts) {
                    #expect(policy == .error, "\(trace): only .error throws")
                    #expect(Set(conflicts.map(\.id)) == expected.map { Set($0.map(String.init)) }, "\(trace)")
                }
                #expect(contexts[c].hasChanges == !model.pending[c].isEmpty, "\(trace)")
            case let .rollback(c):
                contexts[c].rollback()
                model.pending[c] = [:]
            }
            let stored = try container.newBackgroundContext().fetch(FetchDescriptor<E>())
            #expect(Dictionary(uniqueKeysWithValues: stored.map { ($0.id, Value($0)) }) == model.committed, "\(trace)")
        }
        try container.checkInvariants()
    }

    static func edit<E: PairEntity>(_ object: E, _ field: Field, _ value: Int) -> E {
        switch field {
        case .a: E(id: object.id, a: value, b: object.b)
        case .b: E(id: object.id, a: object.a, b: value)
        }
    }

    /// An object's fields, without its id.
    struct Value: Hashable, CustomStringConvertible {
        var a: Int
        var b: Int

        init(a: Int, b: Int) {
            self.a = a
            self.b = b
        }

        init(_ object: some PairEntity) {
            self.init(a: object.a, b: object.b)
        }

        var description: String { "(\(a), \(b))" }
    }

    /// The reference semantics.
    struct Model {
        /// An object as stored: its fields and the number of the write that stored it.
        struct Stored: Equatable {
            var value: Value
            var version: Int
        }

        struct Change {
            var value: Value?
            /// The stored object the change is based on (`nil`: none).
            var base: Stored?
            /// A child's save put it here and the context has not read the id since.
            var fromChild = false
            /// The child made it through the context's own change.
            var madeThrough = false
        }

        /// What a context last read: a whole table (absent ids included), then single ids.
        struct Reads {
            var whole: [Int: Stored]?
            var byID: [Int: Stored?] = [:]

            func lastRead(_ id: Int) -> Stored?? {
                if let read = byID[id] { return read }
                if let whole { return .some(whole[id]) }
                return .none
            }
        }

        let policy: MergePolicy
        var objects: [Int: Stored] = [:]
        var pending: [[Int: Change]]
        var reads: [Reads]
        /// Per context, what it knew of an id before it saved a child's value there that it has
        /// not read since: its own later changes are based on that.
        var unreadPrior: [[Int: Stored?]]
        var writes = 0

        init(policy: MergePolicy, contextCount: Int) {
            self.policy = policy
            pending = Array(repeating: [:], count: contextCount)
            reads = Array(repeating: Reads(), count: contextCount)
            unreadPrior = Array(repeating: [:], count: contextCount)
        }

        /// What context `c` knows of `id` for its own changes.
        func known(_ c: Int, _ id: Int) -> Stored?? {
            unreadPrior[c][id] ?? reads[c].lastRead(id)
        }

        var committed: [Int: Value] { objects.mapValues(\.value) }

        func seen(by c: Int) -> [Int: Value] {
            var seen = committed
            for (id, change) in pending[c] { seen[id] = change.value }
            return seen
        }

        mutating func read(_ c: Int, _ ids: some Sequence<Int>) {
            for id in ids {
                if let change = pending[c][id] {
                    // Reading a child's value makes it what the context knows.
                    guard change.fromChild else { continue }
                    pending[c][id]?.fromChild = false
                    reads[c].byID[id] = .some(change.base)
                } else {
                    reads[c].byID[id] = .some(objects[id])
                }
                unreadPrior[c][id] = nil
            }
        }

        /// A fetch of every object: the ids the context's pending changes answer are not read
        /// from the store, so their changes' bases stay what the context last saw of them.
        mutating func readAll(_ c: Int) {
            reads[c] = Reads(whole: objects)
            unreadPrior[c] = [:]
            for (id, change) in pending[c] {
                reads[c].byID[id] = .some(change.base)
                pending[c][id]?.fromChild = false
            }
        }

        /// A change of the context's own copy: over a child's value it has not read, the copy
        /// is from before that value, and based on what the context knew, if anything.
        mutating func change(_ c: Int, _ id: Int, to value: Value?) {
            let base: Stored?
            if let existing = pending[c][id] {
                base = existing.fromChild && !existing.madeThrough ? known(c, id) ?? existing.base : existing.base
            } else {
                base = known(c, id) ?? objects[id]
            }
            pending[c][id] = Change(value: value, base: base)
        }

        /// A child that read `id` (through the context: its pending change, else the store)
        /// and saved its change into the context.
        mutating func changeThroughChild(_ c: Int, _ id: Int, to value: Value?) {
            // What the context knew before the child's value: what it read, else its own
            // change's base.
            if unreadPrior[c][id] == nil, let knew = reads[c].lastRead(id) ?? pending[c][id].map(\.base) {
                unreadPrior[c][id] = knew
            }
            let base = pending[c][id].map(\.base) ?? objects[id]
            pending[c][id] = Change(value: value, base: base, fromChild: true, madeThrough: pending[c][id] != nil)
        }

        /// Saves context `c`; returns the conflicting ids when the save must throw.
        mutating func save(_ c: Int) -> [Int]? {
            var conflicting: Set<Int> = []
            for (id, change) in pending[c] {
                let stored = objects[id]
                if change.value == nil, stored == nil { continue }  // deleting what is gone
                if stored?.version != change.base?.version { conflicting.insert(id) }
            }
            if policy == .error, !conflicting.isEmpty { return conflicting.sorted() }
            var written: [Int: Value?] = [:]
            var settled: Set<Int> = []
            /// Ids a property merge wrote, with the context's own value.
            var merged: [Int: Value] = [:]
            for (id, change) in pending[c] {
                guard conflicting.contains(id) else {
                    written[id] = .some(change.value)
                    settled.insert(id)
                    continue
                }
                switch policy {
                case .error, .storeWins:
                    continue
                case .contextWins:
                    written[id] = .some(change.value)
                case .mergeByProperty:
                    guard let mine = change.value else {
                        written[id] = .some(nil)  // a deletion wins
                        break
                    }
                    guard let stored = objects[id] else { continue }  // deleted elsewhere: stays so
                    guard let base = change.base else {
                        written[id] = .some(mine)  // inserted by both: no base
                        break
                    }
                    written[id] = .some(Value(
                        a: mine.a != base.value.a ? mine.a : stored.value.a,
                        b: mine.b != base.value.b ? mine.b : stored.value.b))
                    merged[id] = mine
                }
                settled.insert(id)
            }
            let changesSomething = written.contains { id, value in value != nil || objects[id] != nil }
            if changesSomething { writes += 1 }
            for (id, value) in written {
                if let value { objects[id] = Stored(value: value, version: writes) } else { objects[id] = nil }
            }
            // The context knows what its save left, whether or not it read anything before;
            // where that is a property merge, what it wrote, one version older, so that its held
            // copy merges again.
            // Its own change saved is what it knows; a child's value it has not read is not.
            for (id, change) in pending[c] where !change.fromChild && settled.contains(id) { unreadPrior[c][id] = nil }
            for id in settled {
                reads[c].byID[id] = .some(merged[id].map { Stored(value: $0, version: writes - 1) } ?? objects[id])
            }
            pending[c] = [:]
            return nil
        }
    }
}

/// The objects the interleavings run on.
protocol PairEntity: Entity, Hashable where ID == Int {
    init(id: Int, a: Int, b: Int)
    var a: Int { get }
    var b: Int { get }
}
