import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Opening a snapshot store folds the journal's records into the snapshot's objects as the
/// graph is built: the graph must be the one replaying the records one by one gives (the
/// SQLite store's way, kept in ``JournalReplay/open(journalAt:stored:storedLineage:storePath:schema:recover:reportingChanges:prefetched:)``),
/// objects, unique and inverse indexes and sorted indexes alike.
@Suite struct JournalFoldTests {
    typealias Kit = JournalStoreTests

    /// Everything a graph holds, in comparable form: per entity the objects by id (encoded),
    /// the unique indexes, the inverse indexes and the sorted indexes in order.
    struct Shape: Equatable, CustomStringConvertible {
        var number: UInt64
        var tables: [String: [String: String]] = [:]
        var unique: [String: [String: String]] = [:]
        var inverse: [String: [String: [String]]] = [:]
        var sorted: [String: [String]] = [:]

        init(_ version: GraphVersion, schema: Schema) throws {
            number = version.number
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            for entity in schema.entities {
                var objects: [String: String] = [:]
                for (key, stored) in version.tables[entity.index] {
                    objects[key.description] = String(decoding: try encoder.encode(stored.value), as: UTF8.self)
                }
                tables[entity.name] = objects
                for (index, constraint) in entity.constraints.enumerated() {
                    unique["\(entity.name).\(constraint.name)"] = Dictionary(
                        uniqueKeysWithValues: version.unique[entity.index][index].map { ($0.key.description, $0.value.description) })
                }
                for (index, description) in entity.indexes.enumerated() {
                    sorted["\(entity.name).\(description.name)"] = version.sorted[entity.index][index].entries.map(\.id.description)
                }
            }
            for relationship in schema.relationships {
                inverse["\(schema.entities[relationship.source].name).\(relationship.name)"] = Dictionary(
                    uniqueKeysWithValues: version.inverse[relationship.index].map { ($0.key.description, $0.value.map(\.description).sorted()) })
            }
        }

        var description: String { "version \(number), \(tables.mapValues(\.count)) objects" }
    }

    /// The graph of the crashed store at `url` as the record-by-record replay gives it.
    static func replayedOneByOne(_ url: URL, schema: Schema) throws -> GraphVersion? {
        let snapshot = try SnapshotFileBackend.read(url, schema: schema, limit: .max)
        return try JournalReplay.open(
            journalAt: JournalReplay.path(forStoreAt: url.path), stored: snapshot?.version,
            storedLineage: snapshot?.header.lineage.flatMap(UUID.init(uuidString:)), storePath: url.path, schema: schema,
            recover: false
        ).version
    }

    /// Opens the crashed store at `url` (folding) and compares it with the record-by-record
    /// replay, the committed graph `expected` and its version.
    static func expectFoldEqualsReplay(
        _ url: URL, expected: [String: [String]], version: UInt64, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var schema = Schema(exampleModel)
        schema.model = ModelHistory(version: 1, migrations: [], isDeclared: false)
        let oneByOne = try #require(try replayedOneByOne(url, schema: schema), sourceLocation: sourceLocation)
        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        let folded = reopened.core.currentVersion
        #expect(try Shape(folded, schema: reopened.core.schema) == Shape(oneByOne, schema: schema), sourceLocation: sourceLocation)
        #expect(reopened.version == version, "the store version after open is the last record's", sourceLocation: sourceLocation)
        #expect(try TestStore.committedGraph(reopened, exampleModel) == expected, sourceLocation: sourceLocation)
        try reopened.checkInvariants()
        try await reopened.close()
    }

    /// Copies `container`'s store at `url` as a killed process leaves it, closes the container,
    /// runs `check` on the copy, then expects the copy to fold to the container's committed graph.
    static func expectCrashCopyFolds(
        _ container: GraphContainer, at url: URL, checking check: (URL) throws -> Void = { _ in },
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let expected = try TestStore.committedGraph(container, exampleModel)
        let version = container.version
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let copy = try Kit.crashCopy(of: url, into: scratch)
        try await container.close()
        try check(copy)
        try await expectFoldEqualsReplay(copy, expected: expected, version: version, sourceLocation: sourceLocation)
    }

    /// One id inserted, updated, deleted and inserted again over many records; objects only
    /// in the snapshot updated and deleted; unique values moved between objects; references
    /// added, moved and nullified; sorted keys changed; a table cleared and filled again.
    @Test(arguments: [true, false])
    func foldingGivesTheGraphOfReplayingEachRecord(snapshotFirst: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        var tags = Fixtures.tagNames.map { ExampleModel.Tag(name: $0) }
        var notes = (0..<12).map { Note(text: "note \($0)", createdAt: Fixtures.epoch, tagIDs: [tags[$0 % tags.count].id]) }
        var posts = Fixtures.posts(12, tags: [tags[0].id])
        if snapshotFirst {
            let first = try GraphContainer(for: exampleModel, store: .file(url))
            for tag in tags { first.mainContext.insert(tag) }
            for note in notes { first.mainContext.insert(note) }
            for post in posts { first.mainContext.insert(post) }
            try first.mainContext.save()
            try await first.close()
        }
        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        let context = container.mainContext
        func save() throws { try context.save() }
        if !snapshotFirst {
            for tag in tags { context.insert(tag) }
            try save()
            for note in notes { context.insert(note) }
            for post in posts { context.insert(post) }
            try save()
        }
        // One id through insert, updates, delete and a second insert, a record each.
        var again = Note(text: "first life", createdAt: Fixtures.epoch, tagIDs: [tags[1].id])
        context.insert(again)
        try save()
        for round in 0..<5 {
            again.text = "update \(round)"
            again.tagIDs = [tags[round % tags.count].id]
            context.insert(again)
            try save()
        }
        context.delete(again)
        try save()
        again.text = "second life"
        again.tagIDs = [tags[2].id, tags[3].id]
        context.insert(again)
        try save()
        // Objects the snapshot holds: deleted, and updated over several records.
        context.delete(notes[1])
        context.delete(posts[2])
        try save()
        for round in 0..<4 {
            notes[2].text = "note 2, change \(round)"
            notes[2].tagIDs = round.isMultiple(of: 2) ? [] : [tags[4].id, tags[0].id]
            context.insert(notes[2])
            try save()
        }
        // A unique value moves from one tag to another over two records, a freed one is taken
        // by a new tag.
        let freed = tags[1].name
        tags[1].name = "renamed"
        context.insert(tags[1])
        try save()
        tags[2].name = freed
        context.insert(tags[2])
        try save()
        let gone = tags[3]
        context.delete(gone)  // nullifies the references to it
        try save()
        let successor = ExampleModel.Tag(name: gone.name)
        context.insert(successor)
        notes[5].tagIDs = [successor.id, tags[2].id]
        context.insert(notes[5])
        try save()
        // Sorted keys change; a post leaves and comes back with another date.
        for index in [0, 3, 7] {
            posts[index].date = Fixtures.epoch.addingTimeInterval(Double(-1_000 * index))
            posts[index].tagIDs = [tags[4].id, successor.id]
            context.insert(posts[index])
            try save()
        }
        context.delete(posts[5])
        try save()
        posts[5].date = Fixtures.epoch.addingTimeInterval(1_000_000)
        context.insert(posts[5])
        try save()
        // A cleared table, then objects after the clear, one of them an id from before it.
        try context.delete(model: Post.self)
        try save()
        context.insert(posts[6])
        for post in Fixtures.posts(3, startingAt: 500, tags: [tags[0].id]) { context.insert(post) }
        try save()
        posts[6].summary = "after the clear"
        context.insert(posts[6])
        try save()

        try await Self.expectCrashCopyFolds(container, at: url) { copy throws in
            #expect(try JournalReplay.read(Kit.journalURL(copy).path)?.scan.records.count ?? 0 >= 25, "one record per save")
        }
    }

    /// Many records over a few hundred ids, chosen at random: inserts, updates, deletes, and
    /// ids deleted and inserted again, in the order a seeded generator picks.
    @Test(arguments: [UInt64(7), 1_234])
    func randomRecordsFoldToTheReplayedGraph(seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        var random = SplitMix64(seed: seed)
        let tags = (0..<8).map { ExampleModel.Tag(name: "tag \($0)") }
        var notes = (0..<200).map { Note(text: "note \($0)", createdAt: Fixtures.epoch, tagIDs: [tags[$0 % tags.count].id]) }
        let first = try GraphContainer(for: exampleModel, store: .file(url))
        for tag in tags { first.mainContext.insert(tag) }
        for note in notes.prefix(120) { first.mainContext.insert(note) }
        try first.mainContext.save()
        try await first.close()

        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        let context = container.mainContext
        var present = Set(notes.prefix(120).map(\.id))
        for round in 0..<300 {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let index = Int.random(in: 0..<notes.count, using: &random)
                if present.contains(notes[index].id), Bool.random(using: &random) {
                    context.delete(notes[index])
                    present.remove(notes[index].id)
                } else {
                    notes[index].text = "note \(index), round \(round)"
                    notes[index].tagIDs = (0..<Int.random(in: 0...2, using: &random)).map { _ in tags.randomElement(using: &random)!.id }
                    context.insert(notes[index])
                    present.insert(notes[index].id)
                }
            }
            try context.save()
        }
        try await Self.expectCrashCopyFolds(container, at: url)
    }

    /// A record that leaves a reference to a missing object (no save writes one; a journal
    /// edited by hand could) is refused naming the journal, and no file changes.
    @Test func recordsThatBreakTheGraphAreRefusedNamingTheJournal() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, _) = try await Kit.crashedStore(notes: 3, in: directory, snapshotFirst: true)
        let journal = Kit.journalURL(url)
        let last = try #require(try JournalReplay.read(journal.path)?.scan.lastVersion)
        let dangling = Note(text: "dangling", createdAt: Fixtures.epoch, tagIDs: [UUID()])
        let object = try SnapshotCodec.makeJSONEncoder().encode(dangling)
        let document = Data("{\"Note\":{\"upsert\":[".utf8) + object + Data("]}}".utf8)
        let handle = try FileHandle(forWritingTo: journal)
        try handle.seekToEnd()
        try handle.write(contentsOf: JournalFormatV1.frameRecord(version: last + 1, document: document))
        try handle.close()
        JournalDamageTests.expectRefused(url, naming: journal.path, containing: "do not form a graph")
    }
}

/// A field only the journal's records hold is checked as the snapshot's fields are: a field the
/// app's types would drop (renamed without a model version) is refused at open, naming the
/// journal, the entity, the field and an object, and no file changes.
@Suite struct JournalUnkeptFieldTests {
    typealias NoteV1 = RenamedFieldModel.NoteV1
    typealias RenamedNote = RenamedFieldModel.RenamedNote
    typealias FallbackNote = RenamedFieldModel.FallbackNote

    /// A store of the first release whose snapshot holds notes without a text, and whose
    /// journal holds saves of notes with one: what a crash of the first release leaves.
    static func crashedFirstRelease(in directory: TemporaryDirectory) async throws -> URL {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("notes.json.gz")
        let first = try GraphContainer(for: [NoteV1.self], store: .file(url))
        for id in 1...5 { first.mainContext.insert(NoteV1(id: id, text: nil)) }
        try first.mainContext.save()
        try await first.close()
        let container = try GraphContainer(for: [NoteV1.self], store: .file(url, coalescingInterval: .seconds(3600)))
        container.mainContext.insert(NoteV1(id: 6, text: nil))
        try container.mainContext.save()
        container.mainContext.insert(NoteV1(id: 3, text: "only in the journal"))
        try container.mainContext.save()
        let copy = try JournalStoreTests.crashCopy(of: url, into: directory)
        try await container.close()
        return copy
    }

    @Test func aRenamedFieldOnlyTheJournalHoldsIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.crashedFirstRelease(in: directory)
        let journal = JournalStoreTests.journalURL(url).path
        let before = JournalStoreTests.files(url)
        do {
            _ = try GraphContainer(for: [RenamedNote.self], store: .file(url))
            Issue.record("the store opened, and its next snapshot would drop the journal's text")
        } catch let error as GraphStoreError {
            guard case .codingFailed(let path, let entity, let id, let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(path == journal)
            #expect(entity == "Note")
            #expect(id == "3")
            #expect(reason.contains("Note.text"))
            #expect(reason.contains(".renameField(\"text\", to: …, in: \"Note\")"))
            #expect(reason.contains("store version"))
            #expect(reason.contains("left untouched"))
        }
        #expect(JournalStoreTests.files(url) == before, "a refused open changed a file")

        // A type that reads the old name itself opens the same store.
        let fallback = try GraphContainer(for: [FallbackNote.self], store: .file(url))
        #expect(try fallback.mainContext.fetch(FetchDescriptor<FallbackNote>(sortBy: [SortDescriptor(\.id)])).map(\.body)
            == [nil, nil, "only in the journal", nil, nil, nil])
        try await fallback.close()
    }

    /// The documented fix, a model version whose migration renames the field, takes the
    /// journal's values along.
    @Test func aMigrationRenamingTheFieldKeepsTheJournalsValues() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.crashedFirstRelease(in: directory)
        let container = try GraphContainer(
            for: [RenamedNote.self], store: .file(url), version: 2,
            migrations: [SchemaMigration(from: 1, to: 2, [.renameField("text", to: "body", in: "Note")])])
        #expect(try container.mainContext.fetch(FetchDescriptor<RenamedNote>(sortBy: [SortDescriptor(\.id)])).map(\.body)
            == [nil, nil, "only in the journal", nil, nil, nil])
        try await container.close()
    }
}
