import Foundation

extension GraphContext {
    // MARK: - Fetching through an index

    /// The sorted matches of `descriptor` (before the window) found through a sorted index, or
    /// `nil` when no index of the entity helps (the caller then scans).
    ///
    /// The walk skips objects this context (or an ancestor) has pending changes of, and the
    /// pending values are matched on their own, so inserted, changed and deleted objects show
    /// or hide as in a scan.
    ///
    /// - Complexity: O(log n + walked + p), p pending changes of the entity; the walk stops at
    ///   `fetchLimit + fetchOffset` matches when it runs in the sort order.
    func indexedMatches<E: Entity>(_ descriptor: FetchDescriptor<E>, source: inout FetchSource?) throws -> [E]? {
        let entity = core.schema.index(of: E.self)
        guard let plan = IndexPlan.make(for: descriptor, entity: core.schema.entities[entity]) else { return nil }
        // Pending changes first, then the version (as `scanSource`).
        let overlay = overlay(entity: entity)
        let (table, tree, number) = core.latestIndex(entity: entity, index: plan.index)
        guard plan.answers(in: tree) else { return nil }
        source = FetchSource(entity: entity, overlay: overlay, table: table, number: number)
        let bound = descriptor.windowEnd
        let stopsAt = plan.isOrdered ? bound : nil
        var walked: [E] = []
        if stopsAt != 0 {
            try tree.forEachID(in: plan.range(in: tree), reversed: plan.isReversed) { id in
                if !overlay.isEmpty, overlay[id] != nil { return true }
                guard let stored = table[id] else { preconditionFailure("GraphStore: index \(plan.index) of \(E.entityName) holds \(id), which its table does not") }
                let object = stored.value as! E
                if !plan.isExact, try !Self.matches(object, descriptor.predicate) { return true }
                walked.append(object)
                return stopsAt.map { walked.count < $0 } ?? true
            }
        }
        var pending: [E] = []
        for change in overlay.values {
            guard let value = change.upserted else { continue }
            let object = value as! E
            if try Self.matches(object, descriptor.predicate) { pending.append(object) }
        }
        if descriptor.sortBy.isEmpty { return walked + pending }
        if plan.isOrdered, pending.isEmpty { return walked }
        if let bound {
            var topK = TopK<E>(capacity: bound, sortBy: descriptor.sortBy)
            for object in walked { topK.offer(object) }
            for object in pending { topK.offer(object) }
            return topK.elements
        }
        let order = FetchOrder(descriptor.sortBy)
        return (walked + pending).sorted(by: order.precedes)
    }

    /// The number of objects matching `descriptor`'s predicate (before the window) counted
    /// without a scan, or `nil` when that needs one.
    ///
    /// - Complexity: O(log n + p log n) without a predicate or with one an index answers
    ///   exactly; O(log n + range + p) when an index narrows it.
    func indexedCount<E: Entity>(_ descriptor: FetchDescriptor<E>) throws -> Int? {
        let entity = core.schema.index(of: E.self)
        let plan = descriptor.predicate == nil ? nil : IndexPlan.make(for: descriptor, entity: core.schema.entities[entity], counting: true)
        guard descriptor.predicate == nil || plan != nil else { return nil }
        let overlay = overlay(entity: entity)
        let (table, tree) = plan.map { core.latestIndex(entity: entity, index: $0.index) }.map { ($0.table, $0.tree) } ?? (core.latestTable(entity: entity).table, IndexTree())
        if let plan, !plan.answers(in: tree) { return nil }
        var count: Int
        if let plan {
            let range = plan.range(in: tree)
            if plan.isExact {
                count = range.count
                for key in overlay.keys {
                    if let stored = table[key], try Self.matches(stored.value as! E, descriptor.predicate) { count -= 1 }
                }
            } else {
                count = 0
                try tree.forEachID(in: range) { id in
                    if overlay.isEmpty || overlay[id] == nil, let stored = table[id], try Self.matches(stored.value as! E, descriptor.predicate) { count += 1 }
                    return true
                }
            }
        } else {
            count = table.count
            for key in overlay.keys where table[key] != nil { count -= 1 }
        }
        for change in overlay.values {
            if let value = change.upserted, try Self.matches(value as! E, descriptor.predicate) { count += 1 }
        }
        return count
    }

    /// Whether `object` matches `predicate` (`nil` matches everything).
    ///
    /// - Throws: ``GraphStoreError/predicateFailed(entity:id:reason:)``.
    static func matches<E: Entity>(_ object: E, _ predicate: Predicate<E>?) throws -> Bool {
        guard let predicate else { return true }
        do {
            return try predicate.evaluate(object)
        } catch {
            throw GraphStoreError.predicateFailed(entity: E.entityName, id: "\(object.id)", reason: "\(error)")
        }
    }
}
