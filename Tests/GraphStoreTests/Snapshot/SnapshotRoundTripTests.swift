import ExampleModel
import Foundation
import GraphStoreTestSupport
import PropertyBased
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// Everything an entity can hold reads back equal, to the bit, from every format and
/// compression: random graphs of the example model, and a local entity of edge values.
@Suite struct SnapshotRoundTripTests {
    // MARK: - Random graphs

    @Test func randomGraphsRoundTripThroughEveryLayout() async throws {
        await propertyCheck(count: 40, input: SnapshotGenerators.graph) { graph in
            for (format, compression) in SnapshotTestKit.allLayouts {
                try await roundTrip(graph, format: format, compression: compression)
            }
        }
    }

    /// A table large enough to be encoded on several threads, in a document large enough to be
    /// compressed in several runs: the file is one gzip member that reads back whole, in the
    /// app and in Python, in both formats.
    @Test(arguments: [SnapshotFormat.json, .binaryPropertyList])
    func aTableEncodedAndCompressedInPartsReadsBackWhole(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file(SnapshotTestKit.fileName(format, .gzip))
        let store = StoreConfiguration.file(url, format: format, compression: .gzip, durability: .coalesced)
        let count = SnapshotCodec.parallelEncodingThreshold * 2 + 17
        let filler = String(repeating: "a note's words, ", count: 24)
        let notes = (0..<count).map { index in
            Note(text: "\(index): \(filler)\(index * 7919 % 1_000_003)", createdAt: Date(timeIntervalSince1970: Double(index)))
        }
        let writer = try GraphContainer(for: exampleModel, store: store)
        writer.mainContext.insert(contentsOf: notes)
        try writer.mainContext.save()
        try await writer.close()
        let file = try Data(contentsOf: url)
        let document = try Gzip.decompress(file, maxOutputBytes: 1 << 30)
        #expect(document.count > 2 * Gzip.minimumPartBytes, "large enough to be cut into runs")

        let reader = try GraphContainer(for: exampleModel, store: store)
        try expectSame(try SnapshotTestKit.fetchAll(Note.self, from: reader), notes, id: \.id, "\(format)", SnapshotTestKit.exactlyEqual)
        try await reader.close()
        #expect(try await FileLayerFixtures.pythonGunzip(url) == document)
    }

    /// Writes `graph` with one container, reopens the file with a new one and compares.
    private func roundTrip(_ graph: RandomGraph, format: SnapshotFormat, compression: Compression) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file(SnapshotTestKit.fileName(format, compression))
        let store = StoreConfiguration.file(url, format: format, compression: compression)

        let writer = try GraphContainer(for: exampleModel, store: store)
        let context = writer.mainContext
        for tag in graph.tags { context.insert(tag) }
        for note in graph.notes { context.insert(note) }
        for post in graph.posts { context.insert(post) }
        try context.save()
        try await writer.flush()
        try await writer.close()

        // The file really is in the configured layout.
        let bytes = try Data(contentsOf: url)
        if compression == .gzip {
            #expect(bytes.starts(with: [0x1F, 0x8B]))
        } else if format == .json {
            #expect(bytes.first == UInt8(ascii: "{"))
        } else {
            #expect(bytes.starts(with: Array("bplist00".utf8)))
        }

        let reader = try GraphContainer(for: exampleModel, store: store)
        let layout = "\(format)/\(compression)"
        try expectSame(try SnapshotTestKit.fetchAll(Post.self, from: reader), graph.posts, id: \.id, layout, SnapshotTestKit.exactlyEqual)
        try expectSame(try SnapshotTestKit.fetchAll(Note.self, from: reader), graph.notes, id: \.id, layout, SnapshotTestKit.exactlyEqual)
        try expectSame(try SnapshotTestKit.fetchAll(ExampleModel.Tag.self, from: reader), graph.tags, id: \.id, layout, SnapshotTestKit.exactlyEqual)
        try reader.checkInvariants()
        #expect(reader.version == writer.version)
        try await reader.close()
    }

    private func expectSame<E, ID: Hashable>(
        _ read: [E], _ written: [E], id: KeyPath<E, ID>, _ layout: String, _ equal: (E, E) -> Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(read.count == written.count, "\(E.self) count in \(layout)", sourceLocation: sourceLocation)
        let byID = Dictionary(read.map { ($0[keyPath: id], $0) }, uniquingKeysWith: { first, _ in first })
        for value in written {
            let back = try #require(byID[value[keyPath: id]], "\(E.self) \(value[keyPath: id]) missing in \(layout)", sourceLocation: sourceLocation)
            #expect(equal(back, value), "\(E.self) differs in \(layout): wrote \(value), read \(back)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Edge values

    @Test func fixedEdgeValuesRoundTripThroughEveryLayout() async throws {
        for (format, compression) in SnapshotTestKit.allLayouts {
            let values = [EdgeValues.extremes, .empties, .nullMarkerText] + EdgeValues.binaryPropertyListTraps.map(\.value)
            try await roundTrip(values, format: format, compression: compression)
        }
    }

    /// Values Foundation's `PropertyListEncoder` did not give back, and our binary-plist
    /// writer does (see `BPlistObjectTable`), each alone in the file:
    ///
    /// - The string `"$null"` is the plist encoder's marker for `nil`: written as ASCII it
    ///   reads back as `nil` in an optional `String`, so the text is written as UTF-16.
    /// - Equal objects are shared only when equal to the bit: `0.0` and `-0.0` (doubles,
    ///   floats, dates) stay two objects, and so do canonically equivalent strings
    ///   ("é" and "e\u{301}", "Ω" U+2126 and U+03A9).
    @Test(arguments: EdgeValues.binaryPropertyListTraps.map(\.name))
    func binaryPropertyListFormerTraps(trap: String) async throws {
        let value = try #require(EdgeValues.binaryPropertyListTraps.first { $0.name == trap }?.value)
        for (format, compression) in SnapshotTestKit.allLayouts {
            try await roundTrip([value], format: format, compression: compression)
        }
    }

    @Test func randomEdgeValuesRoundTripThroughEveryLayout() async throws {
        await propertyCheck(count: 20, input: SnapshotGenerators.edgeValues.array(of: 1...6)) { values in
            // Ids must be distinct, or a later object replaces an earlier one.
            let distinct = values.enumerated().map { index, value in
                var value = value
                value.id = "edge \(index) \(value.id)"
                return value
            }
            for (format, compression) in SnapshotTestKit.allLayouts {
                try await roundTrip(distinct, format: format, compression: compression)
            }
        }
    }

    private func roundTrip(_ values: [EdgeValues], format: SnapshotFormat, compression: Compression) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file(SnapshotTestKit.fileName(format, compression))
        let store = StoreConfiguration.file(url, format: format, compression: compression)

        let writer = try GraphContainer(for: [EdgeValues.self], store: store)
        for value in values { writer.mainContext.insert(value) }
        try writer.mainContext.save()
        try await writer.flush()
        try await writer.close()

        let reader = try GraphContainer(for: [EdgeValues.self], store: store)
        let read = try reader.mainContext.fetch(FetchDescriptor<EdgeValues>())
        #expect(read.count == values.count)
        for value in values {
            let back = try #require(reader.mainContext.model(EdgeValues.self, id: value.id), "\(format)/\(compression): \(value.id) missing")
            let differences = value.differences(from: back)
            #expect(differences.isEmpty, "\(format)/\(compression): \(differences.joined(separator: "; "))")
        }
        try reader.checkInvariants()
        try await reader.close()
    }
}
