import Foundation
@testable import GraphStore
import Synchronization
import Testing

/// Random sequences of reads, changes, deletes, saves and rollbacks across top-level, child and
/// grandchild contexts, checked against one rule: a save that returns never writes over a
/// version whose content the saved copy never saw, unless its merge policy says so.
///
/// The object has two properties. Every change of one property, and every delete, makes a new
/// token; the oracle knows, for each token, every token its value was made from (its lineage)
/// and the context that made it. Whenever a stored property changes, every token of the old
/// value's lineage must be in the new one's, except tokens made by a context that made the
/// save's new values or by its ancestors (a context's own save is no conflict for its children,
/// as documented). Where the object is deleted, the oracle does not know which deletion the
/// store holds, so it asks that one of the deletions made so far would pass in its place (a
/// check that is weaker, never wrong): a deletion must have seen the version it removes, and an
/// object made again must have seen a deletion (a copy read before the object was deleted and
/// saved afterwards would bring it back). A copy made after reading that the object is gone is
/// made from every deletion of it so far, again weaker, never wrong.
///
/// Each context's merge policy is drawn per trial: ``MergePolicy/error`` (a conflict throws),
/// ``MergePolicy/storeWins`` (a conflicting change is dropped), ``MergePolicy/mergeByProperty``
/// or ``MergePolicy/contextWins``. Under the first two no save may overwrite silently. Values
/// a context made under `.contextWins` (or under an ancestor of that policy) may overwrite,
/// delete or make again anything; every save over them is checked as any other. Where a
/// context that made the new values, or one of its ancestors, merges by property, a property
/// the saved copy changed (a token never stored before) may overwrite the stored one, and its
/// deletion may delete an object updated elsewhere; a property it did not change may still
/// never go back to an older value.
///
/// A second check keeps the test from passing by conflicting always: after each trial, every
/// context, rolled back, reads the object afresh, changes it (or makes it again) and saves up
/// to the store, which must then hold exactly that copy.
///
/// `swift test` runs 2,000 trials (a few seconds); `scripts/lineage-trials.sh N` runs N.
@Suite struct LineageOracleTests {
    struct Item: Entity, Equatable {
        var id: Int
        var a: Int
        var b: Int
    }

    /// The contexts of a trial: two top-level ones, two children and two grandchildren (through
    /// one child) of the first, a child of the second.
    struct Tree {
        let contexts: [GraphContext]
        /// Per context, the indexes of itself and its ancestors.
        let lineage: [Set<Int>]
        /// Per context, its parent's index.
        let parents: [Int?] = [nil, nil, 0, 0, 1, 2, 2]

        init(_ container: GraphContainer) {
            let a = container.newBackgroundContext(), b = container.newBackgroundContext()
            let a1 = a.newChildContext(), a2 = a.newChildContext(), b1 = b.newChildContext()
            let a11 = a1.newChildContext(), a12 = a1.newChildContext()
            contexts = [a, b, a1, a2, b1, a11, a12]
            lineage = [[0], [1], [2, 0], [3, 0], [4, 1], [5, 2, 0], [6, 2, 0]]
        }
    }

    /// What the oracle knows of every token.
    struct Tokens {
        var madeFrom: [Int: Set<Int>] = [:]
        var madeBy: [Int: Int] = [:]
        /// Per id, every deletion token made of it.
        var deletions: [Int: [Int]] = [:]
        var next = 1

        mutating func make(by context: Int, from lineage: Set<Int>) -> Int {
            let token = next
            next += 1
            madeFrom[token] = lineage.union([token])
            madeBy[token] = context
            return token
        }

        /// The tokens of the lineage `old` that the lineage `seen` lacks and that no context of
        /// `allowed` made.
        func lost(_ old: Set<Int>, from seen: Set<Int>, allowed: Set<Int>) -> Set<Int> {
            old.subtracting(seen).filter { !allowed.contains(madeBy[$0]!) }
        }

        /// The lineage of a copy made after reading that `id` is gone: every deletion of it so
        /// far, which includes the one that was read.
        func absence(of id: Int) -> Set<Int> {
            (deletions[id] ?? []).reduce(into: Set<Int>()) { $0.formUnion(madeFrom[$1]!) }
        }
    }

    /// What a context's user holds of one id.
    enum Held {
        /// A copy, with the tokens of its two properties.
        case copy(a: Int, b: Int)
        /// The knowledge that the object is gone, with the lineage of what was seen deleted.
        case absent(Set<Int>)
    }

    static let ids = [1, 2]

    /// Runs one trial of `steps` random operations from `seed`, each context under one of
    /// `policies`; returns the first broken rule.
    static func trial(seed: UInt64, steps: Int, policies drawn: [MergePolicy]) throws -> String? {
        var random = SeededRandom(seed: seed)
        let container = try GraphContainer(for: [Item.self], store: .inMemory)
        var tokens = Tokens()
        let seeding = container.newBackgroundContext()
        for id in ids { seeding.insert(Item(id: id, a: tokens.make(by: -1, from: []), b: tokens.make(by: -1, from: []))) }
        try seeding.save()
        let tree = Tree(container)
        var log: [String] = []
        var policies: [MergePolicy] = []
        for (index, context) in tree.contexts.enumerated() {
            let policy = drawn.randomElement(using: &random)!
            context.mergePolicy = policy
            policies.append(policy)
            log.append("c\(index): \(policy)")
        }
        /// Per context: it or an ancestor merges by property.
        let merging = tree.lineage.map { $0.contains { policies[$0] == .mergeByProperty } }
        /// Per context: it or an ancestor lets the context's values win.
        let winning = tree.lineage.map { $0.contains { policies[$0] == .contextWins } }
        /// The contexts whose tokens a save made by the makers of `fresh` may pass over.
        func allowed(_ fresh: [Int]) -> Set<Int> {
            fresh.reduce(into: Set<Int>()) { set, token in
                let maker = tokens.madeBy[token]!
                if maker >= 0 { set.formUnion(tree.lineage[maker]) }
            }
        }
        /// Per context and id, what the user holds.
        var held = Array(repeating: [Int: Held](), count: tree.contexts.count)
        func stored(_ id: Int) -> Item? { container.newBackgroundContext().model(Item.self, id: id) }
        func read(_ item: Item?, id: Int) -> Held { item.map { .copy(a: $0.a, b: $0.b) } ?? .absent(tokens.absence(of: id)) }
        var previous = Dictionary(uniqueKeysWithValues: ids.map { ($0, stored($0)) })
        /// Every property token stored so far.
        var everStored = Set(previous.values.flatMap { [$0!.a, $0!.b] })
        /// Per deleted id, the deletions that may be the one stored.
        var storedDeletions: [Int: [Int]] = [:]
        /// Per context and id, the deletions it may hold unsaved (its own or a child's, as far as
        /// the oracle can tell; one too many only weakens the check).
        var pendingDeletions = Array(repeating: [Int: Set<Int>](), count: tree.contexts.count)
        /// Per top-level context and id, the deletion its pending `delete(model:)` marked: a
        /// change of the id after it is made over that deletion (documented), whatever copy the
        /// user held.
        var marked = Array(repeating: [Int: Int](), count: tree.contexts.count)
        /// Per context: a `delete(model:)` of it is pending (a second one deletes id by id).
        var markerPending = Array(repeating: false, count: tree.contexts.count)
        /// Per context, the ids its pending marker covers.
        var covered = Array(repeating: Set<Int>(), count: tree.contexts.count)
        /// Per context, the ids a save of it deleted (as far as the oracle can tell) and that it
        /// has not read as an object since: its change of one is made on no object, so under
        /// `.mergeByProperty` every property of it counts as changed, whatever the user's copy.
        var savedGone = Array(repeating: Set<Int>(), count: tree.contexts.count)
        for _ in 0..<steps {
            let index = Int.random(in: 0..<tree.contexts.count, using: &random)
            let context = tree.contexts[index]
            let id = ids.randomElement(using: &random)!
            switch Int.random(in: 0..<13, using: &random) {
            case 0...2:
                let item = context.model(Item.self, id: id)
                if item != nil || !covered[index].contains(id) { held[index][id] = read(item, id: id) }
                if item != nil { savedGone[index].remove(id) }
                log.append("c\(index) reads \(id): \(item.map { "\($0.a)/\($0.b)" } ?? "none")")
            case 3:
                let items = try context.fetch(FetchDescriptor<Item>())
                for id in ids {
                    // An object the context's pending `delete(model:)` hides is not read: what the
                    // context knew of it stays (documented), and so does what the user holds.
                    let item = items.first { $0.id == id }
                    if item != nil || !covered[index].contains(id) { held[index][id] = read(item, id: id) }
                    if item != nil { savedGone[index].remove(id) }
                }
                log.append("c\(index) fetches all")
            case 4...6:
                let item: Item
                let over = marked[index][id].map { tokens.madeFrom[$0]! } ?? []
                switch held[index][id] {
                case .copy(let a, let b)? where !over.isEmpty:
                    item = Item(id: id, a: tokens.make(by: index, from: over.union(tokens.madeFrom[a]!)), b: tokens.make(by: index, from: over.union(tokens.madeFrom[b]!)))
                case .copy(let a, let b)?:
                    item = Bool.random(using: &random)
                        ? Item(id: id, a: tokens.make(by: index, from: tokens.madeFrom[a]!), b: b)
                        : Item(id: id, a: a, b: tokens.make(by: index, from: tokens.madeFrom[b]!))
                case .absent(let seen)?:
                    item = Item(id: id, a: tokens.make(by: index, from: seen.union(over)), b: tokens.make(by: index, from: seen.union(over)))
                case nil:
                    continue
                }
                marked[index][id] = nil
                context.insert(item)
                held[index][id] = .copy(a: item.a, b: item.b)
                pendingDeletions[index][id] = nil
                log.append("c\(index) changes \(id) -> \(item.a)/\(item.b)")
            case 7:
                guard case .copy(let a, let b)? = held[index][id] else { continue }
                let token = tokens.make(by: index, from: tokens.madeFrom[a]!.union(tokens.madeFrom[b]!))
                tokens.deletions[id, default: []].append(token)
                context.delete(Item.self, id: id)
                held[index][id] = .absent(tokens.madeFrom[token]!)
                pendingDeletions[index][id, default: []].insert(token)
                log.append("c\(index) deletes \(id) (\(a)/\(b)) as \(token)")
            case 10:
                // Every object the context sees, each deletion based on the version it sees
                // now (as documented), whatever copy it held. A child deletes id by id and so
                // reads each object; a top-level context marks the whole table, which leaves
                // what it knew as it was (documented too): what the user holds stays.
                let reads = tree.parents[index] != nil || markerPending[index]
                markerPending[index] = true
                var deleted: [String] = []
                for id in ids {
                    // A marker covers the objects stored now (a pending change of an object gone
                    // from the store is dropped: nothing to delete); one by one, what it sees.
                    let seen: Item?
                    if !reads {
                        seen = stored(id)
                    } else if let change = context.pendingChange(entity: 0, key: ObjectKey(id)) {
                        if case .upsert(let value) = change.kind { seen = value as? Item } else { seen = nil }
                    } else {
                        seen = stored(id)
                    }
                    guard let seen else {
                        // Read as gone, as a fetch of every object would.
                        if reads, !covered[index].contains(id) { held[index][id] = .absent(tokens.absence(of: id)) }
                        continue
                    }
                    let token = tokens.make(by: index, from: tokens.madeFrom[seen.a]!.union(tokens.madeFrom[seen.b]!))
                    tokens.deletions[id, default: []].append(token)
                    // An id the pending marker covers is not read again, changed since or not:
                    // what the context knew of it stays (documented).
                    if !reads {
                        marked[index][id] = token
                        covered[index].insert(id)
                    } else if !covered[index].contains(id) {
                        held[index][id] = .absent(tokens.madeFrom[token]!)
                    }
                    pendingDeletions[index][id, default: []].insert(token)
                    deleted.append("\(id) (\(seen.a)/\(seen.b)) as \(token)")
                }
                try context.delete(model: Item.self)
                log.append("c\(index) deletes all: \(deleted.joined(separator: ", "))")
            case 8...9:
                do {
                    try context.save()
                    log.append("c\(index) saves")
                    // A deletion of an object already deleted is no conflict: saved to the
                    // store, it may stand for the deletion stored; saved into the parent, it is
                    // the parent's to save.
                    savedGone[index].formUnion(pendingDeletions[index].keys)
                    for (id, deletions) in pendingDeletions[index] {
                        if let parent = tree.parents[index] {
                            pendingDeletions[parent][id, default: []].formUnion(deletions)
                        } else if stored(id) == nil, previous[id] ?? nil == nil {
                            storedDeletions[id, default: []].append(contentsOf: deletions)
                        }
                    }
                    pendingDeletions[index] = [:]
                    marked[index] = [:]
                    markerPending[index] = false
                    covered[index] = []
                } catch GraphStoreError.mergeConflict {
                    log.append("c\(index) save conflicts")
                }
            default:
                context.rollback()
                pendingDeletions[index] = [:]
                marked[index] = [:]
                markerPending[index] = false
                covered[index] = []
                log.append("c\(index) rolls back")
            }
            for id in ids {
                let now = stored(id)
                defer {
                    previous[id] = now
                    if let now { everStored.formUnion([now.a, now.b]) }
                }
                let old = previous[id] ?? nil
                guard now != old else { continue }
                func broken(_ what: String) -> String {
                    "seed \(seed): object \(id) \(what)\n" + log.joined(separator: "\n")
                }
                // The values stored now that no save stored before, and the contexts whose tokens
                // the save that stored them may pass over.
                let fresh = now.map { [$0.a, $0.b].filter { !everStored.contains($0) } } ?? []
                let makers = fresh.map { tokens.madeBy[$0]! }.filter { $0 >= 0 }
                let passes = allowed(fresh)
                let mayOverwrite = makers.contains { merging[$0] }
                // Values a `.contextWins` chain made may overwrite anything, and delete or make
                // the object again over anything. What later saves store over them is checked
                // as any other value.
                if makers.contains(where: { winning[$0] }) { continue }
                // What the new values saw, through either property: a value made again after a
                // deletion carries what the deletion saw of both.
                let seen = now.map { tokens.madeFrom[$0.a]!.union(tokens.madeFrom[$0.b]!) } ?? []
                switch (old, now) {
                case let (old?, now?):
                    let madeOnNoObject = makers.contains { tree.lineage[$0].contains { savedGone[$0].contains(id) } }
                    for (before, after) in [(old.a, now.a), (old.b, now.b)] where before != after {
                        if mayOverwrite, fresh.contains(after) || madeOnNoObject { continue }
                        let lost = tokens.lost(tokens.madeFrom[before]!, from: seen, allowed: passes)
                        if !lost.isEmpty { return broken("stored \(after) over \(before), losing \(lost.sorted())") }
                    }
                case let (old?, nil):
                    let candidates = (tokens.deletions[id] ?? []).filter { deletion in
                        let maker = tokens.madeBy[deletion]!
                        return merging[maker] || winning[maker] || [old.a, old.b].allSatisfy {
                            tokens.lost(tokens.madeFrom[$0]!, from: tokens.madeFrom[deletion]!, allowed: tree.lineage[maker]).isEmpty
                        }
                    }
                    if candidates.isEmpty { return broken("deleted over \(old.a)/\(old.b) by no deletion that saw it") }
                    storedDeletions[id] = candidates
                case let (nil, now?):
                    let candidates = storedDeletions[id] ?? []
                    // Whether a value of `lineage` saw `deletion`.
                    func covers(_ lineage: Set<Int>, _ deletion: Int) -> Bool {
                        tokens.lost(tokens.madeFrom[deletion]!, from: lineage, allowed: passes).isEmpty
                    }
                    // A context's own deletion, saved, is no conflict for its making the object
                    // again (nor for its children's doing so), whatever the deletion saw. Under
                    // `.mergeByProperty`, a child's changed properties may be written over its
                    // ancestor's copy made again after the deletion: one made in the saving chain
                    // that saw the deletion stands for the object made again.
                    if !candidates.contains(where: { deletion in
                        passes.contains(tokens.madeBy[deletion]!) || covers(seen, deletion)
                            || mayOverwrite && tokens.madeBy.contains { token, maker in passes.contains(maker) && covers(tokens.madeFrom[token]!, deletion) }
                    }) {
                        return broken("made again as \(now.a)/\(now.b) over deletions \(candidates) it never saw")
                    }
                case (nil, nil):
                    break
                }
            }
        }
        // Every context, rolled back, saves a fresh copy up to the store, which then holds it.
        for (index, context) in tree.contexts.enumerated() {
            for other in tree.contexts { other.rollback() }
            let id = ids.randomElement(using: &random)!
            let item: Item
            if let copy = context.model(Item.self, id: id) {
                item = Item(id: id, a: tokens.make(by: index, from: tokens.madeFrom[copy.a]!), b: copy.b)
            } else {
                let seen = tokens.absence(of: id)
                item = Item(id: id, a: tokens.make(by: index, from: seen), b: tokens.make(by: index, from: seen))
            }
            context.insert(item)
            var saving: GraphContext? = context
            while let current = saving {
                do {
                    try current.save()
                } catch {
                    return "seed \(seed): c\(index)'s fresh copy of \(id) failed to save: \(error)\n" + log.joined(separator: "\n")
                }
                saving = current.parent
            }
            if stored(id) != item {
                return "seed \(seed): c\(index)'s fresh copy \(item) was not stored (\(stored(id).map { "\($0)" } ?? "none"))\n" + log.joined(separator: "\n")
            }
        }
        return nil
    }

    /// Under the strict policies only, and with `.mergeByProperty` or `.contextWins` drawn too
    /// (each makes many trials' checks lenient, so the strict run finds more of the strict
    /// rule's breaks).
    @Test(arguments: [[MergePolicy.error, .storeWins], [.error, .storeWins, .mergeByProperty], [.error, .storeWins, .contextWins]])
    func noSaveOverwritesWhatItsCopyNeverSaw(policies: [MergePolicy]) throws {
        let trials = ProcessInfo.processInfo.environment["GRAPHSTORE_LINEAGE_TRIALS"].flatMap(Int.init) ?? 2_000
        for seed in 0..<UInt64(trials) {
            if let broken = try Self.trial(seed: seed, steps: 60, policies: policies) {
                Issue.record(Comment(rawValue: broken))
                return
            }
        }
    }
}

/// SplitMix64: the same sequence for the same seed on every platform.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
