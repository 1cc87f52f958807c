import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// The type hints name what a tool must know from the declared types, not only from the values
/// the sampled objects hold: an array empty (or `nil`) in every sampled object still names its
/// elements' type.
@Suite struct FieldTypeProbeTests {
    struct Album: Entity {
        var id: Int
        var dates: [Date]
        var grid: [[URL]]
        var blobs: [Data]?
        var tags: Set<String>
        var scores: [Double]
        static var entityName: String { "Album" }
    }

    @Test func emptyArraysNameTheirElements() {
        let empty = Album(id: 1, dates: [], grid: [], blobs: nil, tags: [], scores: [])
        #expect(FieldTypeProbe.fieldTypes(of: [empty]) == ["dates[]": "date", "grid[][]": "url", "blobs[]": "data", "tags[]": "string"])
        let full = Album(id: 2, dates: [Date()], grid: [[URL(string: "https://example.com")!]], blobs: [Data([1])], tags: ["a"], scores: [1.5])
        #expect(FieldTypeProbe.fieldTypes(of: [full]) == FieldTypeProbe.fieldTypes(of: [empty]))
    }

    /// Dates only in objects after those the hints may sample: converting the JSON store to a
    /// property list gives one the app opens with every date.
    @Test func aDateArrayEmptyInTheSampleConvertsToAPropertyList() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("albums.json.gz")
        let albums = (0..<200).map { id in
            Album(
                id: id, dates: id == 150 ? [Fixtures.epoch, Fixtures.epoch.addingTimeInterval(1.5)] : [], grid: [], blobs: nil, tags: [],
                scores: [])
        }
        let container = try GraphContainer(for: [Album.self], store: .file(url, format: .json))
        container.mainContext.insert(contentsOf: albums)
        try container.mainContext.save()
        try await container.close()

        let plist = directory.file("albums.plist")
        try GenericSnapshot.read(from: url).encoded(as: .binaryPropertyList).write(to: plist)
        let converted = try GraphContainer(for: [Album.self], store: .file(plist, format: .binaryPropertyList, compression: .none))
        let found = try converted.mainContext.fetch(FetchDescriptor<Album>())
        try await converted.close()
        #expect(found.count == 200)
        #expect(found.first { $0.id == 150 }?.dates == [Fixtures.epoch, Fixtures.epoch.addingTimeInterval(1.5)])
    }
}
