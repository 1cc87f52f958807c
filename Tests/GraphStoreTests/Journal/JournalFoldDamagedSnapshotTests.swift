import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// A damaged snapshot under a journal: the journal's records must not hide the damage. The
/// open that folds the records into the snapshot as it loads refuses what the record-by-record
/// replay refuses.
@Suite struct JournalFoldDamagedSnapshotTests {
    /// An uncompressed snapshot (no checksum) holding a note twice, under a record that deletes
    /// that note: the fold deleted one copy and kept the other, and the store opened with the
    /// deleted note back. It is refused, naming the snapshot, as without the journal.
    @Test func aSnapshotHoldingAnIDTwiceIsRefusedUnderARecordThatDeletesIt() async throws {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("store.json")
        let doomed = Note(text: "deleted by the journal", createdAt: Fixtures.epoch)
        let first = try GraphContainer(for: exampleModel, store: .file(url, format: .json, compression: .none))
        first.mainContext.insert(doomed)
        first.mainContext.insert(Note(text: "kept", createdAt: Fixtures.epoch))
        try first.mainContext.save()
        try await first.close()
        let container = try GraphContainer(
            for: exampleModel, store: .file(url, format: .json, compression: .none, coalescingInterval: .seconds(3600)))
        container.mainContext.delete(doomed)
        try container.mainContext.save()
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let copy = try JournalStoreTests.crashCopy(of: url, into: scratch)
        try await container.close()

        // The doomed note twice in the snapshot, the header counting both.
        var document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: copy)) as? [String: Any])
        var entities = try #require(document["entities"] as? [String: Any])
        var notes = try #require(entities["Note"] as? [[String: Any]])
        var twin = try #require(notes.first { $0["text"] as? String == doomed.text })
        twin["text"] = "its twin"
        notes.append(twin)
        entities["Note"] = notes
        document["entities"] = entities
        var header = try #require(document["header"] as? [String: Any])
        var counts = try #require(header["counts"] as? [String: Any])
        counts["Note"] = notes.count
        header["counts"] = counts
        document["header"] = header
        try JSONSerialization.data(withJSONObject: document).write(to: copy)
        let before = JournalStoreTests.files(copy)

        #expect {
            _ = try GraphContainer(for: exampleModel, store: .file(copy, format: .json, compression: .none))
        } throws: { error in
            guard case .damagedFile(let path, _, let reason)? = error as? GraphStoreError else { return false }
            return path == copy.path && reason.contains(doomed.id.uuidString)
        }
        #expect(JournalStoreTests.files(copy) == before)
    }
}
