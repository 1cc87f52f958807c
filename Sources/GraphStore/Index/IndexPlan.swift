import Foundation

/// How a fetch uses one sorted index: the range of ranks to walk, the direction, and whether
/// the walk's order is the fetch's sort order and its range exactly the predicate.
///
/// Chosen from the predicate's `keyPath op constant` terms (see ``PredicateTerms``): equality
/// terms on a leading run of the index's properties, then at most one range on the next one.
/// A sort order matches when, after dropping properties fixed by equality, it lists the
/// remaining properties of the index in order, all in the direction of the first descriptor;
/// strings sorted with a `String.StandardComparator` never match, as the index orders by `<`
/// (a `SortDescriptor` on a `String` key path without a comparator sorts by `<` too).
struct IndexPlan {
    let index: Int
    private let lower: (prefix: [IndexValue], orEqual: Bool)
    private let upper: (prefix: [IndexValue], orEqual: Bool)
    /// The walk yields objects in the fetch's sort order, ties by id in the direction of the
    /// first sort descriptor, as the scan breaks them (see ``FetchOrder``).
    let isOrdered: Bool
    /// Walk from the high end.
    let isReversed: Bool
    /// The range holds exactly the objects matching the predicate: no evaluation needed.
    let isExact: Bool
    /// For an inclusive range (`<=`, `>=`) on a `Date` property: the key of a date of a NaN
    /// interval with the equality prefix. `Date` defines only `<` and `==`, so `d <= x` is
    /// `!(x < d)`, true for such a date at every bound, and no range of the index (which
    /// sorts it first) holds it; an index holding one cannot answer (see ``answers(in:)``).
    private let nanProbe: [IndexValue]?

    /// The best plan for `descriptor` over `entity`'s indexes, or `nil` when none helps.
    ///
    /// A fetch prefers an index whose order is the sort's, so that the walk stops at
    /// `fetchLimit`. A count (`counting`) ignores the sort and prefers a range that is exactly
    /// the predicate, which it counts in O(log n) without reading an object.
    ///
    /// - Complexity: O(indexes × (terms + sort descriptors)).
    static func make<E: Entity>(for descriptor: FetchDescriptor<E>, entity: EntityDescription, counting: Bool = false) -> IndexPlan? {
        guard !entity.indexes.isEmpty else { return nil }
        let terms = PredicateTerms(descriptor.predicate)
        let sort = counting ? [] : descriptor.sortBy.map { sortKey($0) }
        var best: (score: Int, plan: IndexPlan)?
        for (position, index) in entity.indexes.enumerated() {
            var plan = make(index: position, keyPaths: index.keyPaths, terms: terms, sort: sort)
            if counting, plan.score > 0, plan.plan.isExact { plan.score += 100 }
            guard plan.score > 0, plan.score > (best?.score ?? 0) else { continue }
            best = plan
        }
        return best?.plan
    }

    /// Whether walking `tree` gives what a scan gives: not when the plan's inclusive date
    /// range meets dates of a NaN interval, which match it in a scan (see `nanProbe`).
    ///
    /// - Complexity: O(log n).
    func answers(in tree: IndexTree) -> Bool {
        guard let nanProbe else { return true }
        return tree.rank(of: nanProbe, orEqual: true) == tree.rank(of: nanProbe, orEqual: false)
    }

    /// The ranks of the entries to walk in `tree`.
    ///
    /// - Complexity: O(log n) expected.
    func range(in tree: IndexTree) -> Range<Int> {
        let low = tree.rank(of: lower.prefix, orEqual: lower.orEqual)
        let high = tree.rank(of: upper.prefix, orEqual: upper.orEqual)
        return low..<max(low, high)
    }

    // MARK: - Private

    private init(
        index: Int, lower: (prefix: [IndexValue], orEqual: Bool), upper: (prefix: [IndexValue], orEqual: Bool),
        isOrdered: Bool, isReversed: Bool, isExact: Bool, nanProbe: [IndexValue]?
    ) {
        self.index = index
        self.lower = lower
        self.upper = upper
        self.isOrdered = isOrdered
        self.isReversed = isReversed
        self.isExact = isExact
        self.nanProbe = nanProbe
    }

    /// A sort descriptor as the planner sees it: its key path (`nil`: not usable) and direction.
    private static func sortKey<E>(_ descriptor: SortDescriptor<E>) -> (keyPath: AnyKeyPath?, reverse: Bool) {
        let usable = descriptor.stringComparator == nil
        return (usable ? descriptor.keyPath : nil, descriptor.order == .reverse)
    }

    private static func make(
        index: Int, keyPaths: [AnyKeyPath & Sendable], terms: PredicateTerms, sort: [(keyPath: AnyKeyPath?, reverse: Bool)]
    ) -> (score: Int, plan: IndexPlan) {
        var used = Array(repeating: false, count: terms.terms.count)
        // Equality on a leading run of properties.
        var prefix: [IndexValue] = []
        for keyPath in keyPaths {
            guard let term = terms.terms.indices.first(where: { terms.terms[$0].keyPath == keyPath && terms.terms[$0].op == .equal }) else { break }
            used[term] = true
            prefix.append(terms.terms[term].value)
        }
        // A range on the next one.
        var lower = (prefix: prefix, orEqual: false)
        var upper = (prefix: prefix, orEqual: true)
        var hasRange = false
        var nanProbe: [IndexValue]?
        if prefix.count < keyPaths.count {
            let keyPath = keyPaths[prefix.count]
            var low: (value: IndexValue, inclusive: Bool)?
            var high: (value: IndexValue, inclusive: Bool)?
            for (position, term) in terms.terms.enumerated() where term.keyPath == keyPath && term.op != .equal {
                used[position] = true
                switch term.op {
                case .greater, .greaterOrEqual:
                    let inclusive = term.op == .greaterOrEqual
                    if let current = low {
                        let order = IndexValue.compare(term.value, current.value)
                        if order > 0 || (order == 0 && !inclusive) { low = (term.value, inclusive) }
                    } else {
                        low = (term.value, inclusive)
                    }
                case .less, .lessOrEqual:
                    let inclusive = term.op == .lessOrEqual
                    if let current = high {
                        let order = IndexValue.compare(term.value, current.value)
                        if order < 0 || (order == 0 && !inclusive) { high = (term.value, inclusive) }
                    } else {
                        high = (term.value, inclusive)
                    }
                case .equal:
                    break
                }
            }
            if let low {
                lower = (prefix + [low.value], !low.inclusive)
                hasRange = true
            } else if let high {
                // Below a bound, but never nil (or NaN), which `<` does not match.
                lower = (prefix + [high.value.nanOfItsType ?? .null], true)
            }
            if let high {
                upper = (prefix + [high.value], high.inclusive)
                hasRange = true
            }
            if let bound = low ?? high, case .date = bound.value, low?.inclusive == true || high?.inclusive == true,
               let nan = bound.value.nanOfItsType {
                nanProbe = prefix + [nan]
            }
        }
        // The sort, after the properties equality fixes.
        let fixed = keyPaths.prefix(prefix.count)
        let remainingSort = sort.filter { key in key.keyPath.map { path in !fixed.contains { $0 == path } } ?? true }
        let remainingKeys = keyPaths.dropFirst(prefix.count)
        // With every sorted property fixed, only the id order is left: the direction of the
        // first descriptor, as the scan breaks ties.
        var isOrdered = sort.isEmpty || (remainingSort.isEmpty && remainingKeys.isEmpty)
        var isReversed = sort.first?.reverse ?? false
        if !remainingSort.isEmpty, remainingSort.count == remainingKeys.count,
           remainingSort.allSatisfy({ $0.reverse == sort[0].reverse }),
           zip(remainingSort, remainingKeys).allSatisfy({ $0.keyPath == $1 }) {
            isOrdered = true
            isReversed = remainingSort[0].reverse
        }
        let isExact = !terms.hasResidual && used.allSatisfy { $0 }
        var score = prefix.count * 10 + (hasRange ? 5 : 0)
        if isOrdered && !sort.isEmpty { score += 100 }
        let plan = IndexPlan(index: index, lower: lower, upper: upper, isOrdered: isOrdered, isReversed: isReversed, isExact: isExact, nanProbe: nanProbe)
        return (score, plan)
    }
}
