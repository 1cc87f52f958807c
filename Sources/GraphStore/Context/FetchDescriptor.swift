import Foundation

/// What to fetch: a predicate, a sort order, and a window.
///
/// ```swift
/// let recent = try context.fetch(FetchDescriptor<Note>(
///     predicate: #Predicate { $0.text.contains("hi") },
///     sortBy: [SortDescriptor(\.createdAt, order: .reverse)], fetchLimit: 20))
/// ```
///
/// Without `sortBy` the order is unspecified (hash order) but stable for a given state.
public struct FetchDescriptor<E: Entity>: Sendable {
    /// Which objects match; `nil` matches all.
    public var predicate: Predicate<E>?
    /// The order of the results, first descriptor first; ties fall to the next one.
    public var sortBy: [SortDescriptor<E>]
    /// The most objects to return; `nil` for all.
    public var fetchLimit: Int?
    /// How many matching objects to skip, after sorting.
    public var fetchOffset: Int?

    /// A fetch of the objects matching `predicate` (all when `nil`), in `sortBy` order, skipping
    /// `fetchOffset` and returning at most `fetchLimit`.
    public init(
        predicate: Predicate<E>? = nil, sortBy: [SortDescriptor<E>] = [],
        fetchLimit: Int? = nil, fetchOffset: Int? = nil
    ) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
    }

    /// How many matches, in order, hold the window: `fetchLimit + fetchOffset` (negative
    /// values as 0), saturating at `Int.max` so that `fetchLimit: .max` means "all"; `nil`
    /// without a limit.
    var windowEnd: Int? {
        fetchLimit.map { limit in
            let (sum, overflow) = max(0, limit).addingReportingOverflow(max(0, fetchOffset ?? 0))
            return overflow ? .max : sum
        }
    }
}
