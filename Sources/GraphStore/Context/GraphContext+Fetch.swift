import Foundation
import HashTreeCollections
internal import GraphStoreCoding

extension GraphContext {
    // MARK: - Fetching

    /// The objects matching `descriptor`, sorted and windowed, as this context sees them.
    ///
    /// The context remembers the version of each object it returns: a change it makes to one
    /// of them later is based on that version, so a save made by another context in between
    /// is a conflict (see ``MergePolicy``). Fetching again refreshes it.
    ///
    /// When an ``EntityIndex`` of the entity matches the predicate's comparisons or the sort
    /// order, the fetch walks that index instead of every object (see ``EntityIndex``), with
    /// the same results. Ties in the sort order are broken by id, in the direction of the
    /// first sort descriptor.
    ///
    /// - Throws: ``GraphStoreError/predicateFailed(entity:id:reason:)`` when the predicate throws.
    /// - Complexity: with an index matching the sort and a `fetchLimit` k, O(log n + walked)
    ///   where the walk stops after k matches; with an index matching the predicate, O(log n +
    ///   range) evaluations. Otherwise O(n) predicate evaluations over the entity's n objects, plus
    ///   O(m log k) to sort m matches when `fetchLimit` bounds the window to k, else O(m log m).
    ///   Remembering what it read costs O(1) for a fetch of every object (no predicate, no
    ///   window), else O(r log n) for the r objects returned.
    public func fetch<E: Entity>(_ descriptor: FetchDescriptor<E>) throws -> [E] {
        // Counted before the table is read: a save of this context meanwhile then settles what
        // it wrote where the fetch's recording cannot replace it.
        withState { $0.fetchesInFlight += 1 }
        defer { withState { $0.fetchesInFlight -= 1 } }
        var source: FetchSource?
        let matched = try indexedMatches(descriptor, source: &source) ?? matches(descriptor, source: &source)
        let result = window(matched, descriptor)
        if let source { noteReads(of: result, descriptor, source) }
        return result
    }

    /// The number of objects matching `descriptor`'s predicate, within its offset and limit.
    ///
    /// - Throws: ``GraphStoreError/predicateFailed(entity:id:reason:)``.
    /// - Complexity: O(log n + p log n) (p: pending changes of the entity) without a
    ///   predicate or when the predicate is a conjunction of comparisons an index answers
    ///   exactly (see ``EntityIndex``); O(range) evaluations when an index narrows it; else
    ///   O(n) predicate evaluations. No sorting.
    public func fetchCount<E: Entity>(_ descriptor: FetchDescriptor<E>) throws -> Int {
        var count = try indexedCount(descriptor) ?? scannedCount(descriptor)
        // The same window as `fetch`: a negative offset or limit counts as 0.
        count = max(0, count - max(0, descriptor.fetchOffset ?? 0))
        return descriptor.fetchLimit.map { min(max(0, $0), count) } ?? count
    }

    /// The count by scanning every object, never through an index (the reference the indexed
    /// count is tested against).
    func scannedCount<E: Entity>(_ descriptor: FetchDescriptor<E>) throws -> Int {
        var count = 0
        let predicate = descriptor.predicate
        try forEachObject(E.self) { object in
            if try Self.matches(object, predicate) { count += 1 }
        }
        return count
    }

    /// The ids of the objects `fetch(descriptor)` would return, in the same order.
    ///
    /// - Throws: ``GraphStoreError/predicateFailed(entity:id:reason:)``.
    /// - Complexity: as ``fetch(_:)``.
    public func fetchIdentifiers<E: Entity>(_ descriptor: FetchDescriptor<E>) throws -> [E.ID] {
        try fetch(descriptor).map(\.id)
    }

    /// The object of `type` with `id`, as this context sees it, or `nil`.
    ///
    /// The context remembers the version it read (or that there was no such object), as
    /// ``fetch(_:)`` does: a change it makes to the object later is based on that version.
    ///
    /// - Complexity: O(log n) plus the depth of the context chain.
    public func model<E: Entity>(_ type: E.Type, id: E.ID) -> E? {
        let entity = core.schema.index(of: E.self)
        let key = ObjectKey(id)
        let found = withState { state -> (any Entity)? in
            state.pending.fold(entity)
            if let change = state.pending.change(entity: entity, key: key) {
                if let childs = state.pending.noteReadThrough(entity: entity, key: key, sequence: change.sequence) {
                    state.reads[entity].read(CollectionOfOne((key, ChangeSet.record(ofReading: childs))), table: core.latestTable(entity: entity).table)
                }
                return change.upserted
            }
            if let parent, let change = parent.pendingChange(entity: entity, key: key) {
                state.reads[entity].read(CollectionOfOne((key, .inherited(sequence: change.sequence))), table: core.latestTable(entity: entity).table)
                return change.upserted
            }
            // Read and recorded under the context's lock, so that a save of this context
            // cannot settle the id in between with a newer version than the one read here.
            let table = core.latestTable(entity: entity).table
            let stored = table[key]
            state.reads[entity].read(CollectionOfOne((key, .stored(stored))), table: table)
            return stored?.value
        }
        return found as? E
    }

    // MARK: - Internal

    /// The fetch by scanning every object, never through an index (the reference the indexed
    /// fetch is tested against). Remembers nothing.
    func scannedFetch<E: Entity>(_ descriptor: FetchDescriptor<E>) throws -> [E] {
        var source: FetchSource?
        return try window(matches(descriptor, source: &source), descriptor)
    }

    /// Calls `body` with every object of `type` this context sees: one consistent store
    /// version overlaid with pending changes. Returns what it walked.
    @discardableResult
    func forEachObject<E: Entity>(_ type: E.Type, _ body: (E) throws -> Void) throws -> FetchSource {
        let source = scanSource(E.self)
        try Self.visit(source.table, source.overlay) { (object: E) in
            try body(object)
            return true
        }
        return source
    }

    /// What a scan of `type` walks: the pending changes this context sees, then the latest
    /// table. In that order, a concurrent save that moves a change from pending to the store
    /// is seen in at least one of the two.
    private func scanSource<E: Entity>(_ type: E.Type) -> FetchSource {
        let entity = core.schema.index(of: E.self)
        let overlay = overlay(entity: entity)
        let latest = core.latestTable(entity: entity)
        return FetchSource(entity: entity, overlay: overlay, table: latest.table, number: latest.number)
    }

    /// The objects matching `descriptor`'s predicate, sorted, by a scan of every object this
    /// context sees; `source` is set to what it walked. Without a sort, the scan stops once it
    /// holds `fetchLimit + fetchOffset` matches (the window keeps no more).
    ///
    /// The caller is generic code that runs unspecialized for an app's entity type, so the
    /// loops here keep per-object work to one cast and one store: a fetch of every object
    /// writes into an array allocated once at its final size, and the overlay is only looked
    /// at when the context (or an ancestor) has pending changes of the entity.
    func matches<E: Entity>(_ descriptor: FetchDescriptor<E>, source: inout FetchSource?) throws -> [E] {
        let scan = scanSource(E.self)
        source = scan
        let (table, overlay) = (scan.table, scan.overlay)
        let bound = descriptor.windowEnd
        let predicate = descriptor.predicate
        if !descriptor.sortBy.isEmpty, let bound {
            var topK = TopK<E>(capacity: bound, sortBy: descriptor.sortBy)
            try Self.visit(table, overlay) { (object: E) in
                if try Self.matches(object, predicate) { topK.offer(object) }
                return true
            }
            return topK.elements
        }
        // Unsorted, the window is a prefix of the scan's order: no need to go past it.
        let stopsAt = descriptor.sortBy.isEmpty ? bound : nil
        var result: [E]
        if predicate == nil {
            result = Self.allObjects(table, overlay, limit: stopsAt)
        } else {
            result = []
            guard stopsAt != 0 else { return result }
            try Self.visit(table, overlay) { (object: E) in
                guard try Self.matches(object, predicate) else { return true }
                result.append(object)
                return stopsAt.map { result.count < $0 } ?? true
            }
        }
        if !descriptor.sortBy.isEmpty {
            let order = FetchOrder(descriptor.sortBy)
            result.sort(by: order.precedes)
        }
        return result
    }

    /// Calls `body` with every object of `table` that `overlay` does not replace, then with
    /// every value `overlay` upserts, until `body` returns `false`.
    private static func visit<E: Entity>(
        _ table: TreeDictionary<ObjectKey, StoredObject>, _ overlay: EntityChanges, _ body: (E) throws -> Bool
    ) rethrows {
        if overlay.isEmpty {
            for (_, stored) in table { guard try body(stored.value as! E) else { return } }
            return
        }
        for (key, stored) in table where overlay[key] == nil {
            guard try body(stored.value as! E) else { return }
        }
        for change in overlay.values {
            if let value = change.upserted { guard try body(value as! E) else { return } }
        }
    }

    /// The first `limit` (all when `nil`) objects `visit` would walk, in its order, written
    /// straight into an array allocated once: no per-object growth check or closure call.
    ///
    /// - Complexity: O(n + p) for n stored objects and p pending changes of the entity.
    private static func allObjects<E: Entity>(
        _ table: TreeDictionary<ObjectKey, StoredObject>, _ overlay: EntityChanges, limit: Int?
    ) -> [E] {
        // At most every stored object and every pending change: the array is never outgrown.
        let capacity = min(limit ?? .max, table.count + overlay.count)
        guard capacity > 0 else { return [] }
        return [E](unsafeUninitializedCapacity: capacity) { buffer, count in
            if overlay.isEmpty, capacity == table.count, capacity >= parallelFetchCount, Processors.active > 1 {
                // Two halves of the table on two threads, each into its own part of the array.
                let values = table.values
                let middle = values.index(values.startIndex, offsetBy: capacity / 2)
                let output = FetchOutput(base: buffer.baseAddress!)
                let finished = Guarded(0)
                DispatchQueue.concurrentPerform(iterations: 2) { part in
                    let (positions, indices) = part == 0
                        ? (0..<capacity / 2, values.startIndex..<middle) : (capacity / 2..<capacity, middle..<values.endIndex)
                    var position = positions.lowerBound
                    for stored in values[indices] {
                        (output.base + position).initialize(to: EntityDescription.reading(stored.value, as: E.self) { copy $0 })
                        position += 1
                    }
                    // Each half fills exactly its range, or the array would hold uninitialized slots.
                    precondition(position == positions.upperBound, "GraphStore: a table's half ended at \(position), not \(positions.upperBound)")
                    finished.withLock { $0 += 1 }
                }
                count = capacity
                return
            }
            if overlay.isEmpty {
                // The values only, each read in place as an `E` (a metatype comparison) rather
                // than through a dynamic cast: this loop is the whole of a fetch of every object.
                for stored in table.values {
                    guard count < capacity else { return }
                    buffer.initializeElement(at: count, to: EntityDescription.reading(stored.value, as: E.self) { copy $0 })
                    count += 1
                }
                return
            }
            for (key, stored) in table where overlay[key] == nil {
                guard count < capacity else { return }
                buffer.initializeElement(at: count, to: stored.value as! E)
                count += 1
            }
            for change in overlay.values {
                guard count < capacity else { return }
                if let value = change.upserted {
                    buffer.initializeElement(at: count, to: value as! E)
                    count += 1
                }
            }
        }
    }

    /// From how many stored objects a fetch of every object (no pending changes, no limit)
    /// reads the table's two halves on two threads.
    private static var parallelFetchCount: Int { 20_000 }

    func window<E: Entity>(_ sorted: [E], _ descriptor: FetchDescriptor<E>) -> [E] {
        if (descriptor.fetchOffset ?? 0) <= 0, descriptor.fetchLimit.map({ $0 >= sorted.count }) ?? true { return sorted }
        let start = min(max(0, descriptor.fetchOffset ?? 0), sorted.count)
        let end = descriptor.fetchLimit.map { start + min(sorted.count - start, max(0, $0)) } ?? sorted.count
        return Array(sorted[start..<end])
    }
}

/// The first k elements of a stream under a sort order, in O(log k) comparisons per element
/// that makes the cut.
struct TopK<E: Entity> {
    let capacity: Int
    let order: FetchOrder<E>
    private(set) var elements: [E] = []

    init(capacity: Int, sortBy: [SortDescriptor<E>]) {
        self.capacity = max(0, capacity)
        order = FetchOrder(sortBy)
        // A limit may be far more than there are objects (`fetchLimit: .max` for "all"): the
        // array grows as elements come beyond a modest start.
        elements.reserveCapacity(min(self.capacity, 1024))
    }

    mutating func offer(_ element: E) {
        guard capacity > 0 else { return }
        if elements.count == capacity, !order.precedes(element, elements[capacity - 1]) { return }
        var low = 0, high = elements.count
        while low < high {
            let mid = (low + high) / 2
            if order.precedes(element, elements[mid]) { high = mid } else { low = mid + 1 }
        }
        elements.insert(element, at: low)
        if elements.count > capacity { elements.removeLast() }
    }
}

/// A fetch's sort order made total: the sort descriptors, then the id (``ObjectKey/indexOrder(_:_:)``)
/// in the direction of the first descriptor, so a fetch through an index (which orders equal
/// values by id) and a scan return ties in the same order.
struct FetchOrder<E: Entity> {
    let sortBy: [SortDescriptor<E>]
    private let idsDescend: Bool

    init(_ sortBy: [SortDescriptor<E>]) {
        self.sortBy = sortBy
        idsDescend = sortBy.first?.order == .reverse
    }

    func precedes(_ a: E, _ b: E) -> Bool {
        for descriptor in sortBy {
            switch descriptor.compare(a, b) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        let order = ObjectKey.indexOrder(ObjectKey(a.id), ObjectKey(b.id))
        return idsDescend ? order > 0 : order < 0
    }
}

extension GraphContext {
    // MARK: - Related objects

    /// The ids of the objects of `type` that reference the `targetType` object `id` through any
    /// of their relationships, as this context sees them ("notes with tag X").
    ///
    /// Answered from the store's inverse relationship index, so the cost does not depend on the
    /// number of objects of `type`.
    ///
    /// ```swift
    /// let tagged = context.fetchIdentifiers(Note.self, referencing: swiftTag.id, of: Tag.self)
    /// ```
    ///
    /// - Complexity: O(r + p): r referencing objects in the store, p pending changes of `type`
    ///   in this context and its ancestors. Unordered.
    public func fetchIdentifiers<E: Entity, T: Entity>(_ type: E.Type, referencing id: T.ID, of targetType: T.Type) -> [E.ID] {
        referencingKeys(type, id: id, targetType).compactMap { $0.value(as: E.ID.self) }
    }

    /// The number of objects of `type` that reference the `targetType` object `id`.
    ///
    /// - Complexity: O(p log r) when `type` has one relationship to `targetType`: the count the
    ///   inverse index keeps, corrected by the p pending changes of `type` in this context and
    ///   its ancestors; otherwise as ``fetchIdentifiers(_:referencing:of:)`` (an object that
    ///   references `id` through two relationships counts once).
    public func fetchCount<E: Entity, T: Entity>(_ type: E.Type, referencing id: T.ID, of targetType: T.Type) -> Int {
        let (source, relationships) = referencingRelationships(E.self, T.self)
        guard relationships.count == 1, let relationship = relationships.first else {
            return referencingKeys(type, id: id, targetType).count
        }
        let key = ObjectKey(id)
        let overlay = overlay(entity: source)
        let sources = core.currentVersion.inverse[relationship.index][key]
        var count = sources?.count ?? 0
        for (sourceKey, change) in overlay {
            // A pending change replaces the stored object: out with the stored one's reference,
            // in with the pending value's.
            if sources?.contains(sourceKey) ?? false { count -= 1 }
            if let value = change.upserted, relationship.targets(value).contains(key) { count += 1 }
        }
        return count
    }

    /// The entity index of `E`, and its relationships whose target is `T`.
    private func referencingRelationships<E: Entity, T: Entity>(_ type: E.Type, _ targetType: T.Type) -> (Int, [RelationshipDescription]) {
        let schema = core.schema
        let source = schema.index(of: E.self), target = schema.index(of: T.self)
        return (source, schema.entities[source].relationshipIndexes.map { schema.relationships[$0] }.filter { $0.target == target })
    }

    private func referencingKeys<E: Entity, T: Entity>(_ type: E.Type, id: T.ID, _ targetType: T.Type) -> Set<ObjectKey> {
        let (source, relationships) = referencingRelationships(E.self, T.self)
        let key = ObjectKey(id)
        let overlay = overlay(entity: source)
        let version = core.currentVersion
        var result = Set<ObjectKey>()
        for relationship in relationships {
            for sourceKey in version.inverse[relationship.index][key] ?? [] where overlay[sourceKey] == nil {
                result.insert(sourceKey)
            }
        }
        for (sourceKey, change) in overlay {
            if let value = change.upserted, relationships.contains(where: { $0.targets(value).contains(key) }) {
                result.insert(sourceKey)
            }
        }
        return result
    }
}

/// Where the two halves of a parallel fetch of every object write their objects.
/// `@unchecked`: each half initializes only its own range of the array, before it reports it
/// finished under `Guarded`'s lock; the array is read only after both reported.
private struct FetchOutput<E>: @unchecked Sendable {
    let base: UnsafeMutablePointer<E>
}
