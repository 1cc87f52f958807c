import Observation

/// The results of a fetch, kept current on the main actor: an `@Observable` list for a
/// SwiftUI view or any other observer, as SwiftData's `@Query` and Core Data's
/// `NSFetchedResultsController`.
///
/// ```swift
/// @MainActor final class TimelineModel {
///     let posts: FetchedResults<Post>
///     init(container: GraphContainer) throws {
///         posts = try FetchedResults(
///             FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20), in: container)
///     }
/// }
/// // In a SwiftUI view: List(model.posts.objects) { post in Text(post.summary) }
/// ```
///
/// ``objects`` holds the committed results as soon as the initializer returns, so a view has
/// data on its first render. After each commit that changes the results, they are fetched
/// again off the main actor and then assigned on it, together with ``lastDifference``; a
/// commit that does not change them (another entity, an object outside the window) assigns
/// nothing and notifies no observer. Updates use ``GraphContainer/observeChanges(_:)``, so they
/// coalesce the same way: when the main actor is busy, the next assignment is the latest
/// results. Results are committed state only, never a context's pending changes, and no
/// context reads them: to save an edit of a shown object, read it through the saving context
/// (``GraphContext/model(_:id:)``) and apply the edit to that value (see
/// ``GraphContainer/observe(_:)``).
///
/// The type is `@MainActor`, like `@Query` and a main-queue `NSFetchedResultsController`:
/// ``objects`` changes only on the main actor, so a view reading it never sees it change
/// mid-update. Observing stops when the object is released or the container closes (a released
/// container closes too: an observer does not keep it open); ``objects`` then keeps the last
/// results.
@MainActor
@Observable
public final class FetchedResults<E: Entity> {
    /// The current results, in the descriptor's order.
    public private(set) var objects: [E]
    /// How the previous ``objects`` became the current ones: offsets for animating a list.
    /// At first, every object is inserted.
    public private(set) var lastDifference: FetchedResultsDifference
    /// The error of the latest fetch, or `nil` when it succeeded; ``objects`` then keeps the
    /// results of the last successful fetch, and the next commit of the entity fetches again.
    public private(set) var error: (any Error)?

    /// The task that keeps the results current; cancelled on release. Only assigned once, in
    /// `init`; read by `deinit` and by tests.
    nonisolated let updates = Guarded<Task<Void, Never>?>(nil)

    /// Fetches the results of `descriptor` from the latest committed version of `container`
    /// now, and keeps them current from then on.
    ///
    /// ```swift
    /// let newest = try FetchedResults(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)]), in: container)
    /// print(newest.objects.count)
    /// ```
    ///
    /// - Throws: ``GraphStoreError/predicateFailed(entity:id:reason:)`` when the predicate throws
    ///   on the first fetch.
    /// - Complexity: one fetch (see ``GraphContext/fetch(_:)``) on the calling (main) actor;
    ///   then, per commit of `E`, one fetch and one difference off the main actor (see
    ///   ``GraphContainer/observeChanges(_:)``) and one assignment on it.
    public init(_ descriptor: FetchDescriptor<E>, in container: GraphContainer) throws {
        // Subscribe before the first fetch, so a commit in between is not missed.
        var iterator = container.observeChanges(descriptor).makeAsyncIterator()
        let first = try iterator.currentResults()
        objects = first.objects
        lastDifference = first.difference
        let observer = iterator
        let task = Task.detached { [weak self] in
            var iterator = observer
            while !Task.isCancelled {
                do {
                    guard let change = try await iterator.next() else { return }
                    await self?.show(change)
                } catch {
                    await self?.show(error)
                }
            }
        }
        updates.withLock { $0 = task }
    }

    deinit {
        updates.withLock { $0?.cancel() }
    }

    // MARK: - Internal

    /// Ends when observing stops: on release or when the container closes. For tests.
    nonisolated var observation: Task<Void, Never>? {
        updates.withLock { $0 }
    }

    // MARK: - Private

    private func show(_ change: FetchedResultsChange<E>) {
        objects = change.objects
        lastDifference = change.difference
        if error != nil { error = nil }
    }

    private func show(_ error: any Error) {
        self.error = error
    }
}
