import Foundation
import GraphStore
@testable import GraphStoreSQLite
import GRDB
import GraphStoreTestSupport
import Testing

/// A column holding values that the app's type neither reads nor writes (a field renamed
/// without a new model version) is refused at open: the writer would store NULL in it with
/// each save of an object. The files are left as they were.
@Suite struct SQLiteUnkeptColumnTests {
    typealias NoteV1 = RenamedFieldModel.NoteV1
    typealias RenamedNote = RenamedFieldModel.RenamedNote
    typealias FallbackNote = RenamedFieldModel.FallbackNote

    /// A closed store whose notes 1…20 have a text only from 15 on.
    static func firstRelease(in directory: TemporaryDirectory) async throws -> URL {
        let url = directory.file("notes.sqlite")
        let first = try SQLiteTestKit.open(url, model: [NoteV1.self])
        for id in 1...20 { first.mainContext.insert(NoteV1(id: id, text: id >= 15 ? "note \(id)" : nil)) }
        try first.mainContext.save()
        try await first.close()
        return url
    }

    @Test func aRenamedOptionalFieldIsRefusedAtOpen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.firstRelease(in: directory)
        let before = SQLiteJournalTestKit.snapshot(of: directory.url)

        let error = SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url, model: [RenamedNote.self]) }
        guard case .codingFailed(let path, let entity, let id, let reason) = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(path == url.path)
        #expect(entity == "Note")
        #expect((15...20).map(String.init).contains(id ?? ""))
        #expect(reason.contains("Note.text"))
        #expect(reason.contains(".renameField(\"text\", to: …, in: \"Note\")"))
        #expect(SQLiteJournalTestKit.snapshot(of: directory.url) == before)
    }

    @Test func aTypeThatReadsTheOldColumnOpens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.firstRelease(in: directory)
        let container = try SQLiteTestKit.open(url, model: [FallbackNote.self])
        let bodies = try container.mainContext.fetch(FetchDescriptor<FallbackNote>(sortBy: [SortDescriptor(\.id)])).map(\.body)
        #expect(bodies == (1...20).map { $0 >= 15 ? "note \($0)" : nil })
        try await container.close()
    }
}

/// The unkept-column check compares a row's two encodings (with the column's value and
/// without it). A dictionary is written in its iteration order, which two dictionaries of the
/// same entries need not share, so the comparison reads JSON columns as values.
@Suite struct SQLiteUnkeptColumnComparisonTests {
    @Test func aJSONColumnComparesAsAValue() throws {
        let keys = (0..<40).map { "k\($0)" }
        let one = Dictionary(uniqueKeysWithValues: keys.map { ($0, $0.count) })
        var other = [String: Int](minimumCapacity: 4_096)
        for key in keys.reversed() { other[key] = key.count }
        let first = String(decoding: try JSONEncoder().encode(one), as: UTF8.self)
        let second = String(decoding: try JSONEncoder().encode(other), as: UTF8.self)
        // The test means something only if the two texts differ.
        try #require(first != second)
        let a = SQLiteUnkeptColumnCheck.comparable(ColumnValue(value: first.databaseValue, kind: .json))
        let b = SQLiteUnkeptColumnCheck.comparable(ColumnValue(value: second.databaseValue, kind: .json))
        #expect(a == b)
        let changed = SQLiteUnkeptColumnCheck.comparable(ColumnValue(value: first.replacingOccurrences(of: "\"k1\":2", with: "\"k1\":3").databaseValue, kind: .json))
        #expect(changed != a)
    }
}
