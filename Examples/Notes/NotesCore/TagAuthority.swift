import ExampleModel
import Foundation
import GraphStore

/// The one place tags come from: looks a tag up by name, or creates it, without ever creating a
/// duplicate, even when many tasks ask for the same new name at once.
///
/// It never waits for an fsync or a snapshot: creating a tag is a save (visible at once, and
/// journaled), not a flush.
/// Duplicates are prevented by the store, not by a lock here: ``Tag`` has a unique constraint on
/// its name, so when two callers create "swift" concurrently the second save merges into the
/// first tag (merge policy `.storeWins`), and both callers get the surviving tag back.
public struct TagAuthority: Sendable {
    public let container: GraphContainer

    public init(container: GraphContainer) {
        self.container = container
    }

    /// The tag named `name`, if there is one.
    ///
    /// Found through the unique index on `name`.
    ///
    /// - Throws: nothing today; kept throwing so callers need not change.
    /// - Complexity: O(log number of tags).
    public func existingTag(named name: String) throws -> Tag? {
        container.newBackgroundContext().model(Tag.self, unique: \.name, name)
    }

    /// The tag named `name`, created when missing.
    ///
    /// - Throws: `GraphStoreError` from the save.
    public func tag(named name: String) throws -> Tag {
        if let existing = try existingTag(named: name) { return existing }
        let context = container.newBackgroundContext()
        context.name = "TagAuthority"
        context.mergePolicy = .storeWins
        context.insert(Tag(name: name))
        try context.save()
        // Whoever won the race, the tag with this name is now the one to use.
        guard let tag = try existingTag(named: name) else {
            preconditionFailure("TagAuthority: the tag \(name) was saved but is not visible")
        }
        return tag
    }
}
