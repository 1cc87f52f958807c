import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// A store killed before its first snapshot was written (within the coalescing interval after
/// its first save) still carries its model version: a newer app migrates what its saves left,
/// an older app refuses what a newer one saved.
@Suite struct ModelVersionJournalOnlyTests {
    /// Version 2 of the test model: `Memo` became `Note`, `text` became `body`, `pinned` was
    /// added (``ModelV3/oneToTwo``).
    enum ModelV2 {
        struct Note: Entity, Equatable {
            var id: UUID
            var body: String
            var createdAt: Date
            var pinned: Bool
            var legacy: String
            var attachment: Data
            var tagIDs: [ModelV1.Tag.ID]
            static var entityName: String { "Note" }
            static var relationships: [Relationship<Note>] { [.toMany(\.tagIDs, ModelV1.Tag.self, deleteRule: .nullify)] }
        }

        static let types: [any Entity.Type] = [ModelV1.Tag.self, Note.self, ModelV1.Draft.self]
        static let migrations = [ModelV3.oneToTwo]

        /// What version 2 reads from a version-1 memo.
        static func expected(_ memo: ModelV1.Memo) -> Note {
            Note(
                id: memo.id, body: memo.text, createdAt: memo.createdAt, pinned: false, legacy: memo.legacy,
                attachment: memo.attachment, tagIDs: memo.tagIDs)
        }
    }

    struct Layout: Sendable, CustomTestStringConvertible {
        var name: String
        var format: SnapshotFormat
        var compression: Compression
        var testDescription: String { name }
    }

    static let layouts = [
        Layout(name: "store.json.gz", format: .json, compression: .gzip),
        Layout(name: "store.plist", format: .binaryPropertyList, compression: .none),
    ]

    /// The store `layout` in `directory`; no snapshot is written by the writer (the interval is
    /// an hour), so the only files are those the saves themselves write.
    static func configuration(_ url: URL, _ layout: Layout) -> StoreConfiguration {
        .file(url, format: layout.format, compression: layout.compression, coalescingInterval: .seconds(3600))
    }

    /// A version-1 store of `layout` given the fixture's tags, memos and drafts in two saves,
    /// left open: the crash copies of it in `copies`, and then closed.
    static func crashedVersionOneStore(_ layout: Layout, copies: [TemporaryDirectory]) async throws -> [URL] {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file(layout.name)
        let container = try GraphContainer(for: ModelV1.types, store: configuration(url, layout), version: 1)
        for tag in ModelV1.tags { container.mainContext.insert(tag) }
        try container.mainContext.save()
        for memo in ModelV1.memos { container.mainContext.insert(memo) }
        for draft in ModelV1.drafts { container.mainContext.insert(draft) }
        try container.mainContext.save()
        // What SIGKILL leaves now: every save was appended with write(2) before it returned.
        let urls = try copies.map { try JournalStoreTests.crashCopy(of: url, into: $0) }
        try await container.close()
        return urls
    }

    static func notes(_ container: GraphContainer) throws -> [ModelV2.Note] {
        try container.mainContext.fetch(FetchDescriptor<ModelV2.Note>(sortBy: [SortDescriptor(\.body)]))
    }

    // MARK: - Tests

    @Test(arguments: layouts)
    func aNewerAppMigratesWhatTheSavesBeforeTheFirstSnapshotLeft(layout: Layout) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.crashedVersionOneStore(layout, copies: [directory])[0]

        let container = try GraphContainer(
            for: ModelV2.types, store: Self.configuration(url, layout), version: 2, migrations: ModelV2.migrations)
        #expect(try Self.notes(container) == ModelV1.memos.map(ModelV2.expected).sorted { $0.body < $1.body })
        #expect(try container.mainContext.fetch(FetchDescriptor<ModelV1.Tag>(sortBy: [SortDescriptor(\.name)])) == ModelV1.tags.sorted { $0.name < $1.name })
        #expect(try container.mainContext.fetch(FetchDescriptor<ModelV1.Draft>()) == ModelV1.drafts)
        try container.checkInvariants()
        // The migration is durable: the store's file names version 2 now.
        #expect(try GenericSnapshot.readFileCopy(of: url).header.modelVersion == "2")

        // Saves keep working, and the next open needs no migration.
        var first = try #require(try Self.notes(container).first)
        first.pinned = true
        container.mainContext.insert(first)
        try container.mainContext.save()
        try await container.close()
        let reopened = try GraphContainer(
            for: ModelV2.types, store: Self.configuration(url, layout), version: 2, migrations: ModelV2.migrations)
        #expect(try Self.notes(reopened).first == first)
        #expect(try Self.notes(reopened).count == ModelV1.memos.count)
        try await reopened.close()
    }

    @Test(arguments: layouts)
    func theSameAppStillOpensWhatTheSavesBeforeTheFirstSnapshotLeft(layout: Layout) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.crashedVersionOneStore(layout, copies: [directory])[0]

        let container = try GraphContainer(for: ModelV1.types, store: Self.configuration(url, layout), version: 1)
        let memos = try container.mainContext.fetch(FetchDescriptor<ModelV1.Memo>(sortBy: [SortDescriptor(\.text)]))
        #expect(memos == ModelV1.memos.sorted { $0.text < $1.text })
        #expect(container.count(of: ModelV1.Tag.self) == ModelV1.tags.count)
        #expect(container.count(of: ModelV1.Draft.self) == ModelV1.drafts.count)
        try container.checkInvariants()
        try await container.close()
        #expect(try GenericSnapshot.read(from: url).header.modelVersion == "1")
    }

    @Test(arguments: layouts)
    func anOlderAppRefusesWhatANewerOnesSavesBeforeTheFirstSnapshotLeft(layout: Layout) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let liveURL = live.file(layout.name)
        let newer = try GraphContainer(
            for: ModelV2.types, store: Self.configuration(liveURL, layout), version: 2, migrations: ModelV2.migrations)
        for tag in ModelV1.tags { newer.mainContext.insert(tag) }
        for memo in ModelV1.memos { newer.mainContext.insert(ModelV2.expected(memo)) }
        try newer.mainContext.save()
        let url = try JournalStoreTests.crashCopy(of: liveURL, into: directory)
        try await newer.close()
        let before = try ModelVersionRefusalTests.contents(of: directory.url)

        #expect {
            _ = try GraphContainer(for: ModelV1.types, store: Self.configuration(url, layout), version: 1)
        } throws: { error in
            error as? GraphStoreError == .newerModelVersion(path: url.path, found: 2, supported: 1)
        }
        #expect(try ModelVersionRefusalTests.contents(of: directory.url) == before)
    }

    /// The snapshot the first save writes is written by a save: opening and closing a store
    /// nothing is saved to still writes nothing (but its lock file).
    @Test(arguments: layouts)
    func openingAndClosingANewStoreWritesNoFile(layout: Layout) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file(layout.name)
        let container = try GraphContainer(
            for: ModelV2.types, store: .file(url, format: layout.format, compression: layout.compression), version: 2,
            migrations: ModelV2.migrations)
        #expect(container.count(of: ModelV2.Note.self) == 0)
        try await container.flush()
        try await container.close()
        #expect(try directory.entries() == [layout.name + ".lock"])
    }
}
