import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A process killed while an open that migrated the store was keeping its copy of the old
/// files leaves the copy's temporary file, as large as the store: the next open removes it,
/// and keeps every kept copy and every other file.
@Suite struct SQLiteLeftoverCopyTests {
    @Test func openingRemovesTheTemporariesOfKeptCopies() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await SQLiteTestKit.makeStore(url, tag: "kept")
        // Written by processes that no longer run: no process has so large an id.
        let stale = [".store.sqlite.v1.tmp-999999999-deadbeef", ".store.sqlite.v1-wal.tmp-999999999-ab", ".store.sqlite.v3-2.journal.tmp-999999998-ff"]
        let unrelated = [
            "store.sqlite.v1", "store.sqlite.v1-wal", ".store.sqlite.v1.tmp-notes", ".other.sqlite.v1.tmp-999999999-ab",
            ".store.sqlite.v1.tmp-\(getpid())-ab",
        ]
        for name in stale + unrelated { try Data("x".utf8).write(to: directory.file(name)) }

        let container = try SQLiteTestKit.open(url)
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path))
        #expect(names.isDisjoint(with: stale), "\(names.intersection(stale))")
        #expect(names.isSuperset(of: unrelated), "\(Set(unrelated).subtracting(names))")
        #expect(try container.mainContext.fetch(FetchDescriptor<ExampleModel.Tag>()).map(\.name) == ["kept"])
        try await container.close()
    }
}
