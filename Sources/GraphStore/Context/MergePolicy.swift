/// What a save does when other saves changed the objects it is based on, or when an object
/// collides with another on a unique constraint.
///
/// A context bases a change on the object as stored when the context first changes that id
/// (`insert` or `delete`). At save, a change conflicts when the stored object was inserted,
/// updated or deleted by another save since then. Deleting an object another save already
/// deleted is not a conflict.
///
/// | policy | conflicting change | unique collision |
/// |---|---|---|
/// | ``error`` | the save throws ``GraphStoreError/mergeConflict(_:)`` listing every conflict; nothing is committed | throws ``GraphStoreError/uniqueConstraintViolation(entity:constraint:value:existingID:incomingID:)`` |
/// | ``contextWins`` | the context's value overwrites the stored one | the incoming values are written to the existing object's id |
/// | ``storeWins`` | the change is dropped; the rest of the save commits | the existing object is kept as stored |
///
/// Under both non-`.error` policies the existing id survives a unique collision, and every
/// reference to the incoming id is rewritten to it, so N contexts racing to create tag
/// "swift" end with one tag and no dangling references.
public enum MergePolicy: String, Sendable, Hashable, CaseIterable {
    /// A conflicting save throws and commits nothing. The default.
    case error
    /// The saving context's changes overwrite the store's.
    case contextWins
    /// The store's state is kept; only non-conflicting changes are committed.
    case storeWins
}
