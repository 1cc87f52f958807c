import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// Stores written by version 1 of a model (committed fixtures) open with version 3 through
/// a chain of migrations, in every snapshot layout, with the journal a crash left.
@Suite struct ModelVersionFixtureTests {
    static func open(_ url: URL, format: SnapshotFormat = .json, compression: Compression = .gzip) throws -> GraphContainer {
        try GraphContainer(
            for: ModelV3.types, store: .file(url, format: format, compression: compression), version: 3,
            migrations: ModelV3.migrations)
    }

    static func notes(_ container: GraphContainer) throws -> [ModelV3.Note] {
        try container.mainContext.fetch(FetchDescriptor<ModelV3.Note>(sortBy: [SortDescriptor(\.body)]))
    }

    @Test(arguments: [("v1.json.gz", SnapshotFormat.json, Compression.gzip), ("v1.plist", .binaryPropertyList, .none)])
    func aVersionOneStoreOpensThroughTwoMigrations(name: String, format: SnapshotFormat, compression: Compression) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try ModelVersionFixtures.copy([name], to: directory.url)
        let url = directory.file(name)
        let original = try Data(contentsOf: url)
        #expect(try GenericSnapshot.read(from: url).header.modelVersion == "1")

        let container = try Self.open(url, format: format, compression: compression)
        let expected = ModelV1.memos.map(ModelV3.expected).sorted { $0.body < $1.body }
        #expect(try Self.notes(container) == expected)
        #expect(try container.mainContext.fetch(FetchDescriptor<ModelV3.Tag>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["linux", "swift"])
        try container.checkInvariants()

        // Durable before open returned; the old file kept beside it, byte for byte. (Read from
        // a copy: the open store itself is refused to readers while its container holds it.)
        #expect(throws: GraphStoreError.storeLocked(path: url.path)) { try GenericSnapshot.read(from: url) }
        let migrated = try GenericSnapshot.readFileCopy(of: url)
        #expect(migrated.header.modelVersion == "3")
        #expect(migrated.format == format)
        #expect(migrated.entities.map(\.name) == ["Note", "Tag"])
        #expect(try Data(contentsOf: directory.file(name + ".v1")) == original)

        // Saves keep working and the next open needs no migration.
        var first = expected[0]
        first.pinned = true
        container.mainContext.insert(first)
        try container.mainContext.save()
        try await container.close()
        let reopened = try Self.open(url, format: format, compression: compression)
        #expect(try Self.notes(reopened).first?.pinned == true)
        try await reopened.close()
        #expect(!FileManager.default.fileExists(atPath: directory.file(name + ".v1-2").path))
    }

    @Test func theJournalACrashLeftIsMigratedWithItsSnapshot() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let names = ["v1-crashed.json.gz", "v1-crashed.json.gz.journal"]
        try ModelVersionFixtures.copy(names, to: directory.url)
        let url = directory.file(names[0])
        let journal = try Data(contentsOf: directory.file(names[1]))
        let container = try Self.open(url)
        let notes = try Self.notes(container)
        let ids = Set(notes.map(\.id))
        #expect(ids.contains(ModelV1.uuid(200)))
        #expect(!ids.contains(ModelV1.uuid(100)))
        #expect(notes.count == 4)
        let changed = try #require(notes.first { $0.id == ModelV1.uuid(101) })
        #expect(changed.body == "Changed in the journal")
        #expect(changed.title == "Changed in the journal")
        #expect(notes.first { $0.id == ModelV1.uuid(200) }?.attachment == Data([7]))
        // The old journal is kept with the old snapshot; the store's own one is new.
        #expect(try Data(contentsOf: directory.file(names[0] + ".v1.journal")) == journal)
        #expect(try GenericSnapshot.readFileCopy(of: url).header.storeVersion == 3)
        try await container.close()
        #expect(!FileManager.default.fileExists(atPath: directory.file(names[1]).path))
        let reopened = try Self.open(url)
        #expect(try Self.notes(reopened) == notes)
        try await reopened.close()
    }

    /// A migration killed after it kept the old store but before it wrote the migrated one
    /// leaves `<file>.v1` beside the untouched store; the next migration keeps that copy instead
    /// of writing `<file>.v1-2` with the same bytes. A `.v1` that differs is still never reused.
    @Test func aCopyAKilledMigrationKeptIsNotKeptAgain() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let names = ["v1-crashed.json.gz", "v1-crashed.json.gz.journal"]
        try ModelVersionFixtures.copy(names, to: directory.url)
        let url = directory.file(names[0])
        let original = try Data(contentsOf: url), journal = try Data(contentsOf: directory.file(names[1]))
        // What the killed attempt left: the copy and its journal, each the store's own bytes.
        try original.write(to: directory.file(names[0] + ".v1"))
        try journal.write(to: directory.file(names[0] + ".v1.journal"))
        let container = try Self.open(url)
        #expect(try Self.notes(container).count == 4)
        try await container.close()
        #expect(try Data(contentsOf: directory.file(names[0] + ".v1")) == original)
        #expect(try Data(contentsOf: directory.file(names[0] + ".v1.journal")) == journal)
        #expect(!FileManager.default.fileExists(atPath: directory.file(names[0] + ".v1-2").path))

        // A copy of other bytes (another store's, or the same store before later saves), or
        // without the journal the store has, is not the store: kept, and the store goes to `-2`.
        for variant in ["other bytes", "no journal"] {
            let folder = directory.file(variant)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try ModelVersionFixtures.copy(names, to: folder)
            let store = folder.appendingPathComponent(names[0])
            let copy = variant == "other bytes" ? original.dropLast() : original
            try copy.write(to: folder.appendingPathComponent(names[0] + ".v1"))
            if variant == "other bytes" { try journal.write(to: folder.appendingPathComponent(names[0] + ".v1.journal")) }
            let container = try Self.open(store)
            try await container.close()
            #expect(try Data(contentsOf: folder.appendingPathComponent(names[0] + ".v1")) == copy, "\(variant)")
            #expect(try Data(contentsOf: folder.appendingPathComponent(names[0] + ".v1-2")) == original, "\(variant)")
            #expect(try Data(contentsOf: folder.appendingPathComponent(names[0] + ".v1-2.journal")) == journal, "\(variant)")
        }
    }

    @Test func theMigratedStoreKeepsItsLineageSoItsJournalStillReplays() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try ModelVersionFixtures.copy(["v1.json.gz"], to: directory.url)
        let url = directory.file("v1.json.gz")
        let lineage = try GenericSnapshot.read(from: url).header.lineage
        let container = try Self.open(url)
        #expect(try GenericSnapshot.readFileCopy(of: url).header.lineage == lineage)
        try await container.close()
    }

    @Test func aFileWrittenBeforeModelVersionsReadsAsVersionOne() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try ModelVersionFixtures.copy(["v1.json.gz"], to: directory.url)
        let url = directory.file("v1.json.gz")
        let container = try GraphContainer(for: ModelV1.types, store: .file(url))
        #expect(container.count(of: ModelV1.Memo.self) == 4)
        try await container.close()
        #expect(!FileManager.default.fileExists(atPath: directory.file("v1.json.gz.v1").path))
        #expect(try GenericSnapshot.read(from: url).header.modelVersion == "1")
    }

    @Test func theContainersVersionIsWrittenIntoHeadersAndTheOptionStillWorksWithoutIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let declared = directory.file("declared.json.gz")
        var options = SnapshotOptions()
        options.modelVersion = "7"
        let container = try GraphContainer(for: ModelV3.types, store: .file(declared, options: options), version: 3)
        container.mainContext.insert(ModelV3.Tag(id: ModelV1.uuid(1), name: "swift"))
        try container.mainContext.save()
        try await container.close()
        #expect(try GenericSnapshot.read(from: declared).header.modelVersion == "3")

        let labelled = directory.file("labelled.json.gz")
        let old = try GraphContainer(for: ModelV3.types, store: .file(labelled, options: options))
        old.mainContext.insert(ModelV3.Tag(id: ModelV1.uuid(1), name: "swift"))
        try old.mainContext.save()
        try await old.close()
        #expect(try GenericSnapshot.read(from: labelled).header.modelVersion == "7")
        // The option's number is the app's version when the container declares none.
        let again = try GraphContainer(for: ModelV3.types, store: .file(labelled, options: options))
        try await again.close()
        #expect {
            _ = try GraphContainer(for: ModelV3.types, store: .file(labelled), version: 3)
        } throws: { error in
            error as? GraphStoreError == .newerModelVersion(path: labelled.path, found: 7, supported: 3)
        }
    }

    @Test func aWholeStoreStepSplitsAnEntityAndDerivesRelationships() async throws {
        struct Author: Entity, Equatable {
            var id: String
            var name: String
        }
        struct Book: Entity, Equatable {
            var id: Int
            var title: String
            var authorID: String?
            static var relationships: [Relationship<Book>] { [.toOne(\.authorID, Author.self, deleteRule: .nullify)] }
        }
        struct BookV1: Entity {
            var id: Int
            var title: String
            var author: String
            static var entityName: String { "Book" }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("books.json.gz")
        let v1 = try GraphContainer(for: [BookV1.self], store: .file(url))
        v1.mainContext.insert(BookV1(id: 1, title: "A", author: "Ann"))
        v1.mainContext.insert(BookV1(id: 2, title: "B", author: "Bob"))
        v1.mainContext.insert(BookV1(id: 3, title: "C", author: "Ann"))
        try v1.mainContext.save()
        try await v1.close()

        let split = SchemaMigration(from: 1, to: 2, [
            .transformStore { store in
                var authors: [String: [String: SnapshotValue]] = [:]
                store["Book"] = store["Book"].map { book in
                    var book = book
                    if case .string(let name)? = book.removeValue(forKey: "author") {
                        let id = name.lowercased()
                        authors[id] = ["id": .string(id), "name": .string(name)]
                        book["authorID"] = .string(id)
                    }
                    return book
                }
                store["Author"] = authors.keys.sorted().map { authors[$0]! }
            },
        ])
        let v2 = try GraphContainer(for: [Author.self, Book.self], store: .file(url), version: 2, migrations: [split])
        #expect(try v2.mainContext.fetch(FetchDescriptor<Author>(sortBy: [SortDescriptor(\.id)])) == [Author(id: "ann", name: "Ann"), Author(id: "bob", name: "Bob")])
        #expect(try v2.mainContext.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.id)])).map(\.authorID) == ["ann", "bob", "ann"])
        try v2.checkInvariants()
        try await v2.close()
    }
}
