import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A stored field that the app's types neither read nor write (a field renamed without a new
/// model version) is refused at open, before a write could drop its values; the file is left
/// byte for byte as it was.
@Suite struct UnkeptFieldTests {
    typealias NoteV1 = RenamedFieldModel.NoteV1
    typealias RenamedNote = RenamedFieldModel.RenamedNote
    typealias FallbackNote = RenamedFieldModel.FallbackNote

    static let formats: [(SnapshotFormat, Compression)] = [(.json, .gzip), (.binaryPropertyList, .none), (.json, .none)]

    /// A closed store of `notes` as the first release wrote it.
    static func firstRelease(_ notes: [NoteV1], format: SnapshotFormat, compression: Compression, in directory: TemporaryDirectory) async throws -> URL {
        let url = directory.file("notes")
        let container = try GraphContainer(for: [NoteV1.self], store: .file(url, format: format, compression: compression))
        let context = container.mainContext
        for note in notes { context.insert(note) }
        try context.save()
        try await container.close()
        return url
    }

    @Test(arguments: 0..<formats.count)
    func aRenamedOptionalFieldIsRefusedNamingTheFieldAndAnObject(format: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // The first objects have no text, so the field only shows in a later set of fields.
        let notes = (1...40).map { NoteV1(id: $0, text: $0 > 30 ? "note \($0)" : nil) }
        let (kind, compression) = Self.formats[format]
        let url = try await Self.firstRelease(notes, format: kind, compression: compression, in: directory)
        let before = try ModelVersionRefusalTests.contents(of: directory.url)

        do {
            _ = try GraphContainer(for: [RenamedNote.self], store: .file(url, format: kind, compression: compression))
            Issue.record("the store opened, and its next write would drop every text")
        } catch let error as GraphStoreError {
            guard case .codingFailed(let path, let entity, let id, let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(path == url.path)
            #expect(entity == "Note")
            // An object that has a text (stored order is the table's, not insertion order).
            #expect((31...40).map(String.init).contains(id ?? ""))
            #expect(reason.contains("Note.text"))
            #expect(reason.contains(".renameField(\"text\", to: …, in: \"Note\")"))
            #expect(reason.contains("left untouched"))
        }
        #expect(try ModelVersionRefusalTests.contents(of: directory.url) == before)

        // The documented fix: a model version whose migration renames the field.
        let container = try GraphContainer(
            for: [RenamedNote.self], store: .file(url, format: kind, compression: compression), version: 2,
            migrations: [SchemaMigration(from: 1, to: 2, [.renameField("text", to: "body", in: "Note")])])
        let bodies = try container.mainContext.fetch(FetchDescriptor<RenamedNote>(sortBy: [SortDescriptor(\.id)])).map(\.body)
        #expect(bodies == notes.map(\.text))
        try await container.close()
    }

    @Test func aFieldWithoutValuesOpens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.firstRelease((1...5).map { NoteV1(id: $0, text: nil) }, format: .json, compression: .gzip, in: directory)
        let container = try GraphContainer(for: [RenamedNote.self], store: .file(url))
        #expect(try container.mainContext.fetchCount(FetchDescriptor<RenamedNote>()) == 5)
        try await container.close()
    }

    @Test func explicitNullsOfAnUnknownFieldOpen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.firstRelease((1...5).map { NoteV1(id: $0, text: "t\($0)") }, format: .json, compression: .none, in: directory)
        // An outside writer kept the field, with nulls.
        var document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var entities = try #require(document["entities"] as? [String: Any])
        let notes = try #require(entities["Note"] as? [[String: Any]])
        entities["Note"] = notes.map { note in note.merging(["text": NSNull()]) { $1 } }
        document["entities"] = entities
        try JSONSerialization.data(withJSONObject: document).write(to: url)

        let container = try GraphContainer(for: [RenamedNote.self], store: .file(url, format: .json, compression: .none))
        #expect(try container.mainContext.fetchCount(FetchDescriptor<RenamedNote>()) == 5)
        try await container.close()
    }

    @Test(arguments: 0..<formats.count)
    func aTypeThatReadsTheOldNameItselfOpensAndKeepsTheValues(format: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (kind, compression) = Self.formats[format]
        let notes = (1...10).map { NoteV1(id: $0, text: $0.isMultiple(of: 2) ? "note \($0)" : nil) }
        let url = try await Self.firstRelease(notes, format: kind, compression: compression, in: directory)

        let container = try GraphContainer(for: [FallbackNote.self], store: .file(url, format: kind, compression: compression))
        let context = container.mainContext
        let first = try #require(try context.fetch(FetchDescriptor<FallbackNote>(predicate: #Predicate { $0.id == 1 })).first)
        var changed = first
        changed.body = "changed"
        context.insert(changed)
        try context.save()
        try await container.close()

        let reopened = try GraphContainer(for: [FallbackNote.self], store: .file(url, format: kind, compression: compression))
        let bodies = try reopened.mainContext.fetch(FetchDescriptor<FallbackNote>(sortBy: [SortDescriptor(\.id)])).map(\.body)
        #expect(bodies == ["changed"] + notes.dropFirst().map(\.text))
        try await reopened.close()
    }
}
