import Foundation
import HashTreeCollections
import OrderedCollections

/// Turns a context's change set into the next graph version: conflicts, unique constraints,
/// delete rules, reference checks, then the new tables and indexes (`CommitPlan+Apply.swift`).
///
/// Runs under the core's commit lock. Every step costs O(changed objects + their references),
/// using the unique and inverse indexes for everything store-wide.
struct CommitPlan {
    let schema: Schema
    let base: GraphVersion
    let policy: MergePolicy
    /// Objects to write, per entity index (standalone entities' are in `deferred` instead).
    private(set) var upserts: [OrderedDictionary<ObjectKey, any Entity>]
    /// Ids to delete, per entity index.
    private(set) var deletes: [OrderedSet<ObjectKey>]
    /// References from objects that stay to an object deleted under `.deny`, checked once
    /// every delete of the commit is known (``checkDeniedDeletes()``).
    private var denied: [(entity: Int, key: ObjectKey, relationship: Int, source: ObjectKey)] = []
    /// Ids a context's clear marker dropped its own inserts of, which the store still does not
    /// hold (``ClearMarker/deletedIfNew``): their delete rules run for the references the
    /// change set holds to them. Kept out of `deletes`, which lists objects the store holds, so
    /// that a table the save deletes whole is still dropped whole.
    private var deletedIfAbsent: [(entity: Int, key: ObjectKey)] = []
    /// Entities whose every stored object is deleted (a context's clear marker on a table
    /// nobody changed since): dropped whole, without listing the ids in `deletes`.
    private(set) var cleared: Set<Int> = []
    /// Upserts of standalone entities whose conflict check is left to `apply`, which looks
    /// each object up anyway (one tree lookup per object instead of two).
    private(set) var deferred: [Int: DeferredUpserts] = [:]
    /// Per entity index, the ids `.mergeByProperty` merged with a newer stored object.
    private(set) var propertyMerged: [Int: Set<ObjectKey>] = [:]

    /// A standalone entity's upserts as the context holds them: its entries, then its log.
    struct DeferredUpserts {
        var entries: EntityChanges
        var log: PendingLog

        /// Every change, one per id, as ``ChangeSet/expanded(entity:)`` lists them.
        var folded: EntityChanges {
            var all = entries
            log.fold(into: &all)
            return all
        }
    }

    init(schema: Schema, base: GraphVersion, policy: MergePolicy) {
        self.schema = schema
        self.base = base
        self.policy = policy
        upserts = Array(repeating: [:], count: schema.entities.count)
        deletes = Array(repeating: [], count: schema.entities.count)
    }

    /// Runs every step and returns the next version and what it changed.
    ///
    /// - Throws: `mergeConflict`, `uniqueConstraintViolation`, `identityMergeFailed`,
    ///   `deleteDenied`, `danglingReference`; nothing is changed when it throws.
    static func commit(
        _ changes: ChangeSet, onto base: GraphVersion, schema: Schema, policy: MergePolicy, contextName: String?
    ) throws -> (GraphVersion, GraphChange) {
        var plan = CommitPlan(schema: schema, base: base, policy: policy)
        try plan.resolveConflicts(changes)
        // Cascades before the unique check, so that an object a cascade deletes neither holds a
        // unique value an incoming object is merged into nor claims one; every delete rule
        // after it (the merges delete objects too, and a nullified object is not one the
        // context wrote, to be merged); `.deny` once everything is known.
        if plan.writesConstrainedObjects { plan.applyDeleteRules(cascadesOnly: true) }
        try plan.enforceUniqueConstraints()
        plan.applyDeleteRules(cascadesOnly: false)
        try plan.checkDeniedDeletes()
        try plan.checkReferences()
        return try plan.apply(contextName: contextName)
    }

    // MARK: - Conflicts

    /// Compares each change's base with the stored object and applies the merge policy.
    mutating func resolveConflicts(_ changes: ChangeSet) throws {
        var conflicts: [MergeConflict] = []
        for entity in changes.entities.indices {
            if let marker = changes.cleared[entity], changes.entities[entity].isEmpty, changes.logs[entity].isEmpty,
               marker.stamp == base.tableStamps[entity],
               schema.incoming[entity].allSatisfy({ relationship in
                   let source = schema.relationships[relationship].source
                   return base.inverse[relationship].isEmpty && (source == entity || !changes.hasChanges(entity: source))
               }) {
                // The table is as the context saw it and nothing references its objects, neither
                // stored nor written by this save: no conflict and no delete rule can arise, so
                // it goes whole.
                if !base.tables[entity].isEmpty { cleared.insert(entity) }
                continue
            }
            guard changes.hasChanges(entity: entity) else { continue }
            // A standalone entity (no unique constraint, no relationship in or out) with only
            // upserts: nothing between here and `apply` looks at its objects, so `apply`
            // checks the bases while it writes, straight from the context's entries and log.
            let description = schema.entities[entity]
            if description.constraints.isEmpty, description.relationshipIndexes.isEmpty, schema.incoming[entity].isEmpty,
               changes.cleared[entity] == nil, changes.entities[entity].values.allSatisfy({ $0.kind.isUpsert }),
               changes.logs[entity].entries.allSatisfy({ $0.kind.isUpsert }) {
                // Not copied into `upserts`: nothing else reads a standalone entity's writes.
                deferred[entity] = DeferredUpserts(entries: changes.entities[entity], log: changes.logs[entity])
                continue
            }
            // Otherwise the log is folded and a marker spelled out as one deletion per object
            // it covers.
            let entityChanges = changes.expanded(entity: entity)
            if let marker = changes.cleared[entity] {
                // What the context inserted before it marked the table goes while no object of
                // its id is stored, for its delete rules (see ``ClearMarker/deletedIfNew``).
                for key in marker.deletedIfNew where entityChanges[key] == nil && base.tables[entity][key] == nil {
                    deletedIfAbsent.append((entity, key))
                }
            }
            // The common case, only upserts and no conflicts, reuses the change set's keys
            // instead of hashing every key again.
            var isPlain = true
            for (key, change) in entityChanges {
                guard case .upsert = change.kind, base.tables[entity][key]?.version == change.baseVersion else {
                    isPlain = false
                    break
                }
            }
            if isPlain {
                upserts[entity] = entityChanges.mapValues { $0.upserted! }
                continue
            }
            for (key, change) in entityChanges {
                let stored = base.tables[entity][key]
                var kind: MergeConflict.Kind?
                switch change.kind {
                case .upsert:
                    if let stored {
                        if change.baseVersion != stored.version { kind = change.base == nil ? .insertedElsewhere : .updatedElsewhere }
                    } else if change.base != nil {
                        kind = .deletedElsewhere
                    }
                case .delete:
                    // Deleting what is already gone (or was never saved) is what the context
                    // wanted: not a conflict. Its delete rules still run, for the references
                    // the change set's own objects hold to it.
                    guard let stored else {
                        deletes[entity].append(key)
                        continue
                    }
                    if change.baseVersion != stored.version { kind = change.base == nil ? .insertedElsewhere : .updatedElsewhere }
                }
                if let kind {
                    conflicts.append(MergeConflict(
                        entity: schema.entities[entity].name, id: key.description, kind: kind,
                        baseVersion: change.baseVersion, storedVersion: stored?.version))
                    switch policy {
                    case .error, .storeWins:
                        continue
                    case .contextWins:
                        break
                    case .mergeByProperty:
                        // A deletion wins against an update, whichever side made it; an update
                        // of an object stored since the base is merged property by property.
                        if case .upsert(let value) = change.kind {
                            guard let stored else { continue }
                            if let based = change.base {
                                upserts[entity][key] = try schema.entities[entity].mergingProperties(based.value, value, stored.value)
                                propertyMerged[entity, default: []].insert(key)
                                continue
                            }
                            // Inserted by both: with no base, every property is this context's.
                        }
                    }
                }
                switch change.kind {
                case .upsert(let value): upserts[entity][key] = value
                case .delete: deletes[entity].append(key)
                }
            }
        }
        if policy == .error, !conflicts.isEmpty {
            // List the deferred entities' conflicts too: the error names every one.
            for (entity, changes) in deferred.sorted(by: { $0.key < $1.key }) {
                for (key, change) in changes.folded {
                    let stored = base.tables[entity][key]
                    guard stored?.version != change.baseVersion else { continue }
                    let kind: MergeConflict.Kind = stored == nil ? .deletedElsewhere : (change.base == nil ? .insertedElsewhere : .updatedElsewhere)
                    conflicts.append(MergeConflict(
                        entity: schema.entities[entity].name, id: key.description, kind: kind,
                        baseVersion: change.baseVersion, storedVersion: stored?.version))
                }
            }
            throw GraphStoreError.mergeConflict(conflicts)
        }
    }

    // MARK: - Unique constraints

    /// Checks every written object's unique values against the store and the rest of the
    /// change set; under `.error` a collision throws, otherwise the incoming object is merged
    /// into the existing one and references to it are moved.
    ///
    /// Moving references can change a constrained value (a post unique by its blog and
    /// number, whose blog merged into another that has a post of that number): the entities
    /// whose objects a move changed are checked again, until no move changes a constrained
    /// entity. Each round merges away at least one object, so the rounds are at most the
    /// objects written.
    mutating func enforceUniqueConstraints() throws {
        var entities = schema.entities.indices.filter { !schema.entities[$0].constraints.isEmpty && !upserts[$0].isEmpty }
        while !entities.isEmpty {
            // Most commits write no constrained entity: they allocate nothing here.
            guard let moved = try enforceUniqueConstraints(of: entities) else { return }
            let rewritten = try moveReferences(moved)
            entities = rewritten.sorted().filter { !schema.entities[$0].constraints.isEmpty }
        }
    }

    /// One round of ``enforceUniqueConstraints()`` over `entities`: the ids merged into
    /// others, per entity, or `nil` when nothing merged.
    private mutating func enforceUniqueConstraints(of entities: [Int]) throws -> [[ObjectKey: ObjectKey]]? {
        var moved: [[ObjectKey: ObjectKey]] = []
        for index in entities where !upserts[index].isEmpty {
            let entity = schema.entities[index]
            if moved.isEmpty { moved = Array(repeating: [:], count: schema.entities.count) }
            let incoming = upserts[entity.index]
            var kept = OrderedDictionary<ObjectKey, any Entity>()
            /// For an object that took an incoming object's values in a merge: that object's id.
            var mergedFrom: [ObjectKey: ObjectKey] = [:]
            var claimed = Array(repeating: [ObjectKey: ObjectKey](), count: entity.constraints.count)
            for (key, value) in incoming {
                var owner: ObjectKey?
                var collision: (constraint: String, value: ObjectKey)?
                for (index, constraint) in entity.constraints.enumerated() {
                    guard let uniqueValue = constraint.key(value) else { continue }
                    var holder = claimed[index][uniqueValue]
                    if holder == nil, let stored = base.unique[entity.index][index][uniqueValue], stored != key,
                       stillHolds(stored, value: uniqueValue, constraint: constraint, entity: entity.index, kept: kept, incoming: incoming) {
                        holder = stored
                    }
                    if let holder, holder != key {
                        owner = holder
                        collision = (constraint.name, uniqueValue)
                        break
                    }
                }
                guard let owner, let collision else {
                    kept[key] = value
                    claim(value, as: key, in: &claimed, entity: entity)
                    continue
                }
                if policy == .error {
                    throw GraphStoreError.uniqueConstraintViolation(
                        entity: entity.name, constraint: collision.constraint, value: collision.value.description,
                        existingID: owner.description, incomingID: key.description)
                }
                moved[entity.index][key] = owner
                if policy == .contextWins || policy == .mergeByProperty {
                    let value = try entity.replacingID(value, owner)
                    // The owner's values so far give way to the merged ones: a value only they
                    // held is free again for the objects that follow.
                    if let previous = kept[owner] { unclaim(previous, of: owner, in: &claimed, entity: entity) }
                    kept[owner] = value
                    mergedFrom[owner] = key
                    claim(value, as: owner, in: &claimed, entity: entity)
                }
                if base.tables[entity.index][key] != nil {
                    // An existing object took a value another one holds: it merges into that one.
                    deletes[entity.index].append(key)
                }
            }
            // An object merged into the first one it collides with may still collide with a
            // second through another constraint (its email is Ann's, its handle Bob's): it
            // cannot become both. Checked on what the save leaves, so that values later
            // merges moved away do not count.
            if !mergedFrom.isEmpty { try checkMergedValues(kept, mergedFrom: mergedFrom, entity: entity) }
            upserts[entity.index] = kept
        }
        return moved.contains { !$0.isEmpty } ? moved : nil
    }

    /// Throws when a unique value is held twice by what the save leaves of `entity`: the
    /// objects it writes (`kept`) and the stored ones it neither writes nor deletes.
    ///
    /// - Throws: ``GraphStoreError/uniqueConstraintViolation(entity:constraint:value:existingID:incomingID:)``
    ///   naming the other holder and the incoming object whose values were merged.
    /// - Complexity: O(written objects × constraints).
    private func checkMergedValues(
        _ kept: OrderedDictionary<ObjectKey, any Entity>, mergedFrom: [ObjectKey: ObjectKey], entity: EntityDescription
    ) throws {
        for (index, constraint) in entity.constraints.enumerated() {
            var holders: [ObjectKey: ObjectKey] = [:]
            for (key, value) in kept {
                guard let uniqueValue = constraint.key(value) else { continue }
                var other = holders.updateValue(key, forKey: uniqueValue)
                if other == nil, let stored = base.unique[entity.index][index][uniqueValue], stored != key,
                   kept[stored] == nil, !isDeleted(stored, entity: entity.index) {
                    other = stored
                }
                guard let other, other != key else { continue }
                // The incoming object whose values this one took, when that names another object.
                let incoming = mergedFrom[key].flatMap { $0 == other ? nil : $0 } ?? key
                throw GraphStoreError.uniqueConstraintViolation(
                    entity: entity.name, constraint: constraint.name, value: uniqueValue.description,
                    existingID: other.description, incomingID: incoming.description)
            }
        }
    }

    /// Whether the stored holder of a unique value still holds it after this change set: as
    /// the objects checked so far leave it (`kept`, merges included), else as written.
    private func stillHolds(
        _ holder: ObjectKey, value: ObjectKey, constraint: UniqueKeyDescription, entity: Int,
        kept: OrderedDictionary<ObjectKey, any Entity>, incoming: OrderedDictionary<ObjectKey, any Entity>
    ) -> Bool {
        if isDeleted(holder, entity: entity) { return false }
        if let pending = kept[holder] ?? incoming[holder] { return constraint.key(pending) == value }
        return true
    }

    private func unclaim(_ value: any Entity, of key: ObjectKey, in claimed: inout [[ObjectKey: ObjectKey]], entity: EntityDescription) {
        for (index, constraint) in entity.constraints.enumerated() {
            if let uniqueValue = constraint.key(value), claimed[index][uniqueValue] == key { claimed[index][uniqueValue] = nil }
        }
    }

    private func claim(_ value: any Entity, as key: ObjectKey, in claimed: inout [[ObjectKey: ObjectKey]], entity: EntityDescription) {
        for (index, constraint) in entity.constraints.enumerated() {
            if let uniqueValue = constraint.key(value) { claimed[index][uniqueValue] = key }
        }
    }

    /// Rewrites references to merged ids, in the change set and, for merged stored objects,
    /// in the store (found through the inverse index). Returns the entities whose objects it
    /// changed.
    private mutating func moveReferences(_ moved: [[ObjectKey: ObjectKey]]) throws -> Set<Int> {
        var rewritten = Set<Int>()
        for (target, direct) in moved.enumerated() where !direct.isEmpty {
            // An object merged into one that itself merged into a third: references go to the
            // last, the one that stays.
            var renames = direct
            for (old, new) in direct {
                var last = new, steps = 0
                while let next = direct[last], next != old, steps < direct.count {
                    last = next
                    steps += 1
                }
                renames[old] = last
            }
            for relationshipIndex in schema.incoming[target] {
                let relationship = schema.relationships[relationshipIndex]
                var sources = OrderedSet(upserts[relationship.source].keys)
                for old in renames.keys {
                    if let referencing = base.inverse[relationshipIndex][old] { sources.append(contentsOf: referencing) }
                }
                for source in sources where !isDeleted(source, entity: relationship.source) {
                    guard var value = upserts[relationship.source][source] ?? base.tables[relationship.source][source]?.value else { continue }
                    let targets = relationship.targets(value)
                    var changed = false
                    for (old, new) in renames where targets.contains(old) {
                        value = relationship.replacing(value, old, new)
                        changed = true
                    }
                    if changed {
                        upserts[relationship.source][source] = value
                        rewritten.insert(relationship.source)
                    }
                }
            }
        }
        return rewritten
    }

    // MARK: - Delete rules

    /// Whether this commit writes objects of an entity with unique constraints.
    var writesConstrainedObjects: Bool {
        schema.entities.indices.contains { !schema.entities[$0].constraints.isEmpty && !upserts[$0].isEmpty }
    }

    /// Applies the incoming relationships' delete rules of each deleted object, following
    /// cascades; with `cascadesOnly`, only `.cascade` (what the save deletes, before the unique
    /// check), and the full pass later finds those already done. References that `.deny` a
    /// delete are collected for ``checkDeniedDeletes()``, so that a reference from an object
    /// this save deletes anyway never denies, whatever order the deletes are visited in.
    ///
    /// - Complexity: O(deleted objects + the references to them), through the inverse indexes.
    mutating func applyDeleteRules(cascadesOnly: Bool) {
        var queue = deletedIfAbsent
        for (entity, keys) in deletes.enumerated() { queue.append(contentsOf: keys.map { (entity, $0) }) }
        guard !queue.isEmpty else { return }
        var pendingReferences: [Int: [ObjectKey: [ObjectKey]]] = [:]
        while let (entity, key) = queue.popLast() {
            for relationshipIndex in schema.incoming[entity] {
                let relationship = schema.relationships[relationshipIndex]
                if pendingReferences[relationshipIndex] == nil {
                    pendingReferences[relationshipIndex] = referencesInChangeSet(relationship)
                }
                var sources = OrderedSet(base.inverse[relationshipIndex][key] ?? [])
                sources.append(contentsOf: pendingReferences[relationshipIndex]?[key] ?? [])
                for source in sources where !isDeleted(source, entity: relationship.source) {
                    guard let value = upserts[relationship.source][source] ?? base.tables[relationship.source][source]?.value,
                          relationship.targets(value).contains(key)
                    else { continue }
                    switch relationship.deleteRule {
                    case .nullify:
                        if !cascadesOnly { upserts[relationship.source][source] = relationship.removing(value, key) }
                    case .cascade:
                        deletes[relationship.source].append(source)
                        upserts[relationship.source][source] = nil
                        queue.append((relationship.source, source))
                    case .deny:
                        if !cascadesOnly { denied.append((entity, key, relationshipIndex, source)) }
                    }
                }
            }
        }
    }

    /// Throws for the first `.deny` reference that is still there once every delete rule and
    /// unique merge of the commit has run.
    ///
    /// - Throws: ``GraphStoreError/deleteDenied(entity:id:referencingEntity:referencingID:relationship:)``.
    func checkDeniedDeletes() throws {
        for (entity, key, relationshipIndex, source) in denied {
            let relationship = schema.relationships[relationshipIndex]
            guard !isDeleted(source, entity: relationship.source),
                  let value = upserts[relationship.source][source] ?? base.tables[relationship.source][source]?.value,
                  relationship.targets(value).contains(key)
            else { continue }
            throw GraphStoreError.deleteDenied(
                entity: schema.entities[entity].name, id: key.description,
                referencingEntity: schema.entities[relationship.source].name,
                referencingID: source.description, relationship: relationship.name)
        }
    }

    /// Target id → ids of written objects that reference it through `relationship`.
    private func referencesInChangeSet(_ relationship: RelationshipDescription) -> [ObjectKey: [ObjectKey]] {
        var references: [ObjectKey: [ObjectKey]] = [:]
        for (key, value) in upserts[relationship.source] {
            for target in relationship.targets(value) { references[target, default: []].append(key) }
        }
        return references
    }

    // MARK: - References

    /// Every reference a written object holds must name an object that exists after the commit.
    func checkReferences() throws {
        for index in schema.entities.indices where !schema.entities[index].relationshipIndexes.isEmpty && !upserts[index].isEmpty {
            let entity = schema.entities[index]
            for (key, value) in upserts[entity.index] {
                for relationshipIndex in entity.relationshipIndexes {
                    let relationship = schema.relationships[relationshipIndex]
                    for target in relationship.targets(value) where !exists(target, entity: relationship.target) {
                        throw GraphStoreError.danglingReference(
                            entity: entity.name, id: key.description, relationship: relationship.name,
                            targetEntity: schema.entities[relationship.target].name, targetID: target.description)
                    }
                }
            }
        }
    }

    private func exists(_ key: ObjectKey, entity: Int) -> Bool {
        if upserts[entity][key] != nil { return true }
        return base.tables[entity][key] != nil && !isDeleted(key, entity: entity)
    }

    /// Whether this commit deletes the stored object `key`.
    private func isDeleted(_ key: ObjectKey, entity: Int) -> Bool {
        cleared.contains(entity) || deletes[entity].contains(key)
    }
}
