import ExampleModel
import Foundation
import GraphStore

/// A pinned note: kept at the top of `notes list`. Its id is the note's id.
public struct Pin: Entity, Hashable {
    public var id: UUID
    public var noteID: Note.ID?
    public var pinnedAt: Date

    public init(note: Note, at date: Date = .now) {
        id = note.id
        noteID = note.id
        pinnedAt = date
    }

    /// Deleting the note deletes its pin.
    public static var relationships: [Relationship<Pin>] { [.toOne(\.noteID, Note.self, deleteRule: .cascade)] }
}

/// The notes tool's model and its history.
///
/// - Version 1: posts, notes and tags (``ExampleModel``). People pinned a note by tagging it
///   `pinned`.
/// - Version 2: pins are their own entity; the `pinned` tag is gone.
public enum NotesModel {
    public static let version = 2
    public static let entities: [any Entity.Type] = exampleModel + [Pin.self]

    /// Version 1 to 2: every note tagged `pinned` gets a ``Pin`` (dated when the note was last
    /// modified), loses the tag, and the tag is removed.
    public static let migrations = [
        SchemaMigration(from: 1, to: 2, [
            .transformStore { store in
                guard let tag = store["Tag"].first(where: { $0["name"] == .string("pinned") }), let tagID = tag["id"] else { return }
                var pins: [[String: SnapshotValue]] = []
                store["Note"] = store["Note"].map { note in
                    guard case .array(let tagIDs)? = note["tagIDs"], tagIDs.contains(tagID), let id = note["id"] else { return note }
                    var note = note
                    note["tagIDs"] = .array(tagIDs.filter { $0 != tagID })
                    pins.append(["id": id, "noteID": id, "pinnedAt": note["modifiedAt"] ?? .double(0)])
                    return note
                }
                store["Pin"] = pins
                store["Tag"] = store["Tag"].filter { $0["id"] != tagID }
            },
        ]),
    ]

    /// Opens the notes store at `url`, migrating a version-1 store.
    ///
    /// - Throws: as ``GraphContainer/init(for:store:version:migrations:)``.
    public static func container(at url: URL) throws -> GraphContainer {
        try GraphContainer(for: entities, store: .file(url), version: version, migrations: migrations)
    }
}
