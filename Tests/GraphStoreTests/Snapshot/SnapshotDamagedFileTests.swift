import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Damaged files are refused with the right error, naming the file, and are never changed;
/// recovery opens the previous snapshot only when asked to.
@Suite struct SnapshotDamagedFileTests {
    // MARK: - Fixtures

    /// A real snapshot of tags, notes that reference every tag, and posts.
    /// The texts of the notes in the store at `url`, opened and closed.
    private static func noteTexts(_ url: URL) async throws -> [String] {
        let container = try GraphContainer(for: exampleModel, store: .file(url, format: .json, compression: .none, durability: .coalesced))
        let texts = try container.mainContext.fetch(FetchDescriptor<Note>()).map(\.text).sorted()
        try await container.close()
        return texts
    }

    private static func writeRealSnapshot(_ url: URL, format: SnapshotFormat, compression: Compression) async throws -> Data {
        let container = try GraphContainer(for: exampleModel, store: .file(url, format: format, compression: compression))
        let context = container.mainContext
        let tags = Fixtures.tagNames.map { ExampleModel.Tag(name: $0) }
        for tag in tags { context.insert(tag) }
        for number in 0..<30 {
            context.insert(Note(text: "note \(number) — ünïcödé ✓", createdAt: Fixtures.epoch.addingTimeInterval(Double(number)), tagIDs: tags.map(\.id)))
        }
        for post in Fixtures.posts(20, tags: tags.map(\.id)) { context.insert(post) }
        try context.save()
        try await container.close()
        return try Data(contentsOf: url)
    }

    /// The snapshot's uncompressed document.
    private static func document(of file: Data) throws -> Data {
        Gzip.isGzip(file) ? try Gzip.decompress(file, maxOutputBytes: 1 << 30) : file
    }

    // MARK: - Checking a refusal

    /// Writes `damaged` to `url`, opens it and expects the refusal: the right error case, the
    /// file's path in it, the file unchanged and nothing new beside it but the lock file.
    private func expectRefused(
        _ damaged: DamagedSnapshot, at url: URL, options: SnapshotOptions = SnapshotOptions(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try damaged.bytes.write(to: url)
        let directory = url.deletingLastPathComponent()
        let before = SnapshotTestKit.entries(of: directory)
        do {
            let container = try GraphContainer(for: exampleModel, store: .file(url, options: options))
            Issue.record("\(damaged) opened", sourceLocation: sourceLocation)
            try? await container.close()
        } catch let error as GraphStoreError {
            let matches = switch (damaged.refusal, error) {
            case (.damagedFile, .damagedFile), (.codingFailed, .codingFailed): true
            case let (.unsupportedFormatVersion(expected), .unsupportedFormatVersion(_, found, supported)):
                found == expected && supported == SnapshotHeaderV1.currentFormatVersion
            case let (.decompressedSizeLimitExceeded(expected), .decompressedSizeLimitExceeded(_, limit)):
                limit == expected
            default: false
            }
            #expect(matches, "\(damaged): expected \(damaged.refusal), got \(error)", sourceLocation: sourceLocation)
            #expect(SnapshotTestKit.path(of: error) == url.path, "\(damaged): \(error)", sourceLocation: sourceLocation)
            #expect(error.description.contains(url.path), sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(damaged): not a GraphStoreError: \(error)", sourceLocation: sourceLocation)
        }
        #expect(try Data(contentsOf: url) == damaged.bytes, "\(damaged): the file was changed", sourceLocation: sourceLocation)
        let lock = url.lastPathComponent + ".lock"
        #expect(SnapshotTestKit.entries(of: directory).subtracting([lock]) == before.subtracting([lock]),
                "\(damaged): files appeared", sourceLocation: sourceLocation)
    }

    private func expectAllRefused(_ cases: [DamagedSnapshot], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(!cases.isEmpty, sourceLocation: sourceLocation)
        for damaged in cases {
            try await expectRefused(damaged, at: directory.file("damaged.snapshot"), sourceLocation: sourceLocation)
        }
    }

    /// A real snapshot in each layout.
    private func realSnapshots() async throws -> [(format: SnapshotFormat, compression: Compression, file: Data)] {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var snapshots: [(SnapshotFormat, Compression, Data)] = []
        for (format, compression) in SnapshotTestKit.allLayouts {
            let url = directory.file(SnapshotTestKit.fileName(format, compression))
            snapshots.append((format, compression, try await Self.writeRealSnapshot(url, format: format, compression: compression)))
        }
        return snapshots
    }

    // MARK: - Damage

    @Test func truncatedFilesAreRefused() async throws {
        for snapshot in try await realSnapshots() {
            let cases = DamagedSnapshotFactory.truncations(of: snapshot.file)
            #expect(cases.count >= 128)
            try await expectAllRefused(cases)
        }
    }

    @Test func bitFlippedGzipFilesAreRefused() async throws {
        for snapshot in try await realSnapshots() where snapshot.compression == .gzip {
            try await expectAllRefused(DamagedSnapshotFactory.bitFlips(ofGzip: snapshot.file))
        }
    }

    /// MTIME, XFL, OS and FTEXT are informational in every gzip reader: such a flip is not damage.
    @Test func flipsInInformationalGzipHeaderFieldsStillOpen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let file = try await Self.writeRealSnapshot(url, format: .json, compression: .gzip)
        for flip in DamagedSnapshotFactory.harmlessGzipHeaderFlips(of: file) {
            try flip.bytes.write(to: url)
            let container = try GraphContainer(for: exampleModel, store: .file(url))
            #expect(container.count(of: Note.self) == 30, "\(flip.name)")
            try await container.close()
        }
    }

    @Test func filesOfAnotherKindAreRefused() async throws {
        for snapshot in try await realSnapshots() {
            try await expectAllRefused(try DamagedSnapshotFactory.wrongMagic(of: snapshot.file))
        }
    }

    @Test func newerFormatVersionIsRefused() async throws {
        for snapshot in try await realSnapshots() where snapshot.compression == .none {
            try await expectAllRefused(try DamagedSnapshotFactory.newerVersion(of: snapshot.file))
        }
    }

    @Test func emptyFilesAreRefused() async throws {
        try await expectAllRefused(try DamagedSnapshotFactory.empties())
    }

    @Test func countsThatDoNotMatchAreRefused() async throws {
        for snapshot in try await realSnapshots() where snapshot.compression == .none {
            try await expectAllRefused(try DamagedSnapshotFactory.countMismatches(of: snapshot.file))
        }
    }

    @Test func brokenGraphsAndWrongTypesAreRefused() async throws {
        for snapshot in try await realSnapshots() where snapshot.compression == .none {
            try await expectAllRefused(try DamagedSnapshotFactory.brokenGraphs(of: snapshot.file))
        }
    }

    // MARK: - Size bound

    /// JSON may come in UTF-16 or UTF-32 (little-endian; a big-endian file is refused as not
    /// JSON, by its first byte): such a snapshot, as another program may rewrite it, opens with
    /// the same objects. (The chunked open read its
    /// outline from a converted copy of the bytes after that copy was freed.)
    @Test(arguments: [String.Encoding.utf16LittleEndian, .utf32LittleEndian])
    func aSnapshotInAnotherUnicodeEncodingOpens(encoding: String.Encoding) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json")
        let file = try await Self.writeRealSnapshot(url, format: .json, compression: .none)
        let expected = try await Self.noteTexts(url)
        let reencoded = try #require(String(decoding: file, as: UTF8.self).data(using: encoding))
        try reencoded.write(to: url)
        #expect(try await Self.noteTexts(url) == expected)
    }

    @Test func gzipBombIsRefusedWithinTheBound() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }

        // The generator makes real gzip: a small one inflates to exactly its zeros.
        let small = directory.file("small.gz")
        let smallCount = (1 << 20) + 261
        try DamagedSnapshotFactory.writeGzipBomb(to: small, zeros: smallCount)
        #expect(try Gzip.decompress(Data(contentsOf: small), maxOutputBytes: 1 << 21) == Data(count: smallCount))

        // 1 GiB of zeros in about 6.5 MB, opened with a 16 MiB bound.
        let url = directory.file("bomb.json.gz")
        let size = try DamagedSnapshotFactory.writeGzipBomb(to: url, zeros: 1 << 30)
        #expect(size < 8 << 20)
        let limit = 16 << 20
        let bomb = DamagedSnapshot(name: "1 GiB of zeros", bytes: try Data(contentsOf: url), refusal: .decompressedSizeLimitExceeded(limit: limit))
        try await expectRefused(bomb, at: url, options: SnapshotOptions(maxDecompressedBytes: limit))
    }

    /// No limit at all (`Int.max`) opens a store, as any limit the file fits in does.
    @Test func theLargestLimitOpensAStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        _ = try await Self.writeRealSnapshot(url, format: .json, compression: .gzip)
        let container = try GraphContainer(for: exampleModel, store: .file(url, options: SnapshotOptions(maxDecompressedBytes: .max)))
        #expect(container.count(of: Note.self) == 30)
        try await container.close()
    }

    @Test func uncompressedFileOverTheBoundIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json")
        let file = try await Self.writeRealSnapshot(url, format: .json, compression: .none)
        let limit = file.count - 1
        let big = DamagedSnapshot(name: "a snapshot one byte over the bound", bytes: file, refusal: .decompressedSizeLimitExceeded(limit: limit))
        try await expectRefused(big, at: url, options: SnapshotOptions(maxDecompressedBytes: limit))
        // The same file within the bound opens.
        let container = try GraphContainer(for: exampleModel, store: .file(url, options: SnapshotOptions(maxDecompressedBytes: file.count)))
        #expect(container.count(of: Note.self) == 30)
        try await container.close()
    }

    // MARK: - Recovery

    /// Writes v1 and v2 (each flushed, so `<file>.previous` holds v1) and returns v2's file.
    /// Writes a snapshot holding v1, then one holding v2 (coalesced, so that each flush writes one).
    private func writeTwoVersions(_ url: URL) async throws -> Data {
        let container = try GraphContainer(for: exampleModel, store: .file(url, durability: .coalesced))
        let tags = [ExampleModel.Tag(name: "kept"), ExampleModel.Tag(name: "spare")]
        for tag in tags { container.mainContext.insert(tag) }
        container.mainContext.insert(Note(text: "v1", createdAt: Fixtures.epoch, tagIDs: tags.map(\.id)))
        try container.mainContext.save()
        try await container.flush()
        container.mainContext.insert(Note(text: "v2", createdAt: Fixtures.epoch, tagIDs: tags.map(\.id)))
        try container.mainContext.save()
        try await container.flush()
        try await container.close()
        let previous = try SnapshotTestKit.readSnapshot(URL(fileURLWithPath: url.path + ".previous"))
        #expect(SnapshotTestKit.objects(Note.self, in: previous.version).map(\.text) == ["v1"])
        return try Data(contentsOf: url)
    }

    private func noteTexts(_ container: GraphContainer) throws -> Set<String> {
        Set(try SnapshotTestKit.fetchAll(Note.self, from: container).map(\.text))
    }

    private func damagedCopies(of url: URL) -> [String] {
        SnapshotTestKit.entries(of: url.deletingLastPathComponent())
            .filter { $0.hasPrefix(url.lastPathComponent + ".damaged-") }.sorted()
    }

    /// One damage of each kind that recovery handles.
    private func recoverableDamages(of file: Data) throws -> [DamagedSnapshot] {
        let document = try Self.document(of: file)
        return [
            DamagedSnapshotFactory.truncations(of: file)[file.count / 2 > 64 ? 70 : 10],
            DamagedSnapshotFactory.bitFlips(ofGzip: file).first { $0.name.contains("deflate body") }!,
            try DamagedSnapshotFactory.countMismatches(of: document)[1],
            try DamagedSnapshotFactory.empties()[0],
            try DamagedSnapshotFactory.wrongMagic(of: file)[1],
            // A note twice: a duplicate id does not read even without the app's types.
            try DamagedSnapshotFactory.brokenGraphs(of: document)[1],
        ]
    }

    @Test func recoveryOpensThePreviousSnapshotOnlyWhenAsked() async throws {
        let probe = try TemporaryDirectory()
        defer { probe.remove() }
        let damages = try recoverableDamages(of: try await writeTwoVersions(probe.file("store.json.gz")))

        for damage in damages {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let url = directory.file("store.json.gz")
            _ = try await writeTwoVersions(url)
            try damage.bytes.write(to: url)

            // Without recovery: refused, untouched.
            try await expectRefused(damage, at: url)
            #expect(damagedCopies(of: url).isEmpty)

            // With recovery: v1's data, the damaged bytes kept aside.
            let recovering = try GraphContainer(for: exampleModel, store: .file(url, options: SnapshotOptions(recoverFromPreviousSnapshot: true)))
            #expect(try noteTexts(recovering) == ["v1"], "\(damage)")
            try recovering.checkInvariants()
            let copies = damagedCopies(of: url)
            #expect(copies.count == 1, "\(damage)")
            if let copy = copies.first {
                #expect(try Data(contentsOf: directory.file(copy)) == damage.bytes, "\(damage)")
            }

            // The next write (here the final one of close) writes a good file.
            recovering.mainContext.insert(Note(text: "v3", createdAt: Fixtures.epoch))
            try recovering.mainContext.save()
            try await recovering.close()
            let onDisk = try SnapshotTestKit.readSnapshot(url)
            #expect(Set(SnapshotTestKit.objects(Note.self, in: onDisk.version).map(\.text)) == ["v1", "v3"], "\(damage)")

            let reopened = try GraphContainer(for: exampleModel, store: .file(url))
            #expect(try noteTexts(reopened) == ["v1", "v3"], "\(damage)")
            try reopened.checkInvariants()
            try await reopened.close()
        }
    }

    /// The damaged file's copy is on the device before recovery replaces the file: when the
    /// copy cannot be synced, recovery stops, leaving the damaged file where it was and no copy.
    @Test func recoverySyncsTheDamagedCopyBeforeReplacingTheFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let good = try await writeTwoVersions(url)
        let damage = try recoverableDamages(of: good)[0]
        try damage.bytes.write(to: url)

        let failing = FaultInjectingFileSystem()
        failing.inject(.fsync(errno: EIO))
        var options = SnapshotOptions(recoverFromPreviousSnapshot: true)
        options.fileSystem = failing
        #expect(throws: GraphStoreError.self) { _ = try GraphContainer(for: exampleModel, store: .file(url, options: options)) }
        #expect(try Data(contentsOf: url) == damage.bytes)
        #expect(damagedCopies(of: url).isEmpty)

        let recording = FaultInjectingFileSystem()
        options.fileSystem = recording
        let recovering = try GraphContainer(for: exampleModel, store: .file(url, options: options))
        #expect(try noteTexts(recovering) == ["v1"])
        try await recovering.close()
        let copy = try #require(damagedCopies(of: url).first)
        let opened = recording.statistics.openedPaths.map { URL(fileURLWithPath: $0).lastPathComponent }
        let copySynced = try #require(opened.firstIndex(of: copy), "the copy was never opened to be synced: \(opened)")
        let replaced = try #require(opened.firstIndex { $0 != copy && $0.hasPrefix(".store.json.gz") }, "no temporary file: \(opened)")
        #expect(copySynced < replaced, "\(opened)")
    }

    /// A store that grew past the decompression limit is not damaged: with recovery on it is
    /// still refused, naming the limit, and never rolled back to its previous snapshot.
    @Test func recoveryDoesNotRollBackAStoreOverTheLimit() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let file = try await writeTwoVersions(url)
        let limit = try Gzip.decompress(file, maxOutputBytes: 1 << 30).count - 1
        var options = SnapshotOptions(recoverFromPreviousSnapshot: true)
        options.maxDecompressedBytes = limit
        let big = DamagedSnapshot(name: "a store over the limit", bytes: file, refusal: .decompressedSizeLimitExceeded(limit: limit))
        try await expectRefused(big, at: url, options: options)
        #expect(damagedCopies(of: url).isEmpty)
    }

    /// When the good previous snapshot cannot be put back in place of the damaged one (no
    /// space for it, say), the store is not opened: its first write would otherwise keep the
    /// damaged file as the previous snapshot, in place of the good one.
    @Test func recoveryThatCannotPutThePreviousSnapshotBackRefuses() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let file = try await writeTwoVersions(url)
        let damaged = DamagedSnapshotFactory.truncations(of: file)[file.count / 2 > 64 ? 70 : 10]
        try damaged.bytes.write(to: url)
        let previous = try Data(contentsOf: URL(fileURLWithPath: url.path + ".previous"))
        let fileSystem = FaultInjectingFileSystem()
        fileSystem.inject(.open(errno: ENOSPC))
        var options = SnapshotOptions(recoverFromPreviousSnapshot: true)
        options.fileSystem = fileSystem

        #expect {
            _ = try GraphContainer(for: exampleModel, store: .file(url, options: options))
        } throws: { error in
            // The damage, not the failed write: the open went as far as the put-back.
            guard case .damagedFile(let path, _, _)? = error as? GraphStoreError else { return false }
            return path == url.path && fileSystem.statistics.injectedFailures > 0
        }
        #expect(try Data(contentsOf: url) == damaged.bytes)
        #expect(try Data(contentsOf: URL(fileURLWithPath: url.path + ".previous")) == previous)
    }

    /// A file that reads soundly without the app's types whose objects break a unique
    /// constraint or hold a reference to a missing object is not taken for damaged: another
    /// release of the app, without that constraint or relationship, may have written it, and
    /// rolling back would drop its saves. Refused with recovery on, the file left as it is.
    @Test func recoveryRefusesAGraphThatReadsSoundly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let file = try await writeTwoVersions(url)
        let graphs = try DamagedSnapshotFactory.brokenGraphs(of: try Self.document(of: file))
            .filter { $0.name.contains("tag") }
        #expect(graphs.count == 4)
        for damaged in graphs {
            try await expectRefused(damaged, at: url, options: SnapshotOptions(recoverFromPreviousSnapshot: true))
            #expect(try Data(contentsOf: url) == damaged.bytes, "\(damaged)")
            #expect(damagedCopies(of: url).isEmpty, "\(damaged)")
        }
    }

    @Test func recoveryWithoutAPreviousSnapshotStillRefuses() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let file = try await Self.writeRealSnapshot(url, format: .json, compression: .gzip)
        #expect(!FileManager.default.fileExists(atPath: url.path + ".previous"))
        let damaged = DamagedSnapshotFactory.truncations(of: file)[100]
        try await expectRefused(damaged, at: url, options: SnapshotOptions(recoverFromPreviousSnapshot: true))
        #expect(damagedCopies(of: url).isEmpty)
        // The error says that recovery was tried, and why it could not be.
        let error = try #require(throws: GraphStoreError.self) {
            _ = try GraphContainer(for: exampleModel, store: .file(url, options: SnapshotOptions(recoverFromPreviousSnapshot: true)))
        }
        #expect(error.description.contains("It was not recovered from the previous snapshot \(url.path).previous: there is none"), "\(error)")
    }

    /// A new store's first snapshot (empty, written for the journal's first record) is never
    /// kept as the previous one, also when the process ended before the first coalesced write
    /// replaced it: the next run's first write used to keep it, and recovery from a damaged
    /// file then opened an empty store.
    @Test func theEmptyFirstSnapshotIsNotKeptAsPreviousAfterAKill() async throws {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try GraphContainer(for: exampleModel, store: .file(live.file("store.json.gz"), coalescingInterval: .seconds(3600)))
        first.mainContext.insert(Note(text: "saved", createdAt: Fixtures.epoch))
        try first.mainContext.save()
        // What a kill leaves: the empty first snapshot and the journal holding the save.
        let url = try JournalStoreTests.crashCopy(of: live.file("store.json.gz"), into: directory)
        #expect(FileManager.default.fileExists(atPath: url.path + ".journal"))
        try await first.close()

        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(try JournalStoreTests.noteTexts(reopened) == ["saved"])
        try await reopened.close()
        #expect(!FileManager.default.fileExists(atPath: url.path + ".previous"))

        let damaged = DamagedSnapshotFactory.truncations(of: try Data(contentsOf: url))[20]
        try await expectRefused(damaged, at: url, options: SnapshotOptions(recoverFromPreviousSnapshot: true))
    }

    /// A store whose file was removed ("reset" by hand) leaves its previous snapshot; the new
    /// store at that name sets it aside at its first write (kept, renamed) instead of taking it
    /// for its own, so recovery from a damaged file never brings the removed store back.
    @Test func aRemovedStoresPreviousSnapshotIsSetAsideNotRecovered() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let previous = url.path + ".previous"
        // Under `.coalesced` each flush writes a snapshot: the second keeps the first as previous.
        let old = try GraphContainer(for: exampleModel, store: .file(url, durability: .coalesced))
        for text in ["old one", "old two"] {
            old.mainContext.insert(Note(text: text, createdAt: Fixtures.epoch))
            try old.mainContext.save()
            try await old.flush()
        }
        try await old.close()
        #expect(FileManager.default.fileExists(atPath: previous))
        let oldPrevious = try Data(contentsOf: URL(fileURLWithPath: previous))
        try FileManager.default.removeItem(at: url)

        let new = try GraphContainer(for: exampleModel, store: .file(url))
        new.mainContext.insert(Note(text: "new", createdAt: Fixtures.epoch))
        try new.mainContext.save()
        try await new.close()
        let orphans = try directory.entries().filter { $0.hasPrefix("store.json.gz.previous.orphaned-") }
        #expect(orphans.count == 1)
        if let orphan = orphans.first { #expect(try Data(contentsOf: directory.file(orphan)) == oldPrevious) }
        #expect(!FileManager.default.fileExists(atPath: previous))

        let damaged = DamagedSnapshotFactory.truncations(of: try Data(contentsOf: url))[20]
        try await expectRefused(damaged, at: url, options: SnapshotOptions(recoverFromPreviousSnapshot: true))
    }

    /// A previous snapshot damaged too: refused, saying so, and no file changes.
    @Test func recoveryFromADamagedPreviousSnapshotRefusesSayingSo() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let file = try await writeTwoVersions(url)
        let previous = URL(fileURLWithPath: url.path + ".previous")
        let previousBytes = try Data(contentsOf: previous)
        try previousBytes.prefix(previousBytes.count / 2).write(to: previous)
        let damaged = DamagedSnapshotFactory.truncations(of: file)[100]
        try await expectRefused(damaged, at: url, options: SnapshotOptions(recoverFromPreviousSnapshot: true))
        let error = try #require(throws: GraphStoreError.self) {
            _ = try GraphContainer(for: exampleModel, store: .file(url, options: SnapshotOptions(recoverFromPreviousSnapshot: true)))
        }
        #expect(error.description.contains("It was not recovered from the previous snapshot \(previous.path): that snapshot cannot be read either"), "\(error)")
        #expect(try Data(contentsOf: previous) == previousBytes.prefix(previousBytes.count / 2))
        #expect(damagedCopies(of: url).isEmpty)
    }

    /// A previous snapshot whose model-version label an open takes for the app's (a number an
    /// outside tool padded; any label, for a container that declares no version) is recovered
    /// as that open reads it; one a container that declares its version does not know is
    /// refused, saying which label it found. Recovery used to refuse both with the bare damage.
    @Test(arguments: [(" 1", false), ("beta", false), ("beta", true)])
    func recoveryReadsAPreviousLabelAsAnOpenDoes(label: String, declared: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let file = try await writeTwoVersions(url)
        let previous = URL(fileURLWithPath: url.path + ".previous")
        let text = String(decoding: try Self.document(of: try Data(contentsOf: previous)), as: UTF8.self)
        let relabelled = text.replacingOccurrences(of: "\"modelVersion\":\"1\"", with: "\"modelVersion\":\"\(label)\"")
        try #require(relabelled != text)
        try Gzip.compress(Data(relabelled.utf8)).write(to: previous)
        try DamagedSnapshotFactory.truncations(of: file)[100].bytes.write(to: url)
        let store = StoreConfiguration.file(url, options: SnapshotOptions(recoverFromPreviousSnapshot: true))
        func open() throws -> GraphContainer {
            // Version 2, declared by a migration that changes nothing.
            declared
                ? try GraphContainer(for: exampleModel, store: store, version: 2, migrations: [SchemaMigration(from: 1, to: 2, [])])
                : try GraphContainer(for: exampleModel, store: store)
        }
        if declared {
            let error = try #require(throws: GraphStoreError.self) { _ = try open() }
            #expect(error.description.contains("It was not recovered from the previous snapshot \(previous.path): that snapshot says model version \"beta\", not the app's \"2\""), "\(error)")
            #expect(damagedCopies(of: url).isEmpty)
            return
        }
        let container = try open()
        #expect(try noteTexts(container) == ["v1"])
        try await container.close()
        #expect(damagedCopies(of: url).count == 1)
    }

    /// A newer file is not damaged: recovery must not set it aside and roll back to the
    /// previous snapshot (the newer app's data would be overwritten by the next write).
    @Test func recoveryNeverReplacesANewerFormatVersion() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let file = try await writeTwoVersions(url)
        let newer = try DamagedSnapshotFactory.newerVersion(of: try Self.document(of: file))[1]
        try await expectRefused(newer, at: url, options: SnapshotOptions(recoverFromPreviousSnapshot: true))
        #expect(damagedCopies(of: url).isEmpty)
    }

    /// Two recoveries in the same second keep both damaged files.
    @Test func everyRecoveryKeepsItsOwnDamagedCopy() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let file = try await writeTwoVersions(url)
        let damages = [DamagedSnapshotFactory.truncations(of: file)[90], DamagedSnapshotFactory.truncations(of: file)[91]]
        for damage in damages {
            try damage.bytes.write(to: url)
            let container = try GraphContainer(for: exampleModel, store: .file(url, options: SnapshotOptions(recoverFromPreviousSnapshot: true)))
            #expect(try noteTexts(container) == ["v1"])
            try await container.close()
        }
        let copies = Set(try damagedCopies(of: url).map { try Data(contentsOf: directory.file($0)) })
        #expect(copies == Set(damages.map(\.bytes)))
    }
}
