import Foundation
import PropertyBased
import Testing

@testable import GraphStore
import GraphStoreTestSupport

/// Fetches and counts through sorted indexes return exactly what a scan returns: random
/// objects (with many ties), random commits, random pending changes over them, and random
/// predicates, sort orders and windows.
@Suite struct IndexedFetchPropertyTests {
    struct Item: Entity, Equatable {
        var id: Int
        var group: Int
        var score: Double
        var date: Date
        var name: String
        var rank: Int?
        /// NaN sometimes: only filtered on, never sorted by (NaN has no place in `<`'s order).
        var ratio: Double
        /// A date of a NaN interval sometimes: only filtered on, as `ratio`.
        var due = Date(timeIntervalSinceReferenceDate: 0)
        /// A floating-point type the index boxes (not `Double` or `Float`), NaN sometimes.
        var level: CGFloat = 0

        static var indexes: [EntityIndex<Item>] {
            [
                EntityIndex(\.date), EntityIndex(\.group, \.date), EntityIndex(\.score), EntityIndex(\.rank), EntityIndex(\.name, \.group),
                EntityIndex(\.ratio), EntityIndex(\.due), EntityIndex(\.level),
            ]
        }
    }


    static func randomItem(_ id: Int, _ random: inout SplitMix64) -> Item {
        Item(
            id: id, group: Int.random(in: 0..<5, using: &random),
            score: [0, -0.0, 1.5, 2, 3.25, -1][Int.random(in: 0..<6, using: &random)],
            date: Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0..<30, using: &random)) * 60),
            name: ["a", "b", "bb", "c", "é", "e\u{301}"][Int.random(in: 0..<6, using: &random)],
            rank: Int.random(in: 0..<4, using: &random) == 0 ? nil : Int.random(in: 0..<10, using: &random),
            ratio: [0, -0.0, 1.5, .nan, -1, .infinity][Int.random(in: 0..<6, using: &random)],
            due: Date(timeIntervalSinceReferenceDate: [0, 60, .nan, -60, 120][Int.random(in: 0..<5, using: &random)]),
            level: [0, 1.5, .nan, -1, 2][Int.random(in: 0..<5, using: &random)])
    }

    static func randomPredicate(_ random: inout SplitMix64) -> (String, Predicate<Item>?) {
        let g = Int.random(in: -1..<6, using: &random)
        let h = Int.random(in: -1..<6, using: &random)
        let d = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -1..<31, using: &random)) * 60)
        let e = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -1..<31, using: &random)) * 60)
        let s = [0, 1.5, 2, -1, 4][Int.random(in: 0..<5, using: &random)]
        let n = ["a", "b", "bb", "c", "é", "z"][Int.random(in: 0..<6, using: &random)]
        let r = Int.random(in: 0..<10, using: &random)
        let u = Date(timeIntervalSinceReferenceDate: [0, 60, -60, 90][Int.random(in: 0..<4, using: &random)])
        let l = CGFloat([0, 1.5, -1, 2, 3][Int.random(in: 0..<5, using: &random)])
        switch Int.random(in: 0..<24, using: &random) {
        case 19: return ("due < \(u)", #Predicate { $0.due < u })
        case 20: return ("due >= \(u)", #Predicate { $0.due >= u })
        case 21: return ("level <= \(l)", #Predicate { $0.level <= l })
        case 22: return ("level > \(l)", #Predicate { $0.level > l })
        case 23: return ("level == \(l)", #Predicate { $0.level == l })
        case 16: return ("ratio < \(s)", #Predicate { $0.ratio < s })
        case 17: return ("ratio >= \(s)", #Predicate { $0.ratio >= s })
        case 18: return ("ratio == \(s)", #Predicate { $0.ratio == s })
        case 0: return ("none", nil)
        case 1: return ("group == \(g)", #Predicate { $0.group == g })
        case 2: return ("group == \(g) && date > \(d)", #Predicate { $0.group == g && $0.date > d })
        case 3: return ("date >= \(d) && date < \(e)", #Predicate { $0.date >= d && $0.date < e })
        case 4: return ("\(d) < date", #Predicate { d < $0.date })
        case 5: return ("date <= \(d) && name.contains(b)", #Predicate { $0.date <= d && $0.name.contains("b") })
        case 6: return ("group == \(g) || group == \(h)", #Predicate { $0.group == g || $0.group == h })
        case 7: return ("score < \(s)", #Predicate { $0.score < s })
        case 8: return ("score >= \(s)", #Predicate { $0.score >= s })
        case 9: return ("score == \(s)", #Predicate { $0.score == s })
        case 10: return ("rank == nil", #Predicate { $0.rank == nil })
        case 11: return ("rank == \(r)", #Predicate { $0.rank == r })
        case 12: return ("name == \(n) && group >= \(g)", #Predicate { $0.name == n && $0.group >= g })
        case 13: return ("name > \(n)", #Predicate { $0.name > n })
        case 14: return ("group == \(g) && group == \(h)", #Predicate { $0.group == g && $0.group == h })
        default: return ("group > \(g) && group <= \(h) && date != \(d)", #Predicate { $0.group > g && $0.group <= h && $0.date != d })
        }
    }

    static func randomSort(_ random: inout SplitMix64) -> (String, [SortDescriptor<Item>]) {
        switch Int.random(in: 0..<9, using: &random) {
        case 0: return ("none", [])
        case 1: return ("date", [SortDescriptor(\.date)])
        case 2: return ("date desc", [SortDescriptor(\.date, order: .reverse)])
        case 3: return ("group, date", [SortDescriptor(\.group), SortDescriptor(\.date)])
        case 4: return ("group desc, date desc", [SortDescriptor(\.group, order: .reverse), SortDescriptor(\.date, order: .reverse)])
        case 5: return ("score", [SortDescriptor(\.score)])
        case 6: return ("name (localized)", [SortDescriptor(\.name)])
        case 7: return ("rank desc", [SortDescriptor(\.rank, order: .reverse)])
        default: return ("date, group", [SortDescriptor(\.date), SortDescriptor(\.group)])
        }
    }

    @Test func indexedResultsEqualScannedResults() async throws {
        await propertyCheck(count: 60, input: Gen<UInt64>.bitSet) { seed in
            var random = SplitMix64(seed: seed)
            let container = try GraphContainer(for: [Item.self], store: .inMemory)
            let context = container.mainContext
            // A few commits: inserts, updates, deletes.
            for round in 0..<3 {
                for _ in 0..<Int.random(in: 20..<80, using: &random) {
                    let id = Int.random(in: 0..<150, using: &random)
                    if round > 0, Int.random(in: 0..<5, using: &random) == 0 {
                        context.delete(Item.self, id: id)
                    } else {
                        context.insert(Self.randomItem(id, &random))
                    }
                }
                try context.save()
                try container.checkInvariants()
            }
            // Pending changes over the store, in the context that fetches.
            for _ in 0..<Int.random(in: 0..<15, using: &random) {
                let id = Int.random(in: 0..<170, using: &random)
                if Bool.random(using: &random) { context.delete(Item.self, id: id) } else { context.insert(Self.randomItem(id, &random)) }
            }
            let child = context.newChildContext()
            if Bool.random(using: &random) { child.insert(Self.randomItem(Int.random(in: 0..<170, using: &random), &random)) }
            for _ in 0..<20 {
                let (predicateName, predicate) = Self.randomPredicate(&random)
                let (sortName, sort) = Self.randomSort(&random)
                let limit = [nil, 0, 1, 5, 20][Int.random(in: 0..<5, using: &random)]
                let offset = [nil, 0, 3][Int.random(in: 0..<3, using: &random)]
                let descriptor = FetchDescriptor<Item>(predicate: predicate, sortBy: sort, fetchLimit: limit, fetchOffset: offset)
                let label = "\(predicateName) sort \(sortName) limit \(String(describing: limit)) offset \(String(describing: offset))"
                for fetching in [context, child] {
                    let indexed = try fetching.fetch(descriptor)
                    let scanned = try fetching.scannedFetch(descriptor)
                    if sort.isEmpty {
                        // Unspecified order: the same objects when the window takes them all.
                        if limit == nil, (offset ?? 0) == 0 {
                            #expect(indexed.map(\.id).sorted() == scanned.map(\.id).sorted(), "\(label)")
                        } else {
                            #expect(indexed.count == scanned.count, "\(label)")
                        }
                    } else {
                        #expect(indexed.map(\.id) == scanned.map(\.id), "\(label)")
                    }
                    let matching = try fetching.scannedCount(descriptor)
                    let windowed = max(0, matching - max(0, offset ?? 0))
                    #expect(try fetching.fetchCount(descriptor) == limit.map { min($0, windowed) } ?? windowed, "count \(label)")
                    #expect(try fetching.fetchCount(FetchDescriptor(predicate: predicate)) == matching, "count \(label)")
                }
            }
            try context.save()
            try container.checkInvariants()
        }
    }
}
