/// What a save does when other saves changed the objects it is based on, or when an object
/// collides with another on a unique constraint.
///
/// A change is based on the object as this context last read it, through
/// ``GraphContext/model(_:id:)`` or ``GraphContext/fetch(_:)`` (for a child context, or through
/// its parent), or as its own last save of it left it; for an id the context neither read nor
/// saved, on the object as stored when the context first changed it (`insert` or `delete`). At
/// save, a change conflicts when the stored object was inserted, updated or deleted by another
/// save since then: a copy read or saved, held while another context saves, then changed and
/// saved, is a conflict. A child's change made over an ancestor's pending change is no conflict
/// with that ancestor's save of it; a child's copy made on an older version than its parent's
/// pending change of the object is a conflict at the child's save, settled by the child's
/// policy (see <doc:ContextsAndMerging>). Reading the object again before changing it refreshes
/// the base. Deleting an object another
/// save already deleted is not a conflict.
///
/// | policy | conflicting change | unique collision |
/// |---|---|---|
/// | ``error`` | the save throws ``GraphStoreError/mergeConflict(_:)`` listing every conflict; nothing is committed | throws ``GraphStoreError/uniqueConstraintViolation(entity:constraint:value:existingID:incomingID:)`` |
/// | ``contextWins`` | the context's value overwrites the stored one | the incoming values are written to the existing object's id |
/// | ``storeWins`` | the change is dropped; the rest of the save commits | the existing object is kept as stored |
/// | ``mergeByProperty`` | the properties the context changed take its values, the others keep the stored ones; a deletion wins against an update, on either side | as ``contextWins`` |
///
/// Under every policy but ``error`` the existing id survives a unique collision, and every
/// reference to the incoming id is rewritten to it, so N contexts racing to create tag
/// "swift" end with one tag and no dangling references. An incoming object that collides with
/// two different objects through two constraints (its email is one's, its handle another's)
/// cannot become both: under ``contextWins`` and ``mergeByProperty`` the save throws
/// ``GraphStoreError/uniqueConstraintViolation(entity:constraint:value:existingID:incomingID:)``
/// naming the second, and commits nothing.
public enum MergePolicy: String, Sendable, Hashable, CaseIterable {
    /// A conflicting save throws and commits nothing. The default.
    case error
    /// The saving context's changes overwrite the store's.
    case contextWins
    /// The store's state is kept; only non-conflicting changes are committed.
    case storeWins
    /// Core Data's `NSMergeByPropertyObjectTrumpMergePolicy`, for values: on a conflicting
    /// update, the top-level properties (`Codable` keys) this context changed relative to the
    /// object its change is based on take this context's values, the others keep the store's;
    /// a property both sides changed takes this context's value. A nested value or array is
    /// one property.
    ///
    /// A deletion wins against an update, whichever side made it: this context's deletion of
    /// an object updated elsewhere deletes it, and its update of an object deleted elsewhere is
    /// dropped (the object stays deleted, as other saves' delete rules left it). An object both
    /// inserted has no base to compare with, so this context's value wins whole. Unique
    /// collisions merge as under ``contextWins``.
    case mergeByProperty
}
