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
            var leftOut: [(entity: Int, key: ObjectKey)] = []
            if let parent {
                leftOut = try parent.absorb(changes, actions: actions, policy: policy)
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
                    // what that save wrote.
                    markPushed(changes, leftOut: leftOut, state: &state)
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

    /// Records every id of `changes`, which this child just saved into its parent, as read
    /// through the parent's pending change, except the ids of `leftOut`, whose changes the
    /// parent did not take (``MergePolicy/storeWins``): what the child knows of them stays
    /// what it read, so a copy of them saved again is a conflict again.
    ///
    /// Called with the state lock held.
    ///
    /// - Complexity: O(changes).
    private func markPushed(_ changes: ChangeSet, leftOut: [(entity: Int, key: ObjectKey)], state: inout State) {
        var pushed = changes
        let latest = core.currentVersion
        for entity in pushed.entities.indices where pushed.hasChanges(entity: entity) {
            pushed.fold(entity)
            let skipped = Set(leftOut.lazy.filter { $0.entity == entity }.map(\.key))
            state.reads[entity].read(
                pushed.entities[entity].lazy.filter { !skipped.contains($0.key) }.map {
                    ($0.key, EntityReads.Record.inherited(sequence: $0.value.sequence))
                }, table: latest.tables[entity])
        }
    }

    /// Takes a child's saved changes and its `onCommit` actions; returns the ids whose change
    /// it left out (see ``ChangeSet/merge(_:policy:schema:rebasing:)``, which also says how a
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
    private func absorb(_ changes: ChangeSet, actions: [@Sendable () -> Void], policy: MergePolicy) throws -> [(entity: Int, key: ObjectKey)] {
        try withState { state in
            // A copy of what the look-ups read (a reference: the merge does not change it).
            let childBases = state.childBases
            let leftOut = try state.pending.merge(changes, policy: policy, schema: core.schema) { entity, key, through in
                rebasedPush(entity: entity, key: key, through: through, childBases: childBases)
            }
            state.generation += 1
            state.commitActions.append(contentsOf: actions)
            return leftOut
        }
    }
}
