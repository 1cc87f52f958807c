import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// URLs with a base (``RelativeURLModels``) read back `==` from every path a saved value takes
/// in a snapshot store: a snapshot of either format, the journal a crash leaves (always JSON),
/// a conversion between the formats and a model migration; and a URL without a base keeps the
/// plain string an outside reader expects.
@Suite struct RelativeURLStoreTests {
    typealias Models = RelativeURLModels
    typealias V1 = RelativeURLModels.V1
    typealias V2 = RelativeURLModels.V2

    /// A closed version-1 store holding ``RelativeURLModels/links``.
    static func write(_ url: URL, format: SnapshotFormat, compression: Compression = .gzip) async throws {
        let container = try GraphContainer(for: [V1.self], store: .file(url, format: format, compression: compression), version: 1)
        container.mainContext.insert(contentsOf: Models.links)
        try container.mainContext.save()
        try await container.close()
    }

    /// A version-1 store left open with the links in its journal only, and its crash copy in
    /// `directory`: the first save writes the snapshot (one link), the others only records, the
    /// writer's interval being an hour.
    static func crashedStore(format: SnapshotFormat, in directory: TemporaryDirectory) async throws -> URL {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("links.\(format.fileExtension).gz")
        let container = try GraphContainer(
            for: [V1.self], store: .file(url, format: format, coalescingInterval: .seconds(3600)), version: 1)
        for link in Models.links {
            container.mainContext.insert(link)
            try container.mainContext.save()
        }
        let copy = try JournalStoreTests.crashCopy(of: url, into: directory)
        try await container.close()
        let journal = try FileManager.default.attributesOfItem(atPath: copy.path + ".journal")[.size] as? Int
        #expect((journal ?? 0) > 0, "the crash left no journal: nothing was replayed")
        return copy
    }

    @Test(arguments: SnapshotFormat.allCases)
    func aSnapshotReadsBackEveryURL(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("links.\(format.fileExtension).gz")
        try await Self.write(url, format: format)
        #expect(try await Models.fetch(V1.self, .file(url, format: format)) == Models.links)
    }

    /// After a crash the journal is replayed: the same values as the snapshot gives, and the
    /// same again from the snapshot the next close writes.
    @Test(arguments: SnapshotFormat.allCases)
    func theJournalReplaysEveryURL(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.crashedStore(format: format, in: directory)
        #expect(try await Models.fetch(V1.self, .file(url, format: format)) == Models.links)
        #expect(FileManager.default.fileExists(atPath: url.path + ".journal") == false)
        #expect(try await Models.fetch(V1.self, .file(url, format: format)) == Models.links)
    }

    @Test(arguments: SnapshotFormat.allCases)
    func aConversionToTheOtherFormatKeepsEveryURL(from format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("links.\(format.fileExtension).gz")
        try await Self.write(source, format: format)
        let other: SnapshotFormat = format == .json ? .binaryPropertyList : .json
        let converted = directory.file("converted.\(other.fileExtension).gz")
        try GenericSnapshot.read(from: source).write(to: converted, format: other, compression: .gzip)
        #expect(try await Models.fetch(V1.self, .file(converted, format: other)) == Models.links)
        // And back.
        let back = directory.file("back.\(format.fileExtension).gz")
        try GenericSnapshot.read(from: converted).write(to: back, format: format, compression: .gzip)
        #expect(try await Models.fetch(V1.self, .file(back, format: format)) == Models.links)
    }

    /// Migration steps see the URLs as generic values; the migrated store holds them as saved,
    /// whether they came from the snapshot or from the journal a crash left.
    @Test(arguments: SnapshotFormat.allCases, [false, true])
    func aModelMigrationKeepsEveryURL(format: SnapshotFormat, crashed: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url: URL
        if crashed {
            url = try await Self.crashedStore(format: format, in: directory)
        } else {
            url = directory.file("links.\(format.fileExtension).gz")
            try await Self.write(url, format: format)
        }
        let expected = Models.links.map(Models.migrated)
        let store = StoreConfiguration.file(url, format: format)
        #expect(try await Models.fetch(V2.self, store, version: 2, migrations: Models.migrations) == expected)
        #expect(try await Models.fetch(V2.self, store, version: 2, migrations: Models.migrations) == expected)
    }

    /// A URL without a base is the string `JSONEncoder` writes, as before, for `zcat | jq` and
    /// Python; one with a base is its `Codable` form, which such readers see as an object.
    @Test func aJSONSnapshotHoldsPlainStringsForURLsWithoutABase() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("links.json")
        try await Self.write(url, format: .json, compression: .none)
        let bytes = try Data(contentsOf: url)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""link":"https:\/\/b.example\/x%20y?z=1""#))
        #expect(text.contains(#""link":{"relative":"sub\/file.txt","base":"https:\/\/a.example\/dir\/"}"#))
        let document = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        let links = try #require((document["entities"] as? [String: Any])?["Link"] as? [[String: Any]])
        for object in links {
            let id = try #require(object["id"] as? Int)
            let saved = Models.link(id).link
            if saved.baseURL == nil {
                #expect(object["link"] as? String == saved.absoluteString)
            } else {
                let form = try #require(object["link"] as? [String: String])
                #expect(form == ["relative": saved.relativeString, "base": try #require(saved.baseURL).absoluteString])
            }
        }
    }

    /// `origin` renamed beside a URL with a base, without a new model version: the check that
    /// refuses the store reads the URL's form (from the snapshot, or a crash's journal) as the
    /// app's types do, rather than letting the object pass unchecked and the field be dropped.
    @Test(arguments: SnapshotFormat.allCases, [false, true])
    func aFieldRenamedBesideAURLWithABaseIsRefused(format: SnapshotFormat, crashed: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url: URL
        if crashed {
            url = try await Self.crashedStore(format: format, in: directory)
        } else {
            url = directory.file("links.\(format.fileExtension).gz")
            try await Self.write(url, format: format)
        }
        let store = StoreConfiguration.file(url, format: format)
        let error = #expect(throws: GraphStoreError.self) { _ = try GraphContainer(for: [Models.Renamed.self], store: store, version: 1) }
        guard case .codingFailed(_, let entity, _, let reason)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(entity == "Link")
        #expect(reason.contains("Link.origin"))
        #expect(try await Models.fetch(V1.self, store) == Models.links)
    }
}
