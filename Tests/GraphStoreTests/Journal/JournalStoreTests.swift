import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// The journal of a snapshot-file store: what a crash leaves is replayed, a container released
/// without `close()` loses nothing, `close()` folds the journal into the snapshot, and damaged
/// or foreign journals are refused without touching a byte.
@Suite struct JournalStoreTests {
    // MARK: - Helpers

    static func journalURL(_ url: URL) -> URL { URL(fileURLWithPath: url.path + ".journal") }

    /// Copies the store's files as they are now (snapshot, if any, and journal) to `directory`:
    /// what a process killed at this instant leaves. Returns the copied store's URL.
    static func crashCopy(of url: URL, into directory: TemporaryDirectory) throws -> URL {
        let copy = directory.file(url.lastPathComponent)
        for suffix in ["", ".journal"] {
            let source = URL(fileURLWithPath: url.path + suffix)
            guard FileManager.default.fileExists(atPath: source.path) else { continue }
            try FileManager.default.copyItem(at: source, to: URL(fileURLWithPath: copy.path + suffix))
        }
        return copy
    }

    static func noteTexts(_ container: GraphContainer) throws -> [String] {
        try container.mainContext.fetch(FetchDescriptor<Note>()).map(\.text).sorted()
    }

    /// The files of the store at `url`, for byte-for-byte comparison.
    static func files(_ url: URL) -> [Data?] {
        ["", ".journal", ".previous"].map { try? Data(contentsOf: URL(fileURLWithPath: url.path + $0)) }
    }

    /// A journaled store with `count` notes saved one save each, left open (no snapshot but the
    /// one the first save of a new store writes before its record: the interval is an hour),
    /// and its crash copy.
    static func crashedStore(
        notes count: Int, in directory: TemporaryDirectory, snapshotFirst: Bool = false
    ) async throws -> (url: URL, texts: [String]) {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("store.json.gz")
        var texts: [String] = []
        if snapshotFirst {
            let first = try GraphContainer(for: exampleModel, store: .file(url))
            first.mainContext.insert(Note(text: "in the snapshot", createdAt: Fixtures.epoch))
            try first.mainContext.save()
            try await first.close()
            texts.append("in the snapshot")
        }
        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        for number in 0..<count {
            let tag = ExampleModel.Tag(name: "tag \(number)")
            container.mainContext.insert(tag)
            container.mainContext.insert(Note(text: "note \(number)", createdAt: Fixtures.epoch, tagIDs: [tag.id]))
            try container.mainContext.save()
            texts.append("note \(number)")
        }
        let copy = try crashCopy(of: url, into: directory)
        try await container.close()
        return (copy, texts.sorted())
    }

    // MARK: - What a crash leaves

    @Test func aCrashedStoreReopensWithEverySave() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for snapshotFirst in [false, true] {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let (url, texts) = try await Self.crashedStore(notes: 40, in: scratch, snapshotFirst: snapshotFirst)
            // The writer wrote no snapshot yet: the file holds what the store held before its
            // first record.
            #expect(try SnapshotTestKit.readSnapshot(url).header.storeVersion == (snapshotFirst ? 1 : 0))
            let reopened = try GraphContainer(for: exampleModel, store: .file(url))
            #expect(try Self.noteTexts(reopened) == texts)
            #expect(reopened.count(of: ExampleModel.Tag.self) == 40)
            #expect(reopened.version == UInt64(40 + (snapshotFirst ? 1 : 0)))
            try reopened.checkInvariants()
            // Saving goes on after the replayed versions; close folds everything into the snapshot.
            reopened.mainContext.insert(Note(text: "after the crash", createdAt: Fixtures.epoch))
            try reopened.mainContext.save()
            try await reopened.close()
            #expect(!FileManager.default.fileExists(atPath: Self.journalURL(url).path))
            let snapshot = try SnapshotTestKit.readSnapshot(url)
            #expect(SnapshotTestKit.objects(Note.self, in: snapshot.version).map(\.text).sorted() == (texts + ["after the crash"]).sorted())
        }
    }

    /// Updates, deletes, cascades and a whole-table delete replay to the same graph.
    @Test func replayGivesTheCommittedGraph() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        let context = container.mainContext
        let tags = Fixtures.tagNames.map { ExampleModel.Tag(name: $0) }
        for tag in tags { context.insert(tag) }
        var notes = (0..<30).map { Note(text: "note \($0)", createdAt: Fixtures.epoch, tagIDs: [tags[$0 % tags.count].id]) }
        for note in notes { context.insert(note) }
        for post in Fixtures.posts(20, tags: tags.map(\.id)) { context.insert(post) }
        try context.save()
        notes[3].text = "changed"
        context.insert(notes[3])
        context.delete(notes[4])
        try context.save()
        context.delete(tags[0])  // nullifies the notes' references
        try context.save()
        try context.delete(model: Post.self)
        try context.save()
        let expected = try TestStore.committedGraph(container, exampleModel)
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let copy = try Self.crashCopy(of: url, into: scratch)
        let version = container.version
        try await container.close()

        let reopened = try GraphContainer(for: exampleModel, store: .file(copy))
        #expect(try TestStore.committedGraph(reopened, exampleModel) == expected)
        #expect(reopened.version == version)
        #expect(reopened.count(of: Post.self) == 0)
        try reopened.checkInvariants()
        try await reopened.close()
    }

    /// A commit that writes most of a table makes a record of the whole table (no lookup per
    /// id): replaying it still deletes what the commit deleted, keeps what it left alone and
    /// gives the committed graph, for an update of most objects and for a first import.
    @Test func replayOfCommitsWritingMostOfATable() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        let context = container.mainContext
        let count = JournalRecord.wholeTableThreshold + 500
        let tags = (0..<count).map { ExampleModel.Tag(name: "tag \($0)") }
        var notes = (0..<count).map { Note(text: "note \($0)", createdAt: Fixtures.epoch, tagIDs: [tags[$0].id]) }
        context.insert(contentsOf: tags)
        context.insert(contentsOf: notes)
        try context.save()
        // Most notes change, some go, some come; some tags go too (nullifying references).
        for index in 0..<(count - 300) {
            notes[index].text = "changed \(index)"
            context.insert(notes[index])
        }
        for index in (count - 300)..<(count - 200) { context.delete(notes[index]) }
        for index in 0..<50 { context.delete(tags[index]) }
        context.insert(contentsOf: (0..<60).map { Note(text: "new \($0)", createdAt: Fixtures.epoch) })
        try context.save()
        let expected = try TestStore.committedGraph(container, exampleModel)
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let copy = try Self.crashCopy(of: url, into: scratch)
        try await container.close()

        let reopened = try GraphContainer(for: exampleModel, store: .file(copy))
        #expect(try TestStore.committedGraph(reopened, exampleModel) == expected)
        #expect(reopened.count(of: Note.self) == count - 100 + 60)
        #expect(reopened.count(of: ExampleModel.Tag.self) == count - 50)
        try reopened.checkInvariants()
        try await reopened.close()
    }

    /// Replay moves each changed object in its entity's sorted indexes; afterwards they must
    /// hold exactly the replayed objects, for a few changes and for many.
    @Test(arguments: [40, 1_500])
    func replayKeepsSortedIndexesInStep(posts count: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        var posts = Fixtures.posts(count, tags: [])
        for post in posts {
            container.mainContext.insert(post)
            try container.mainContext.save()
        }
        for index in stride(from: 0, to: count, by: 3) {
            posts[index].date = Fixtures.epoch.addingTimeInterval(Double(-index))
            container.mainContext.insert(posts[index])
            try container.mainContext.save()
        }
        let expected = try container.mainContext.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20)).map(\.id)
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let copy = try Self.crashCopy(of: url, into: scratch)
        try await container.close()

        let reopened = try GraphContainer(for: exampleModel, store: .file(copy))
        try reopened.checkInvariants()  // Every sorted index equals a fresh build of its table.
        #expect(try reopened.mainContext.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20)).map(\.id) == expected)
        try await reopened.close()
    }

    // MARK: - Releasing, closing

    /// A container released without `close()`: a new one on the same file opens at once (the
    /// lock is released) and holds everything; afterwards the snapshot alone holds it.
    @Test func aReleasedContainerLosesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        do {
            let container = try GraphContainer(for: exampleModel, store: .file(url, format: .json, compression: .gzip))
            container.mainContext.insert(Note(text: "released", createdAt: Fixtures.epoch))
            try container.mainContext.save()
        }
        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(try Self.noteTexts(reopened) == ["released"])
        try await reopened.close()
        #expect(!FileManager.default.fileExists(atPath: Self.journalURL(url).path))
        let snapshot = try SnapshotTestKit.readSnapshot(url)
        #expect(SnapshotTestKit.objects(Note.self, in: snapshot.version).map(\.text) == ["released"])
    }

    /// Containers released and opened again from tasks on the cooperative pool: the open blocks
    /// its pool thread until the background close is done, which must not need the pool.
    @Test func releasedContainersReopenFromTheCooperativePool() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let workers = ProcessInfo.processInfo.activeProcessorCount + 2
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    let url = directory.file("store-\(worker).json.gz")
                    for round in 0..<4 {
                        do {
                            let container = try GraphContainer(for: exampleModel, store: .file(url))
                            container.mainContext.insert(Note(text: "round \(round)", createdAt: Fixtures.epoch))
                            try container.mainContext.save()
                        }
                        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
                        #expect(reopened.count(of: Note.self) == round + 1, "worker \(worker), round \(round)")
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// After `close()` the snapshot alone holds every object, for an outside reader too.
    @Test(arguments: SnapshotFormat.allCases)
    func closeLeavesOneCompleteSnapshot(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store")
        let container = try GraphContainer(for: exampleModel, store: .file(url, format: format, coalescingInterval: .seconds(3600)))
        for number in 0..<25 {
            container.mainContext.insert(Note(text: "note \(number)", createdAt: Fixtures.epoch))
            try container.mainContext.save()
        }
        #expect(FileManager.default.fileExists(atPath: Self.journalURL(url).path))
        try await container.close()
        #expect(SnapshotTestKit.entries(of: directory.url).isSubset(of: ["store", "store.previous", "store.lock"]), "\(SnapshotTestKit.entries(of: directory.url))")
        #expect(!FileManager.default.fileExists(atPath: Self.journalURL(url).path))
        let output = try await SnapshotTestKit.runPython(#"""
            import gzip, json, plistlib, sys
            raw = gzip.decompress(open(sys.argv[1], "rb").read())
            doc = plistlib.loads(raw) if raw[:8] == b"bplist00" else json.loads(raw)
            print(json.dumps({"version": doc["header"]["storeVersion"], "notes": sorted(n["text"] for n in doc["entities"]["Note"])}))
            """#, [url.path])
        let read = try JSONSerialization.jsonObject(with: output) as? [String: Any]
        #expect(read?["version"] as? Int == 25)
        #expect(read?["notes"] as? [String] == (0..<25).map { "note \($0)" }.sorted())
    }

    /// `flush()` of a journaled store makes the journal durable; it does not rewrite the snapshot
    /// (the empty one the first save of a new store wrote before its record).
    @Test func flushSyncsTheJournalNotTheSnapshot() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        container.mainContext.insert(Note(text: "durable", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        try await container.flush()
        #expect(container.storeStatus.durableVersion == container.version)
        #expect(container.storeStatus.writesCompleted == 0)
        #expect(try SnapshotTestKit.readSnapshot(url).header.storeVersion == 0)
        try await container.close()
        #expect(try SnapshotTestKit.readSnapshot(url).header.storeVersion == 1)
    }

    /// Snapshots drop the records they cover: the journal does not grow without bound.
    @Test func snapshotsKeepTheJournalShort() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        var options = SnapshotOptions()
        let clock = ManualWriterClock()
        options.clock = clock
        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(1), options: options))
        let writer = SnapshotTestKit.writer(of: container)
        var sizes: [Int] = []
        for round in 0..<6 {
            for number in 0..<50 {
                container.mainContext.insert(Note(text: "round \(round) note \(number)", createdAt: Fixtures.epoch))
                try container.mainContext.save()
            }
            clock.advance(by: .seconds(1))
            try await SnapshotTestKit.waitUntilIdle(writer)
            sizes.append(try SnapshotTestKit.fileSize(Self.journalURL(url)))
        }
        // After each snapshot the journal holds the records since the previous snapshot: about
        // one round's worth, never all six.
        let journal = try JournalReplay.read(Self.journalURL(url).path)
        #expect(journal?.scan.records.count == 50)
        #expect(sizes.max()! < sizes.last! * 2, "\(sizes)")
        #expect(container.storeStatus.writesCompleted == 6)
        try await container.close()
        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(reopened.count(of: Note.self) == 300)
        try await reopened.close()
    }

    // MARK: - Durability levels

    @Test func synchronousSavesFromManyThreadsAreAllDurable() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(url, durability: .synchronous))
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    let context = container.newBackgroundContext()
                    for number in 0..<25 {
                        context.insert(Note(text: "worker \(worker) note \(number)", createdAt: Fixtures.epoch))
                        try? context.save()
                    }
                }
            }
        }
        #expect(container.count(of: Note.self) == 200)
        #expect(container.storeStatus.durableVersion == container.version)
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let copy = try Self.crashCopy(of: url, into: scratch)
        try await container.close()
        let reopened = try GraphContainer(for: exampleModel, store: .file(copy))
        #expect(reopened.count(of: Note.self) == 200)
        try reopened.checkInvariants()
        try await reopened.close()
    }

    /// No journal file exists until the first save: opening a store, reading it and closing
    /// it creates none and changes no file. The first save creates it, and a process killed
    /// right after that save loses nothing.
    @Test(arguments: [Durability.journaled, .synchronous])
    func theJournalIsCreatedByTheFirstSave(durability: Durability) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("store.json.gz")
        let journal = Self.journalURL(url).path
        let seeding = try GraphContainer(for: exampleModel, store: .file(url, durability: durability))
        #expect(!FileManager.default.fileExists(atPath: journal))
        seeding.mainContext.insert(Note(text: "kept", createdAt: Fixtures.epoch))
        try seeding.mainContext.save()
        #expect(FileManager.default.fileExists(atPath: journal))
        try await seeding.close()
        let before = Self.files(url)

        let reader = try GraphContainer(for: exampleModel, store: .file(url, durability: durability))
        #expect(try Self.noteTexts(reader) == ["kept"])
        #expect(!FileManager.default.fileExists(atPath: journal))
        try await reader.flush()
        try await reader.close()
        #expect(Self.files(url) == before)

        let writer = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600), durability: durability))
        writer.mainContext.insert(Note(text: "after", createdAt: Fixtures.epoch))
        try writer.mainContext.save()
        let copy = try Self.crashCopy(of: url, into: directory)
        try await writer.close()
        let reopened = try GraphContainer(for: exampleModel, store: .file(copy))
        #expect(try Self.noteTexts(reopened) == ["after", "kept"])
        try await reopened.close()
    }

    @Test func coalescedSavesDoNotTouchTheDisk() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600), durability: .coalesced))
        container.mainContext.insert(Note(text: "in memory", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        #expect(SnapshotTestKit.entries(of: directory.url) == ["store.json.gz.lock"])
        try await container.close()
        #expect(try SnapshotTestKit.readSnapshot(url).header.storeVersion == 1)
    }

    /// A store opened `.coalesced` over a journal a crash left replays it, then drops it.
    @Test func aCoalescedStoreReplaysAndDropsALeftJournal() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, texts) = try await Self.crashedStore(notes: 5, in: directory)
        let container = try GraphContainer(for: exampleModel, store: .file(url, durability: .coalesced))
        #expect(try Self.noteTexts(container) == texts)
        try await container.close()
        #expect(!FileManager.default.fileExists(atPath: Self.journalURL(url).path))
        let reopened = try GraphContainer(for: exampleModel, store: .file(url, durability: .coalesced))
        #expect(try Self.noteTexts(reopened) == texts)
        try await reopened.close()
    }

    // MARK: - Objects that do not encode

    /// An entity whose `encode(to:)` throws for some values.
    struct Fragile: Entity {
        var id: Int
        var isBroken: Bool

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            guard !isBroken else {
                throw EncodingError.invalidValue(isBroken, .init(codingPath: container.codingPath + [CodingKeys.isBroken], debugDescription: "broken on purpose"))
            }
            try container.encode(isBroken, forKey: .isBroken)
        }
    }

    /// A save holding an object that cannot be journaled throws naming it and commits nothing.
    @Test func aSaveThatDoesNotEncodeCommitsNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let container = try GraphContainer(for: [Fragile.self], store: .file(url))
        container.mainContext.insert(Fragile(id: 1, isBroken: false))
        try container.mainContext.save()
        for count in [2, 5_000] {
            for id in 2...count { container.mainContext.insert(Fragile(id: id, isBroken: id == count)) }
            #expect {
                try container.mainContext.save()
            } throws: { error in
                guard case .codingFailed(let path, let entity, let id, let reason)? = error as? GraphStoreError else { return false }
                return path == Self.journalURL(url).path && entity == "Fragile" && id == "\(count)" && reason.contains("broken on purpose")
            }
            #expect(container.version == 1 && container.count(of: Fragile.self) == 1)
            #expect(container.mainContext.hasChanges)
            container.mainContext.rollback()
        }
        try await container.close()
    }
}
