import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// Values whose shape differs between JSON and a property list (a `URL` is a string in JSON and
/// a `{"relative": …}` dictionary in a property list, a `Decimal` a number and a dictionary of
/// its parts) and optional dates and data that are `nil` in the first objects: a model
/// migration of either format, and `convert` between the formats, give files the app opens
/// with the same values.
@Suite struct MigrationFieldShapeTests {
    enum V1 {
        struct Bookmark: Entity, Equatable {
            var id: Int
            var link: URL
            var price: Decimal
            var visited: Date?
            var icon: Data?
            var links: [URL]
            var attributes: [String: String]
            static var entityName: String { "Bookmark" }
        }
    }

    enum V2 {
        struct Bookmark: Entity, Equatable {
            var id: Int
            var link: URL
            var price: Decimal
            var visited: Date?
            var icon: Data?
            var links: [URL]
            var attributes: [String: String]
            var note: String
            static var entityName: String { "Bookmark" }
        }

        static let migrations = [SchemaMigration(from: 1, to: 2, [.addField("note", in: "Bookmark", default: .string(""))])]
    }

    /// A hundred bookmarks whose optional date and data are set only from the 90th on (after
    /// the objects a header's type hints look at).
    static let bookmarks: [V1.Bookmark] = (0..<100).map(bookmark)

    static func bookmark(_ n: Int) -> V1.Bookmark {
        let posix = Locale(identifier: "en_US_POSIX")
        // Zero is a decimal of length 0 in a property list.
        let price: Decimal = n % 10 == 0 ? 0 : Decimal(string: "\(n).25", locale: posix)!
        let visited: Date? = n >= 90 ? Date(timeIntervalSinceReferenceDate: 800_000_000.5 + Double(n)) : nil
        let icon: Data? = n >= 90 ? Data([UInt8(n), 0, 255]) : nil
        let links: [URL] = n % 3 == 0 ? [URL(string: "file:///tmp/\(n)")!] : []
        // A dictionary of a URL's property-list shape that is not a URL.
        let attributes: [String: String] = n == 1 ? ["relative": "not a URL"] : [:]
        return V1.Bookmark(
            id: n, link: URL(string: "https://example.com/\(n)?q=\(n)")!, price: price, visited: visited, icon: icon,
            links: links, attributes: attributes)
    }

    static func expected(_ bookmark: V1.Bookmark) -> V2.Bookmark {
        V2.Bookmark(
            id: bookmark.id, link: bookmark.link, price: bookmark.price, visited: bookmark.visited, icon: bookmark.icon,
            links: bookmark.links, attributes: bookmark.attributes, note: "")
    }

    static func write(_ url: URL, format: SnapshotFormat) async throws {
        let container = try GraphContainer(for: [V1.Bookmark.self], store: .file(url, format: format), version: 1)
        container.mainContext.insert(contentsOf: bookmarks)
        try container.mainContext.save()
        try await container.close()
    }

    @Test(arguments: SnapshotFormat.allCases)
    func aModelMigrationKeepsTheValues(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("bookmarks.\(format.fileExtension).gz")
        try await Self.write(url, format: format)
        let container = try GraphContainer(for: [V2.Bookmark.self], store: .file(url, format: format), version: 2, migrations: V2.migrations)
        #expect(try container.mainContext.fetch(FetchDescriptor<V2.Bookmark>(sortBy: [SortDescriptor(\.id)])) == Self.bookmarks.map(Self.expected))
        try await container.close()
    }

    @Test(arguments: SnapshotFormat.allCases)
    func aConversionToTheOtherFormatOpensWithTheValues(from format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("bookmarks.\(format.fileExtension).gz")
        try await Self.write(source, format: format)
        let other: SnapshotFormat = format == .json ? .binaryPropertyList : .json
        let converted = directory.file("converted.\(other.fileExtension).gz")
        try GenericSnapshot.read(from: source).write(to: converted, format: other, compression: .gzip)
        let container = try GraphContainer(for: [V1.Bookmark.self], store: .file(converted, format: other), version: 1)
        #expect(try container.mainContext.fetch(FetchDescriptor<V1.Bookmark>(sortBy: [SortDescriptor(\.id)])) == Self.bookmarks)
        try await container.close()
    }
}
