import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// Values whose shape differs between JSON and a property list (``BookmarkModels``): a model
/// migration of either format, and `convert` between the formats, give files the app opens
/// with the same values.
@Suite struct MigrationFieldShapeTests {
    typealias V1 = BookmarkModels.V1
    typealias V2 = BookmarkModels.V2

    static func write(_ url: URL, format: SnapshotFormat) async throws {
        let container = try GraphContainer(for: [V1.self], store: .file(url, format: format), version: 1)
        container.mainContext.insert(contentsOf: BookmarkModels.bookmarks)
        try container.mainContext.save()
        try await container.close()
    }

    @Test(arguments: SnapshotFormat.allCases)
    func aModelMigrationKeepsTheValues(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("bookmarks.\(format.fileExtension).gz")
        try await Self.write(url, format: format)
        let container = try GraphContainer(
            for: [V2.self], store: .file(url, format: format), version: 2, migrations: BookmarkModels.migrations)
        #expect(try container.mainContext.fetch(FetchDescriptor<V2>(sortBy: [SortDescriptor(\.id)]))
            == BookmarkModels.bookmarks.map(BookmarkModels.migrated))
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
        let container = try GraphContainer(for: [V1.self], store: .file(converted, format: other), version: 1)
        #expect(try container.mainContext.fetch(FetchDescriptor<V1>(sortBy: [SortDescriptor(\.id)])) == BookmarkModels.bookmarks)
        try await container.close()
    }
}
