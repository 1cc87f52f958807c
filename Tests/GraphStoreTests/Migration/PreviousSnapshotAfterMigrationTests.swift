import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Recovery from the previous snapshot (``SnapshotOptions/recoverFromPreviousSnapshot``) of a
/// store that an open migrated to a newer model version. The migration keeps the old file as
/// `<file>.v1` and writes the migrated file twice: over the store, then as `<file>.previous`.
/// Recovery of a damaged store then opens that previous snapshot, in the app's model version,
/// with every save journaled since. A process killed between the two writes leaves a previous
/// snapshot the older app wrote, older than `<file>.v1`: recovery neither decodes it as the
/// app's model nor opens it migrated (which would drop the saves `<file>.v1` holds); it is
/// refused, naming the files and the model versions, and every file stays as it was.
@Suite struct PreviousSnapshotAfterMigrationTests {
    typealias Layout = ModelVersionJournalOnlyTests.Layout
    typealias ModelV2 = ModelVersionJournalOnlyTests.ModelV2

    enum Damage: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case truncated, flippedByte
        var testDescription: String { rawValue }

        func apply(to url: URL) throws {
            var bytes = try Data(contentsOf: url)
            switch self {
            case .truncated:
                bytes = bytes.prefix(bytes.count / 2)
            case .flippedByte:
                // In a gzip file, the end of the deflated data (the CRC no longer matches); in a
                // property list, the trailer's top object (past the object table).
                bytes[bytes.count - 10] ^= 0x20
            }
            try bytes.write(to: url)
        }
    }

    /// How the version-2 app left the store it migrated.
    enum AfterMigration: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Opened (migrating), nothing saved, closed: no snapshot was written after the migration.
        case closedUnchanged
        /// Opened (migrating), one note saved to the journal, killed before any snapshot write.
        case killedAfterASave
        var testDescription: String { rawValue }
    }

    static let savedByVersionTwo = ModelV2.Note(
        id: ModelV1.uuid(900), body: "saved by version 2", createdAt: ModelV1.epoch, pinned: true, legacy: "",
        attachment: Data([1, 2, 3]), tagIDs: [ModelV1.uuid(2)])

    static func configuration(_ url: URL, _ layout: Layout, recovering: Bool = false) -> StoreConfiguration {
        .file(
            url, format: layout.format, compression: layout.compression, coalescingInterval: .seconds(3600),
            options: SnapshotOptions(recoverFromPreviousSnapshot: recovering))
    }

    static func openVersionTwo(_ url: URL, _ layout: Layout, recovering: Bool = false) throws -> GraphContainer {
        try GraphContainer(for: ModelV2.types, store: configuration(url, layout, recovering: recovering), version: 2, migrations: ModelV2.migrations)
    }

    /// A version-1 store written in two runs, so that `<file>.previous` holds the tags and the
    /// first two memos and the store file everything.
    static func versionOneStore(_ url: URL, _ layout: Layout) async throws {
        let first = try GraphContainer(for: ModelV1.types, store: configuration(url, layout), version: 1)
        for tag in ModelV1.tags { first.mainContext.insert(tag) }
        for memo in ModelV1.memos.prefix(2) { first.mainContext.insert(memo) }
        try first.mainContext.save()
        try await first.close()
        let second = try GraphContainer(for: ModelV1.types, store: configuration(url, layout), version: 1)
        for memo in ModelV1.memos.dropFirst(2) { second.mainContext.insert(memo) }
        for draft in ModelV1.drafts { second.mainContext.insert(draft) }
        try second.mainContext.save()
        try await second.close()
    }

    /// Copies every file of `source` but the lock into `destination`: what a process killed now
    /// leaves.
    static func copyFiles(of source: TemporaryDirectory, into destination: TemporaryDirectory) throws {
        for name in try source.entries() where !name.hasSuffix(".lock") {
            try FileManager.default.copyItem(at: source.file(name), to: destination.file(name))
        }
    }

    /// The snapshot at `url` read generically, whatever journal is beside it.
    static func snapshot(_ url: URL) throws -> GenericSnapshot {
        let limit = 1 << 30
        let document = try #require(try SnapshotFileBackend.readDocument(url, limit: limit), "no file at \(url.path)")
        return try GenericSnapshot.decode(document, compression: .none, path: url.path, limit: limit)
    }

    static func notes(_ container: GraphContainer) throws -> [ModelV2.Note] {
        try container.mainContext.fetch(FetchDescriptor<ModelV2.Note>(sortBy: [SortDescriptor(\.body)]))
    }

    static func expectEverythingVersionOneSaved(_ container: GraphContainer, plus extra: [ModelV2.Note] = []) throws {
        #expect(try notes(container) == (ModelV1.memos.map(ModelV2.expected) + extra).sorted { $0.body < $1.body })
        #expect(try container.mainContext.fetch(FetchDescriptor<ModelV1.Tag>(sortBy: [SortDescriptor(\.name)])) == ModelV1.tags.sorted { $0.name < $1.name })
        #expect(try container.mainContext.fetch(FetchDescriptor<ModelV1.Draft>()) == ModelV1.drafts)
        try container.checkInvariants()
    }

    /// A version-1 app opening the store at `url` is refused as too old, naming the file, and
    /// changes no file in `directory`.
    static func expectVersionOneRefused(_ url: URL, _ layout: Layout, in directory: TemporaryDirectory) throws {
        let before = try ModelVersionRefusalTests.contents(of: directory.url)
        #expect {
            _ = try GraphContainer(
                for: ModelV1.types, store: configuration(url, layout, recovering: true), version: 1)
        } throws: { error in
            error as? GraphStoreError == .newerModelVersion(path: url.path, found: 2, supported: 1)
        }
        #expect(try ModelVersionRefusalTests.contents(of: directory.url) == before)
    }

    // MARK: - Before the first snapshot after the migration

    /// The migration's own previous snapshot: a damaged store opens from it, in version 2, with
    /// every object the version-1 app saved and every save the version-2 app journaled since.
    @Test(arguments: ModelVersionJournalOnlyTests.layouts, AfterMigration.allCases)
    func theMigratedPreviousSnapshotIsRecoveredWithEverySave(layout: Layout, after: AfterMigration) async throws {
        for damage in Damage.allCases {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let url = try await Self.migratedStore(layout, after: after, in: directory)
            #expect(try Self.snapshot(URL(fileURLWithPath: url.path + ".previous")).header.modelVersion == "2")
            try damage.apply(to: url)
            let damaged = try Data(contentsOf: url)

            let recovered = try Self.openVersionTwo(url, layout, recovering: true)
            try Self.expectEverythingVersionOneSaved(recovered, plus: after == .killedAfterASave ? [Self.savedByVersionTwo] : [])
            try await recovered.close()
            let copies = try directory.entries().filter { $0.hasPrefix(layout.name + ".damaged-") }
            #expect(copies.count == 1, "\(damage)")
            if let copy = copies.first { #expect(try Data(contentsOf: directory.file(copy)) == damaged) }
            #expect(try GenericSnapshot.read(from: url).header.modelVersion == "2")
            try Self.expectVersionOneRefused(url, layout, in: directory)
        }
    }

    /// The previous snapshot the migration writes is a new file with the store's mode, not the
    /// older one's (which may be looser, made before the store's was narrowed).
    @Test(arguments: ModelVersionJournalOnlyTests.layouts)
    func theMigratedPreviousSnapshotTakesTheStoresMode(layout: Layout) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file(layout.name)
        try await Self.versionOneStore(url, layout)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path + ".previous")
        try await Self.openVersionTwo(url, layout).close()
        #expect(try Self.snapshot(URL(fileURLWithPath: url.path + ".previous")).header.modelVersion == "2")
        let mode = try FileManager.default.attributesOfItem(atPath: url.path + ".previous")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// In `directory`, the files of a version-1 store that a version-2 app opened (migrating
    /// it) and left as `after` says; returns the store's URL.
    ///
    /// - Parameter previousOfVersionOne: put back the previous snapshot the version-1 app left,
    ///   as a process killed between the migration's two writes leaves it.
    static func migratedStore(_ layout: Layout, after: AfterMigration, in directory: TemporaryDirectory, previousOfVersionOne: Bool = false) async throws -> URL {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let liveURL = live.file(layout.name)
        try await Self.versionOneStore(liveURL, layout)
        let olderPrevious = try Data(contentsOf: URL(fileURLWithPath: liveURL.path + ".previous"))
        let migrating = try Self.openVersionTwo(liveURL, layout)
        if after == .killedAfterASave {
            migrating.mainContext.insert(Self.savedByVersionTwo)
            try migrating.mainContext.save()
            try Self.copyFiles(of: live, into: directory)
        }
        try await migrating.close()
        if after == .closedUnchanged { try Self.copyFiles(of: live, into: directory) }
        let url = directory.file(layout.name)
        if previousOfVersionOne { try olderPrevious.write(to: URL(fileURLWithPath: url.path + ".previous")) }
        return url
    }

    /// A process killed after the migrated store was written and before its previous snapshot
    /// was: the previous snapshot is the version-1 app's, which recovery refuses.
    @Test(arguments: ModelVersionJournalOnlyTests.layouts, AfterMigration.allCases)
    func aVersionOnePreviousSnapshotIsRefusedNamingTheModelVersions(layout: Layout, after: AfterMigration) async throws {
        for damage in Damage.allCases {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let url = try await Self.migratedStore(layout, after: after, in: directory, previousOfVersionOne: true)
            let previous = url.path + ".previous"
            let kept = url.path + ".v1"
            let journal = url.path + ".journal"
            // The situation: a migrated file, a version-1 previous snapshot older than the
            // migration's copy, and (after a save) a journal in version 2 continuing the file.
            #expect(try Self.snapshot(url).header.modelVersion == "2")
            #expect(try Self.snapshot(URL(fileURLWithPath: previous)).header.modelVersion == "1")
            #expect(try Self.snapshot(URL(fileURLWithPath: previous)).entities.first { $0.name == "Memo" }?.objects.count == 2)
            #expect(try Self.snapshot(URL(fileURLWithPath: kept)).header.modelVersion == "1")
            #expect(FileManager.default.fileExists(atPath: journal) == (after == .killedAfterASave))

            try damage.apply(to: url)
            let damaged = try Data(contentsOf: url)
            let before = try ModelVersionRefusalTests.contents(of: directory.url)

            let error = try #require(throws: GraphStoreError.self, "\(damage)") {
                _ = try Self.openVersionTwo(url, layout, recovering: true)
            }
            guard case .damagedFile(let path, _, let reason) = error else {
                Issue.record("\(damage): not a damaged file: \(error)")
                continue
            }
            #expect(path == url.path, "\(damage): \(error)")
            #expect(reason.contains("previous snapshot \(previous)"), "\(damage): \(error)")
            #expect(reason.contains("model version 1, older than the app's 2"), "\(damage): \(error)")
            #expect(reason.contains(kept), "\(damage): \(error)")
            #expect(reason.contains("Nothing was changed"), "\(damage): \(error)")
            #expect(reason.contains("journal \(journal) holds saves made since the migration") == (after == .killedAfterASave), "\(damage): \(error)")
            #expect(try ModelVersionRefusalTests.contents(of: directory.url) == before, "\(damage): a file changed")
            #expect(try Data(contentsOf: url) == damaged)

            // The way out the error names: the damaged file and the journal moved away (kept),
            // the migration's copy put back; the next open migrates it again, with every object
            // the version-1 app saved, in model version 2.
            try FileManager.default.moveItem(atPath: url.path, toPath: directory.file("damaged").path)
            if after == .killedAfterASave {
                try FileManager.default.moveItem(atPath: journal, toPath: directory.file("saves-after-migration.journal").path)
            }
            try FileManager.default.copyItem(atPath: kept, toPath: url.path)
            let reopened = try Self.openVersionTwo(url, layout, recovering: true)
            try Self.expectEverythingVersionOneSaved(reopened)
            try await reopened.close()
            #expect(try GenericSnapshot.read(from: url).header.modelVersion == "2")
            try Self.expectVersionOneRefused(url, layout, in: directory)
        }
    }

    // MARK: - After the first snapshot after the migration

    /// Once the version-2 app wrote a snapshot, `<file>.previous` is the migrated file: recovery
    /// opens it in version 2 with the journal's saves, keeps the damaged file aside, and the store
    /// stays in model version 2, refused by a version-1 app.
    @Test(arguments: ModelVersionJournalOnlyTests.layouts, Damage.allCases)
    func aVersionTwoPreviousSnapshotIsRecoveredWithEverySave(layout: Layout, damage: Damage) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let liveURL = live.file(layout.name)
        try await Self.versionOneStore(liveURL, layout)
        let app = try Self.openVersionTwo(liveURL, layout)
        app.mainContext.insert(Self.savedByVersionTwo)
        try app.mainContext.save()
        try await app.flush()
        // A snapshot write the coalescing timer would make; then one more save, journaled only.
        try await SnapshotTestKit.writer(of: app).flush()
        var pinned = try #require(try Self.notes(app).first { $0.id == ModelV1.memos[0].id })
        pinned.pinned = true
        app.mainContext.insert(pinned)
        try app.mainContext.save()
        try await app.flush()
        try Self.copyFiles(of: live, into: directory)
        try await app.close()

        let url = directory.file(layout.name)
        #expect(try Self.snapshot(URL(fileURLWithPath: url.path + ".previous")).header.modelVersion == "2")
        try damage.apply(to: url)
        let damaged = try Data(contentsOf: url)

        let recovered = try Self.openVersionTwo(url, layout, recovering: true)
        var expected = ModelV1.memos.map(ModelV2.expected) + [Self.savedByVersionTwo]
        expected[0].pinned = true
        #expect(try Self.notes(recovered) == expected.sorted { $0.body < $1.body })
        #expect(recovered.count(of: ModelV1.Tag.self) == ModelV1.tags.count)
        #expect(try recovered.mainContext.fetch(FetchDescriptor<ModelV1.Draft>()) == ModelV1.drafts)
        try recovered.checkInvariants()
        try await recovered.close()
        let copies = try directory.entries().filter { $0.hasPrefix(layout.name + ".damaged-") }
        #expect(copies.count == 1)
        if let copy = copies.first { #expect(try Data(contentsOf: directory.file(copy)) == damaged) }
        #expect(try GenericSnapshot.read(from: url).header.modelVersion == "2")
        try Self.expectVersionOneRefused(url, layout, in: directory)
    }
}
