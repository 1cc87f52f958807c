extension GraphContainer {
    /// The results of `descriptor`, now and after every commit that changes them, each with
    /// the offsets removed, inserted, moved and updated since the previous results: for
    /// animating a list, as `NSFetchedResultsController`'s delegate does.
    ///
    /// ```swift
    /// for try await change in container.observeChanges(newest) {
    ///     apply(change.difference, showing: change.objects)
    /// }
    /// ```
    ///
    /// The same sequence as ``observe(_:)`` (current results at once, then the results after
    /// each commit that changes them, bursts coalesced, ending on cancellation or when the
    /// container closes), with a ``FetchedResultsDifference`` from the previous element. The
    /// first element's difference inserts every object. Objects are told apart by id; an
    /// object that keeps its place but whose stored version changed is ``FetchedResultsDifference/updated``.
    ///
    /// - Complexity: as ``observe(_:)``, plus O(previous + current results) for the difference.
    public func observeChanges<E: Entity>(_ descriptor: FetchDescriptor<E>) -> FetchedResultsChangeSequence<E> {
        FetchedResultsChangeSequence(base: observe(descriptor))
    }
}

/// Results of a fetch with how they differ from the previous results: an element of
/// ``GraphContainer/observeChanges(_:)``.
public struct FetchedResultsChange<E: Entity>: Sendable {
    /// The results after the commit, in the descriptor's order.
    public let objects: [E]
    /// How the previous results became ``objects``.
    public let difference: FetchedResultsDifference

    /// Results `objects` reached from the previous results through `difference`.
    public init(objects: [E], difference: FetchedResultsDifference) {
        self.objects = objects
        self.difference = difference
    }
}

/// The results of a fetch with their differences after each commit that changes them: see
/// ``GraphContainer/observeChanges(_:)``.
public struct FetchedResultsChangeSequence<E: Entity>: AsyncSequence, Sendable {
    public typealias Element = FetchedResultsChange<E>
    public typealias Failure = any Error

    let base: FetchedResultsSequence<E>

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator())
    }

    /// Yields the first results at once, then waits for a commit that changes them.
    public struct Iterator: AsyncIteratorProtocol {
        var base: FetchedResultsSequence<E>.Iterator

        /// The next results and their difference, or `nil` when the container closed or the
        /// task was cancelled.
        ///
        /// - Throws: ``GraphStoreError/predicateFailed(entity:id:reason:)`` when the predicate throws.
        public mutating func next() async throws -> FetchedResultsChange<E>? {
            let previous = base.last
            guard let objects = try await base.next() else { return nil }
            return FetchedResultsChange(objects: objects, difference: difference(from: previous))
        }

        /// The current results, fetched now, as the first element (see
        /// ``FetchedResultsSequence/Iterator/currentResults()``).
        mutating func currentResults() throws -> FetchedResultsChange<E> {
            let objects = try base.currentResults()
            return FetchedResultsChange(objects: objects, difference: FetchedResultsDifference(insertingAll: objects.count))
        }

        private func difference(from previous: [FetchedResultsSequence<E>.Iterator.Signature]?) -> FetchedResultsDifference {
            let current = base.last ?? []
            guard let previous else { return FetchedResultsDifference(insertingAll: current.count) }
            return FetchedResultsDifference(from: previous.map(\.key), to: current.map(\.key)) { from, to in
                previous[from].version != current[to].version
            }
        }
    }
}
