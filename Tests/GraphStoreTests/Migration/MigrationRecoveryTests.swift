import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// Recovery from a damaged snapshot (``SnapshotOptions/recoverFromPreviousSnapshot``) while an
/// older store is migrated: damage of the journal met on the way is the journal's, so the good
/// snapshot is neither set aside nor replaced, and the open fails naming the journal.
@Suite struct MigrationRecoveryTests {
    typealias Layout = ModelVersionJournalOnlyTests.Layout

    @Test(arguments: ModelVersionJournalOnlyTests.layouts)
    func aDamagedJournalMetWhileMigratingLeavesTheSnapshotInPlace(layout: Layout) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await ModelVersionJournalOnlyTests.crashedVersionOneStore(layout, copies: [directory])[0]
        // A previous snapshot a recovery could take (the same version-1 file), and a flipped
        // byte in the journal's first record, which another record follows.
        try FileManager.default.copyItem(atPath: url.path, toPath: url.path + ".previous")
        let journalURL = URL(fileURLWithPath: url.path + ".journal")
        var journal = try Data(contentsOf: journalURL)
        let headerSize = 44, frameSize = 8
        journal[headerSize + frameSize + 12] ^= 0x20
        try journal.write(to: journalURL)
        let before = try ModelVersionRefusalTests.contents(of: directory.url)

        let configuration = StoreConfiguration.file(
            url, format: layout.format, compression: layout.compression, coalescingInterval: .seconds(3600),
            options: SnapshotOptions(recoverFromPreviousSnapshot: true))
        #expect {
            _ = try GraphContainer(
                for: ModelVersionJournalOnlyTests.ModelV2.types, store: configuration, version: 2,
                migrations: ModelVersionJournalOnlyTests.ModelV2.migrations)
        } throws: { error in
            guard case .damagedFile(let path, _, _)? = error as? GraphStoreError else { return false }
            return path == journalURL.path
        }
        #expect(try ModelVersionRefusalTests.contents(of: directory.url) == before, "the open changed, added or removed a file")
    }
}
