import ExampleModel
import Foundation
import GraphStore

/// The operations of the `notes` tool, over a container: add, list, tag, archive, search.
public struct NotesLibrary: Sendable {
    public let container: GraphContainer
    public let tags: TagAuthority

    public init(container: GraphContainer) {
        self.container = container
        tags = TagAuthority(container: container)
    }

    /// An error a user can act on, such as an unknown note id.
    public struct Problem: Error, CustomStringConvertible, Equatable {
        public let description: String
    }

    /// Adds a note with the given tags (created when missing) and returns it.
    ///
    /// - Throws: `GraphStoreError` from saving.
    @discardableResult
    public func add(_ text: String, tags names: [String] = [], at date: Date = .now) throws -> Note {
        let tagIDs = try names.map { try tags.tag(named: $0).id }
        let note = Note(text: text, createdAt: date, tagIDs: unique(tagIDs))
        let context = container.mainContext
        context.insert(note)
        try context.save()
        return note
    }

    /// Notes, newest first; only those tagged `tag` when given; archived ones only when asked.
    ///
    /// - Throws: ``Problem`` for an unknown tag; `GraphStoreError` from fetching.
    public func list(tag: String? = nil, archived: Bool = false) throws -> [Note] {
        var notes: [Note]
        if let tag {
            guard let found = try tags.existingTag(named: tag) else { throw Problem(description: "no tag named \(tag)") }
            let ids = container.mainContext.fetchIdentifiers(Note.self, referencing: found.id, of: Tag.self)
            notes = ids.compactMap { container.mainContext.model(Note.self, id: $0) }.filter { $0.isArchived == archived }
            notes.sort { $0.createdAt > $1.createdAt }
        } else {
            notes = try container.mainContext.fetch(FetchDescriptor<Note>(
                predicate: #Predicate { $0.isArchived == archived }, sortBy: [SortDescriptor(\.createdAt, order: .reverse)]))
        }
        return notes
    }

    /// Adds the tag `name` to the note whose id starts with `idPrefix`.
    ///
    /// - Throws: ``Problem`` for an unknown or ambiguous id.
    @discardableResult
    public func tag(_ idPrefix: String, with name: String) throws -> Note {
        var note = try note(matching: idPrefix)
        let tag = try tags.tag(named: name)
        if !note.tagIDs.contains(tag.id) { note.tagIDs.append(tag.id) }
        note.modifiedAt = .now
        return try save(note)
    }

    /// Archives the note whose id starts with `idPrefix`.
    @discardableResult
    public func archive(_ idPrefix: String) throws -> Note {
        var note = try note(matching: idPrefix)
        note.isArchived = true
        note.modifiedAt = .now
        return try save(note)
    }

    /// Pins the note whose id starts with `idPrefix`.
    @discardableResult
    public func pin(_ idPrefix: String, at date: Date = .now) throws -> Note {
        let note = try note(matching: idPrefix)
        container.mainContext.insert(Pin(note: note, at: date))
        try container.mainContext.save()
        return note
    }

    /// The pinned notes, most recently pinned first.
    public func pinned() throws -> [Note] {
        let pins = try container.mainContext.fetch(FetchDescriptor<Pin>(sortBy: [SortDescriptor(\.pinnedAt, order: .reverse)]))
        return pins.compactMap { pin in pin.noteID.flatMap { container.mainContext.model(Note.self, id: $0) } }
    }

    /// Every tag with the number of notes that carry it, most used first.
    public func tagCounts() throws -> [(name: String, count: Int)] {
        let context = container.mainContext
        return try context.fetch(FetchDescriptor<Tag>(sortBy: [SortDescriptor(\.name)]))
            .map { ($0.name, context.fetchCount(Note.self, referencing: $0.id, of: Tag.self)) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.name < $1.name }
    }

    /// Notes containing every word of `words` (case-insensitive), newest first.
    public func search(_ words: [String]) throws -> [Note] {
        let lowered = words.map { $0.lowercased() }
        return try container.mainContext.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.createdAt, order: .reverse)]))
            .filter { note in
                let text = note.text.lowercased()
                return lowered.allSatisfy { text.contains($0) }
            }
    }

    /// The note whose id (as text) starts with `prefix`, case-insensitively.
    public func note(matching prefix: String) throws -> Note {
        let prefix = prefix.lowercased()
        let matches = try container.mainContext.fetch(FetchDescriptor<Note>()).filter { $0.id.uuidString.lowercased().hasPrefix(prefix) }
        guard !prefix.isEmpty, let first = matches.first else { throw Problem(description: "no note with an id starting \(prefix)") }
        guard matches.count == 1 else { throw Problem(description: "\(matches.count) notes have ids starting \(prefix); give more characters") }
        return first
    }

    /// The names of a note's tags, in order.
    public func tagNames(of note: Note) -> [String] {
        note.tagIDs.compactMap { container.mainContext.model(Tag.self, id: $0)?.name }
    }

    private func save(_ note: Note) throws -> Note {
        container.mainContext.insert(note)
        try container.mainContext.save()
        return note
    }

    private func unique(_ ids: [Tag.ID]) -> [Tag.ID] {
        var seen = Set<Tag.ID>()
        return ids.filter { seen.insert($0).inserted }
    }
}
