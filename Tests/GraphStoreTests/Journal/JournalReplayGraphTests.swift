import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Replaying a journal record by record (how a SQLite store, and a snapshot that is migrated or
/// recovered from, opens) checks what each record touched as opening a snapshot checks every
/// object: a record that leaves a reference to a missing object, a reference into what it
/// deleted, or a unique value held twice is refused with an error naming the journal, the
/// record, the entity and the id. No save writes such a record; a journal damaged behind
/// matching checksums, or written by other software, could hold one.
@Suite struct JournalReplayGraphTests {
    typealias Kit = JournalStoreTests
    typealias Tag = ExampleModel.Tag

    static let schema = Schema(exampleModel)

    /// A crashed store of three notes, each with its own tag ("tag 0"…), and its graph.
    static func crashed(in directory: TemporaryDirectory) async throws -> (url: URL, version: GraphVersion) {
        let (url, _) = try await Kit.crashedStore(notes: 3, in: directory, snapshotFirst: true)
        return (url, try #require(try JournalFoldTests.replayedOneByOne(url, schema: schema)))
    }

    /// Appends a record holding `document` after the journal's last one.
    static func append(_ document: String, toJournalOf url: URL) throws {
        let journal = Kit.journalURL(url)
        let last = try #require(try JournalReplay.read(journal.path)?.scan.lastVersion)
        let handle = try FileHandle(forWritingTo: journal)
        try handle.seekToEnd()
        try handle.write(contentsOf: JournalFormatV1.frameRecord(version: last + 1, document: Array(document.utf8)))
        try handle.close()
    }

    /// The record-by-record replay must fail naming the journal and the record, with `texts`
    /// in its reason; the folding open must refuse the store too, changing no file.
    static func expectRefused(_ url: URL, containing texts: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let journal = Kit.journalURL(url)
        #expect(sourceLocation: sourceLocation) {
            _ = try JournalFoldTests.replayedOneByOne(url, schema: schema)
        } throws: { error in
            guard case .damagedFile(let path, _, let reason)? = error as? GraphStoreError else { return false }
            return path == journal.path && reason.contains("record of store version") && texts.allSatisfy { reason.contains($0) }
        }
        JournalDamageTests.expectRefused(url, naming: journal.path, containing: "do not form a graph", sourceLocation: sourceLocation)
    }

    static func encoded(_ object: some Entity) throws -> String {
        String(decoding: try SnapshotCodec.makeJSONEncoder().encode(object), as: UTF8.self)
    }

    static func tag(named name: String, in version: GraphVersion) throws -> Tag {
        let tags = version.tables[schema.index(of: Tag.self)].values.map { $0.value as! Tag }
        return try #require(tags.first { $0.name == name })
    }

    /// Appends the record `make` writes for the crashed store's graph, and expects opening to
    /// refuse it with the texts `make` names.
    static func expectRecordRefused(
        sourceLocation: SourceLocation = #_sourceLocation, _ make: (GraphVersion) throws -> (document: String, texts: [String])
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, version) = try await crashed(in: directory)
        let (document, texts) = try make(version)
        try append(document, toJournalOf: url)
        expectRefused(url, containing: texts, sourceLocation: sourceLocation)
    }

    @Test func aReferenceToAMissingObjectIsRefused() async throws {
        try await Self.expectRecordRefused { _ in
            let missing = UUID()
            let note = Note(text: "dangling", createdAt: Fixtures.epoch, tagIDs: [missing])
            return ("{\"Note\":{\"upsert\":[\(try Self.encoded(note))]}}", ["Note \(note.id)", "Tag \(missing)", "not in the store"])
        }
    }

    @Test func deletingAReferencedObjectIsRefused() async throws {
        try await Self.expectRecordRefused { version in
            let tag = try Self.tag(named: "tag 1", in: version)
            return ("{\"Tag\":{\"delete\":[\"\(tag.id)\"]}}", ["Note ", "Tag \(tag.id)", "which the journal deleted"])
        }
    }

    @Test func clearingAReferencedTableIsRefused() async throws {
        try await Self.expectRecordRefused { _ in ("{\"Tag\":{\"clear\":true}}", ["Note ", "which the journal deleted"]) }
    }

    @Test func aUniqueValueHeldTwiceIsRefused() async throws {
        try await Self.expectRecordRefused { version in
            let holder = try Self.tag(named: "tag 2", in: version)
            let taker = Tag(name: "tag 2")
            return ("{\"Tag\":{\"upsert\":[\(try Self.encoded(taker))]}}", ["Tag \(holder.id)", "name tag 2", "also held by \(taker.id)"])
        }
    }

    @Test func twoObjectsOfOneRecordTakingOneValueAreRefused() async throws {
        try await Self.expectRecordRefused { _ in
            let first = Tag(name: "twice"), second = Tag(name: "twice")
            return ("{\"Tag\":{\"upsert\":[\(try Self.encoded(first)),\(try Self.encoded(second))]}}", ["name twice", "also held by"])
        }
    }

    /// What saves write passes: names swapped and a deleted tag's name taken in one record, a
    /// tag deleted with its notes nullified. The replayed graph is the committed one.
    @Test func recordsOfRealSavesThatMoveValuesReplay() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("store.json.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        let main = container.mainContext
        var a = Tag(name: "a"), b = Tag(name: "b")
        let c = Tag(name: "c")
        main.insert(contentsOf: [a, b, c])
        main.insert(Note(text: "on c", createdAt: Fixtures.epoch, tagIDs: [c.id, a.id]))
        try main.save()
        swap(&a.name, &b.name)
        main.insert(a)
        main.insert(b)
        main.delete(c)
        main.insert(Tag(name: "c"))
        try main.save()
        let copy = try Kit.crashCopy(of: url, into: directory)
        let expected = container.mainContext
        let replayed = try #require(try JournalFoldTests.replayedOneByOne(copy, schema: Self.schema))
        try replayed.checkInvariants(schema: Self.schema)
        let names = replayed.tables[Self.schema.index(of: Tag.self)].values.map { ($0.value as! Tag).name }.sorted()
        #expect(names == ["a", "b", "c"])
        #expect(try expected.fetch(FetchDescriptor<Note>()).map(\.tagIDs) == [[a.id]])
        let notes = replayed.tables[Self.schema.index(of: Note.self)].values.map { ($0.value as! Note).tagIDs }
        #expect(notes == [[a.id]])
        try await container.close()
    }
}
