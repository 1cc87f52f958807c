import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Folding a journal reads each snapshot object's id once, looks it up in the fold while it
/// is read, and changes the ids as the fold changes the objects: the ids (and a large table's
/// halves) must be those that reading the folded objects afresh gives.
@Suite struct JournalFoldIDTests {
    typealias LoadedIDs = GraphVersion.LoadedIDs

    static let schema = Schema(exampleModel)
    static let note = schema.index(of: Note.self)

    static func notes(_ count: Int, from start: Int = 0) -> [any Entity] {
        (start..<start + count).map { Note(text: "note \($0)", createdAt: Fixtures.epoch) }
    }

    /// Per entity index: `notes` for notes, nothing for the others.
    static func objects(_ notes: [any Entity]) -> [[any Entity]] {
        schema.entities.map { $0.index == note ? notes : [] }
    }

    static func expectSame(_ ids: LoadedIDs, _ expected: LoadedIDs, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(ids.count == expected.count, sourceLocation: sourceLocation)
        #expect((0..<min(ids.count, expected.count)).allSatisfy { ids[$0] == expected[$0] }, "every id in its place", sourceLocation: sourceLocation)
        #expect(ids.halves == expected.halves, "the halves' positions", sourceLocation: sourceLocation)
    }

    /// Objects deleted and appended, around the count from which a table is built in halves:
    /// staying above it, falling below it, rising above it.
    @Test(arguments: [(16_600, 150, 40), (16_420, 100, 0), (16_300, 0, 200), (16_300, 30, 150), (500, 20, 30)])
    func idsFollowTheFoldsDeletionsAndAppends(count: Int, deletions: Int, appends: Int) throws {
        var notes = Self.notes(count)
        var ids = LoadedIDs.read(Self.objects(notes), schema: Self.schema, splittingTables: true)[Self.note]
        // Spread over both runs, the first and last included.
        var deleted = Set((0..<deletions).map { $0 * (count / max(deletions, 1)) })
        if deletions > 1 { deleted.insert(count - 1) }
        let sortedDeleted = deleted.sorted()
        let added = Self.notes(appends, from: count)
        notes = notes.indices.filter { !deleted.contains($0) }.map { notes[$0] } + added
        ids.remove(sortedDeleted, appending: added.map { Self.schema.entities[Self.note].key($0) })
        ids.settleHalves(splitting: LoadedIDs.splits(count: notes.count, splittingTables: true))
        let expected = LoadedIDs.read(Self.objects(notes), schema: Self.schema, splittingTables: true)[Self.note]
        Self.expectSame(ids, expected)
    }

    /// The lookup finds every position whose id the slots hold, ascending, with its slot, in
    /// both runs of a large entity; a skipped entity's ids are not read.
    @Test(arguments: [true, false])
    func readingLooksUpEachID(splitting: Bool) {
        let notes = Self.notes(17_000)
        let key = Self.schema.entities[Self.note].key
        let touched = [16_999, 3, 8_500, 12_000, 0]
        var slots: [ObjectKey: Int] = [:]
        for (slot, position) in touched.enumerated() { slots[key(notes[position])] = slot }
        slots[ObjectKey(UUID())] = touched.count  // an id the file does not hold
        var lookups = Self.schema.entities.map { _ in LoadedIDs.Lookup.none }
        lookups[Self.note] = .slots(slots)
        let read = LoadedIDs.read(Self.objects(notes), schema: Self.schema, splittingTables: splitting, lookingUp: lookups)
        #expect(read.found[Self.note].map(\.position) == touched.sorted())
        #expect(read.found[Self.note].allSatisfy { touched[$0.slot] == $0.position })
        Self.expectSame(read.ids[Self.note], LoadedIDs.read(Self.objects(notes), schema: Self.schema, splittingTables: splitting)[Self.note])

        lookups[Self.note] = .skipped
        let skipped = LoadedIDs.read(Self.objects(notes), schema: Self.schema, splittingTables: splitting, lookingUp: lookups)
        #expect(skipped.ids[Self.note].count == 0 && skipped.found[Self.note].isEmpty)
    }

    /// A snapshot entity large enough to be built in halves, with a journal that deletes,
    /// updates and inserts objects over many records: the opened graph is the replayed one.
    @Test func aLargeEntityFoldsToTheReplayedGraph() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let tags = (0..<4).map { ExampleModel.Tag(name: "tag \($0)") }
        var notes = (0..<16_500).map { Note(text: "note \($0)", createdAt: Fixtures.epoch, tagIDs: [tags[$0 % tags.count].id]) }
        let first = try GraphContainer(for: exampleModel, store: .file(url))
        for tag in tags { first.mainContext.insert(tag) }
        for note in notes { first.mainContext.insert(note) }
        try first.mainContext.save()
        try await first.close()

        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        let context = container.mainContext
        for round in 0..<40 {
            for step in 0..<5 {
                let index = (round * 5 + step) * 409 % notes.count
                if step == 0 {
                    context.delete(notes[index])
                } else {
                    notes[index].text = "note \(index), round \(round)"
                    context.insert(notes[index])
                }
            }
            context.insert(Note(text: "new \(round)", createdAt: Fixtures.epoch, tagIDs: [tags[round % tags.count].id]))
            try context.save()
        }
        try await JournalFoldTests.expectCrashCopyFolds(container, at: url)
    }
}
