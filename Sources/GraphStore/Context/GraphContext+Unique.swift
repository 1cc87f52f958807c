import Foundation

extension GraphContext {
    // MARK: - Unique keys

    /// The object of `type` whose unique property `keyPath` holds `value`, as this context
    /// sees it, or `nil`: find-or-create without a scan.
    ///
    /// ```swift
    /// let swift = context.model(Tag.self, unique: \.name, "swift") ?? Tag(name: "swift")
    /// ```
    ///
    /// `keyPath` must be declared alone in one of `type`'s ``Entity/uniqueConstraints``. The
    /// store's unique index names the holder; this context's pending changes (and its
    /// ancestors') override it: an object inserted or changed to hold `value` is found, one
    /// deleted or changed away is not. The context remembers the version it read, as
    /// ``model(_:id:)`` does.
    ///
    /// - Complexity: O(log n + p), p pending changes of `type` in this context and its
    ///   ancestors; again for each commit that changes the holder while it is read.
    public func model<E: Entity, V: Hashable & Sendable>(_ type: E.Type, unique keyPath: KeyPath<E, V> & Sendable, _ value: V) -> E? {
        let schema = core.schema
        let entity = schema.index(of: E.self)
        guard let position = schema.entities[entity].constraints.firstIndex(where: { $0.keyPaths.count == 1 && $0.keyPaths[0] == keyPath }) else {
            preconditionFailure("GraphStore: \(E.self) has no unique constraint on \(propertyName(keyPath)) alone; declare UniqueConstraint(\\.\(propertyName(keyPath))) in uniqueConstraints.")
        }
        if let optional = value as? any OptionalValue, optional.isNil { return nil }
        let constraint = schema.entities[entity].constraints[position]
        let wanted = ObjectKey(value)
        // The index names the holder in one version; the object is read from the newest table
        // (or an ancestor's pending change), which may have changed in between: the holder
        // renamed or deleted by a commit. Then the pending changes and the index of that newer
        // version are asked again.
        while true {
            let overlay = overlay(entity: entity)
            for (key, change) in overlay {
                if let object = change.upserted, constraint.key(object) == wanted { return modelSeen(key, E.self) }
            }
            guard let holder = core.currentVersion.unique[entity][position][wanted], overlay[holder] == nil,
                  let id = holder.value(as: E.ID.self)
            else { return nil }
            if let object = model(E.self, id: id), constraint.key(object) == wanted { return object }
        }
    }

    /// The object `key` as this context sees it (through `model(_:id:)`, which records the read).
    private func modelSeen<E: Entity>(_ key: ObjectKey, _ type: E.Type) -> E? {
        key.value(as: E.ID.self).flatMap { model(E.self, id: $0) }
    }
}
