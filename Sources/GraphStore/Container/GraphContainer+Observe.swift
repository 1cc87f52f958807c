import Foundation

extension GraphContainer {
    /// The results of `descriptor`, now and after every commit that changes them.
    ///
    /// ```swift
    /// let newest = FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20)
    /// for try await posts in container.observe(newest) {
    ///     render(posts)
    /// }
    /// ```
    ///
    /// The first element is the current committed results, at once. After that, each commit
    /// that inserts, updates or deletes objects of `E` is fetched again, and the results are
    /// yielded when they differ (other ids, or other versions of the same objects); a commit
    /// that does not touch `E` costs nothing. When commits come faster than the reader, they
    /// coalesce: the next element is the results after the latest one, and nothing buffers
    /// without bound. Results are committed state only (no context's pending changes). The
    /// sequence ends when the task iterating it is cancelled or the container closes. It does
    /// not keep the container open: a container released while it is iterated (and none of
    /// its contexts left) closes as any released container does, and the sequence ends.
    ///
    /// No context reads these results: an object from them, changed and inserted into a
    /// context, is based as that context bases it (see ``MergePolicy``), not on the version
    /// shown. To save an edit of one, read the object through the saving context
    /// (``GraphContext/model(_:id:)``) and apply the edit to that value; saving the shown copy
    /// itself overwrites, without a conflict, a save made since it was fetched, unless the
    /// context read or saved the object itself.
    ///
    /// - Complexity: one fetch (see ``GraphContext/fetch(_:)``) per element, plus O(results ×
    ///   log n) to compare with the previous element.
    public func observe<E: Entity>(_ descriptor: FetchDescriptor<E>) -> FetchedResultsSequence<E> {
        FetchedResultsSequence(core: core, descriptor: descriptor)
    }
}

/// The results of a fetch after each commit that changes them: see
/// ``GraphContainer/observe(_:)``.
public struct FetchedResultsSequence<E: Entity>: AsyncSequence, Sendable {
    public typealias Element = [E]
    public typealias Failure = any Error

    /// Weak: an observer does not keep a released container's store open (a task iterating
    /// the sequence would otherwise hold it open, and so locked, until the task ends).
    weak var core: GraphCore?
    let descriptor: FetchDescriptor<E>

    init(core: GraphCore, descriptor: FetchDescriptor<E>) {
        self.core = core
        self.descriptor = descriptor
    }

    public func makeAsyncIterator() -> Iterator {
        // A sequence of a core already released ends at once: its signals are finished.
        Iterator(core: core, descriptor: descriptor,
                 signals: core?.signals(entity: E.entityName).makeAsyncIterator() ?? AsyncStream<UInt64> { $0.finish() }.makeAsyncIterator())
    }

    /// Yields the first results at once, then waits for a commit that changes them.
    public struct Iterator: AsyncIteratorProtocol {
        /// Weak, as the sequence's: held strongly only while fetching.
        weak var core: GraphCore?
        let descriptor: FetchDescriptor<E>
        var signals: AsyncStream<UInt64>.Iterator
        /// Ids and versions of the last results yielded; `nil` before the first.
        var last: [Signature]?
        /// The latest fetch threw: the next results are yielded even when they equal `last`,
        /// so that a consumer that showed the error learns that fetching works again.
        var failed = false

        struct Signature: Equatable {
            let key: ObjectKey
            let version: UInt64?
        }

        /// The next results, or `nil` when the container closed or the task was cancelled.
        ///
        /// - Throws: ``GraphStoreError/predicateFailed(entity:id:reason:)`` when the predicate throws.
        public mutating func next() async throws -> [E]? {
            if last == nil {
                guard !Task.isCancelled else { return nil }
                return try fetchIfChanged()
            }
            while await signals.next() != nil {
                guard !Task.isCancelled else { return nil }
                if let results = try fetchIfChanged() { return results }
            }
            return nil
        }

        init(core: GraphCore?, descriptor: FetchDescriptor<E>, signals: AsyncStream<UInt64>.Iterator) {
            self.core = core
            self.descriptor = descriptor
            self.signals = signals
        }

        /// A context that reads for this observer, or `nil` once the store is released.
        private var reader: GraphContext? {
            core.map { GraphContext(core: $0, parent: nil, name: "observer") }
        }

        /// The current results, fetched now: the first element, taken synchronously (for
        /// ``FetchedResults``, whose objects are there at once). `next()` then waits for a commit.
        mutating func currentResults() throws -> [E] {
            precondition(last == nil, "currentResults() is the first element")
            guard let reader else { throw GraphStoreError.containerClosed }
            let (results, source) = try reader.unrecordedFetch(descriptor)
            last = Self.signature(of: results, in: source)
            return results
        }

        private mutating func fetchIfChanged() throws -> [E]? {
            guard let reader else { return nil }
            let fetched: (results: [E], source: FetchSource?)
            do {
                fetched = try reader.unrecordedFetch(descriptor)
            } catch {
                failed = true
                throw error
            }
            let signature = Self.signature(of: fetched.results, in: fetched.source)
            guard signature != last || failed else { return nil }
            last = signature
            failed = false
            return fetched.results
        }

        private static func signature(of results: [E], in source: FetchSource?) -> [Signature] {
            results.map { object -> Signature in
                let key = ObjectKey(object.id)
                return Signature(key: key, version: source?.table[key]?.version)
            }
        }
    }
}

extension GraphContext {
    /// A fetch that remembers nothing (for observers, which never save), with what it read.
    func unrecordedFetch<E: Entity>(_ descriptor: FetchDescriptor<E>) throws -> ([E], FetchSource?) {
        var source: FetchSource?
        let matched = try indexedMatches(descriptor, source: &source) ?? matches(descriptor, source: &source)
        return (window(matched, descriptor), source)
    }
}
