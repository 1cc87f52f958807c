import Foundation

extension GraphContext {
    // MARK: - Saving

    /// Commits this context's changes: to the store for a top-level context, into the parent
    /// for a child.
    ///
    /// For a top-level context the change set commits atomically under a short lock covering
    /// in-memory work and, for a journaled store, one `write(2)` of the encoded changes to the
    /// journal; `save()` returns once the commit is visible to every context (and, with
    /// ``Durability/synchronous``, fsynced), after running the `onCommit` actions. It never waits
    /// for a snapshot write.
    ///
    /// > Important: Visible after `save()`, and kept through the process dying with the default
    /// > ``Durability/journaled``; durable through power loss after ``GraphContainer/flush()``.
    ///
    /// - Throws: ``GraphStoreError/mergeConflict(_:)`` (policy `.error`; for a child context,
    ///   when one of its changes was made on an older version of an object than its parent's
    ///   pending change of it),
    ///   ``GraphStoreError/uniqueConstraintViolation(entity:constraint:value:existingID:incomingID:)``
    ///   (policy `.error`), ``GraphStoreError/deleteDenied(entity:id:referencingEntity:referencingID:relationship:)``,
    ///   ``GraphStoreError/danglingReference(entity:id:relationship:targetEntity:targetID:)``,
    ///   ``GraphStoreError/containerClosed``,
    ///   ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` when the changes cannot
    ///   be appended to the journal (disk full, read-only file system),
    ///   ``GraphStoreError/codingFailed(path:entity:id:reason:)`` when an object does not encode.
    ///   When it throws nothing is committed and the context keeps its changes (call
    ///   `rollback()` to drop them). The one exception: with ``Durability/synchronous``, a failed
    ///   fsync after the append throws `fileOperationFailed` for a save that is committed (visible
    ///   and in the journal) but may not survive a power loss; the context moves on.
    /// - Complexity: O(changed objects + their references), plus encoding the changed objects
    ///   for the journal; independent of the store's size up to the O(log n) cost of each
    ///   persistent-map update.
    public func save() throws {
        // The actions run after the save lock is released: they are user code, and may save
        // this context again.
        let (committedActions, notDurable) = try withSaveLock { () throws -> ([@Sendable () -> Void], GraphStoreError?) in
            let (changes, actions, actionsEpoch, policy, name, generation) = withState { state in
                (state.pending, state.commitActions, state.commitActionsEpoch, state.mergePolicy, state.name, state.generation)
            }
            var committed: GraphCore.Committed?
            var notDurable: GraphStoreError?
            var pushed: [(entity: Int, key: ObjectKey, pushed: ChangeSet.Pushed)] = []
            if let parent {
                pushed = try parent.absorb(changes, actions: actions, policy: policy)
            } else if !changes.isEmpty {
                do {
                    committed = try core.commit(changes, policy: policy, contextName: name)
                } catch let notDurableCommit as GraphCore.CommittedButNotDurable {
                    // Committed and visible: the context moves on, and the caller hears that
                    // the save may not survive a power loss.
                    committed = notDurableCommit.committed
                    notDurable = notDurableCommit.error
                }
            }
            withState { state in
                let rebasing = state.generation != generation
                if rebasing {
                    state.pending.removeCommitted(changes)
                } else {
                    state.pending = emptyChanges
                }
                // Objects changed again while this save committed are now based on what it
                // wrote, so the next save does not conflict with this one; so are later changes
                // of objects this context had read.
                if parent != nil {
                    // What this child pushed it now sees through its parent's change: a later
                    // change of it is based as the parent's is, or, once the parent saved, on
                    // what that save wrote. So is a change of it made while this save ran.
                    markPushed(changes, pushed: pushed, state: &state)
                    if rebasing {
                        state.pending.rebasePushed(changes, taken: pushed.compactMap { entity, key, outcome in
                            guard case .taken(let sequence, _) = outcome else { return nil }
                            return (entity, key, sequence)
                        })
                    }
                } else if let committed {
                    // A save that changed nothing (it only deleted what was gone) settles those ids.
                    let settledBy = committed.change ?? GraphChange(version: core.currentNumber, contextName: name, inserted: [:], updated: [:], deleted: [:])
                    settle(changes, written: settledBy, stamps: committed, policy: policy, rebasing: rebasing, state: &state)
                }
                state.generation += 1
                if state.commitActionsEpoch == actionsEpoch { state.commitActions.removeFirst(actions.count) }
            }
            // Either may hold the last reference to a whole deleted table (a clear marker, a
            // dropped table) or to many thousand objects (the commit's base tables hold what a
            // cascade deleted): freeing them should not delay the save.
            let written = committed?.change.map { $0.insertedCount + $0.updatedCount + $0.deletedCount } ?? 0
            if changes.count >= BackgroundRelease.objectCount || written >= BackgroundRelease.objectCount
                || changes.cleared.contains(where: { $0 != nil }) {
                BackgroundRelease.drop((consume changes, consume committed))
            }
            return (parent == nil ? actions : [], notDurable)
        }
        // A save that committed but may not survive a power loss still committed: its actions
        // run, as its change notification did, before the caller hears of the fsync.
        for action in committedActions { action() }
        if let notDurable { throw notDurable }
    }

    /// Records what this child knows of every id of `changes`, which it just saved into its
    /// parent, from what the parent did with each (`pushed`): an id whose change the parent
    /// took is read through the parent's change; one the parent kept its own change of (or
    /// merged the child's properties into) stays based on the version the child's copy was
    /// made on, so a copy of it saved again is settled again the same way instead of replacing
    /// the parent's change. For this context's own children, such an id is recorded as a
    /// rollback of the change they may have read through would be, and a taken one as leading
    /// to the parent's change (whose sequence is new: see ``ChangeSet/merge(_:policy:schema:rebasing:)``).
    ///
    /// Called with the state lock held.
    ///
    /// - Complexity: O(changes).
    private func markPushed(_ changes: ChangeSet, pushed: [(entity: Int, key: ObjectKey, pushed: ChangeSet.Pushed)], state: inout State) {
        guard !pushed.isEmpty else { return }
        let latest = core.currentVersion
        var byEntity: [Int: [(ObjectKey, EntityReads.Record)]] = [:]
        // For this context's own children: what each pushed change left, as a save of it would.
        var left: [Int: [(key: ObjectKey, base: StoredObject?, through: UInt64?, byRollback: Bool)]] = [:]
        for (entity, key, outcome) in pushed {
            switch outcome {
            case .taken(let sequence, let base):
                byEntity[entity, default: []].append((key, .inherited(sequence: sequence)))
                // A child that read through the pushed change is based as the parent's change
                // of `sequence` is, which its sequence here does not lead to.
                left[entity, default: []].append((key, base, sequence, false))
            case .kept(let base):
                byEntity[entity, default: []].append((key, .stored(base)))
                left[entity, default: []].append((key, base, nil, true))
            }
        }
        var saved = changes
        for (entity, records) in byEntity {
            saved.fold(entity)
            state.reads[entity].read(records, table: latest.tables[entity], byUser: false)
        }
        guard recordsForChildren(&state) else { return }
        for (entity, records) in left {
            let sequences = saved.entities[entity]
            for byRollback in [false, true] {
                state.childBases[entity].settle(
                    records.lazy.filter { $0.byRollback == byRollback }.compactMap { record in
                        sequences[record.key].map {
                            // A value this context's own child pushed here continues no record.
                            (record.key, $0.sequence, $0.holdsChildValue ? StoredObject??.none : .some($0.base), record.base, record.through)
                        }
                    }, byRollback: byRollback, table: latest.tables[entity])
            }
        }
    }

    /// Takes a child's saved changes and its `onCommit` actions; returns what it did with each
    /// change (see ``ChangeSet/merge(_:policy:schema:rebasing:)``, which also says how a
    /// child's change of an id this context changed too is settled under `policy`, the
    /// child's merge policy).
    ///
    /// A change the child made over an ancestor's pending change is based on what that change
    /// left (this context or an ancestor may have saved it since): looked up under this
    /// context's lock, so that a save of this context settles either before (and the look-up
    /// finds what it wrote) or after (and rebases the change it finds pending then).
    ///
    /// - Throws: ``GraphStoreError/mergeConflict(_:)`` under `.error` when a change of the child
    ///   was made on an older version than this context's change of the id; then nothing is
    ///   taken.
    private func absorb(
        _ changes: ChangeSet, actions: [@Sendable () -> Void], policy: MergePolicy
    ) throws -> [(entity: Int, key: ObjectKey, pushed: ChangeSet.Pushed)] {
        try withState { state in
            // A copy of what the look-ups read (a reference: the merge does not change it).
            let childBases = state.childBases
            let merged = try state.pending.merge(changes, policy: policy, schema: core.schema) { entity, key, through in
                rebasedPush(entity: entity, key: key, through: through, childBases: childBases)
            }
            // What this context knew before each child's value it takes: its own later changes
            // of the id are based on that until it reads the id (see `PendingChange.fromChild`);
            // with no record of the id, the base of its own change the value replaced.
            for (entity, key, change) in merged.replaced { state.reads[entity].noteUnreadChildValue(at: key, fallback: change.base) }
            for (entity, key, _) in merged.pushed where state.pending.entities[entity][key]?.fromChild == true {
                state.reads[entity].noteUnreadChildValue(at: key)
            }
            if !merged.replaced.isEmpty, recordsForChildren(&state) {
                // A child that read an id through a replaced change never saw what replaced it:
                // it keeps that change's base, as after a rollback of it.
                let latest = core.currentVersion
                for (entity, key, change) in merged.replaced {
                    state.childBases[entity].settleRolledBack(CollectionOfOne((key, change)), continuing: true, table: latest.tables[entity])
                }
            }
            state.generation += 1
            state.commitActions.append(contentsOf: actions)
            return merged.pushed
        }
    }
}
