import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// `Int128` and `UInt128` in binary property lists: beyond 64 bits a 16-byte integer object
/// (two's complement, big-endian), within 64 bits the objects a 64-bit integer has; a store
/// holding them saves, closes and reopens, Python's `plistlib` reads them, and the generic
/// readers of `convert` and model migrations keep every digit.
@Suite struct BPlistWideIntegerTests {
    /// 128-bit integers through every kind of container: keyed (synthesized), optional,
    /// unkeyed (an array, and a type that encodes into one itself) and single-value.
    struct Wide: Entity, Equatable {
        var id: Int
        var signed: Int128
        var unsigned: UInt128
        var optional: Int128?
        var list: [UInt128]
        var pair: Pair
        var single: Single
        static var entityName: String { "Wide" }
    }

    /// Encodes into an unkeyed container with the container's own 128-bit methods.
    struct Pair: Codable, Equatable, Sendable {
        var low: Int128
        var high: UInt128

        init(low: Int128, high: UInt128) {
            self.low = low
            self.high = high
        }

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            low = try container.decode(Int128.self)
            high = try container.decode(UInt128.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(low)
            try container.encode(high)
        }
    }

    /// Encodes into a single-value container.
    struct Single: Codable, Equatable, Sendable {
        var value: Int128

        init(_ value: Int128) { self.value = value }

        init(from decoder: any Decoder) throws {
            value = try decoder.singleValueContainer().decode(Int128.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    static let beyond64 = Int128(Int64.max) * 1_000 + 7
    static let objects: [Wide] = [
        Wide(id: 1, signed: .max, unsigned: .max, optional: .min, list: [.max, 0, UInt128(UInt64.max) + 1],
             pair: Pair(low: .min, high: .max), single: Single(.max)),
        Wide(id: 2, signed: .min, unsigned: UInt128(Int128.max), optional: nil, list: [],
             pair: Pair(low: -beyond64, high: UInt128(beyond64)), single: Single(.min)),
        // Within 64 bits, at their edges and beyond them by one.
        Wide(id: 3, signed: -5, unsigned: 7, optional: 0, list: [1, UInt128(UInt64.max)],
             pair: Pair(low: Int128(Int64.min), high: UInt128(UInt64.max)), single: Single(Int128(Int64.max))),
        Wide(id: 4, signed: Int128(Int64.min) - 1, unsigned: UInt128(UInt64.max) + 1, optional: Int128(Int64.max) + 1, list: [2],
             pair: Pair(low: Int128(UInt64.max), high: 0), single: Single(42)),
    ]

    /// The objects whose values a signed reader (Python, the generic values) reads exactly: no
    /// `UInt128` above `Int128.max`.
    static var signedReadable: [Wide] { objects.filter { $0.id != 1 } }

    static func fetchAll(_ container: GraphContainer) throws -> [Wide] {
        try container.mainContext.fetch(FetchDescriptor<Wide>(sortBy: [SortDescriptor(\.id)]))
    }

    /// A closed property-list store holding `objects`.
    static func store(_ objects: [Wide], at url: URL, compression: Compression = .gzip) async throws {
        let container = try GraphContainer(for: [Wide.self], store: .file(url, format: .binaryPropertyList, compression: compression))
        container.mainContext.insert(contentsOf: objects)
        try container.mainContext.save()
        try await container.close()
    }

    // MARK: - The store

    @Test func aStoreOfWideIntegersSavesClosesAndReopensEqual() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("wide.plist.gz")
        let container = try GraphContainer(for: [Wide.self], store: .file(url, format: .binaryPropertyList))
        container.mainContext.insert(contentsOf: Self.objects)
        try container.mainContext.save()
        // The snapshot is written: flushing and closing do not throw.
        try await container.flush()
        try await container.close()
        #expect(!FileManager.default.fileExists(atPath: url.path + ".journal"))

        let reopened = try GraphContainer(for: [Wide.self], store: .file(url, format: .binaryPropertyList))
        #expect(try Self.fetchAll(reopened) == Self.objects)
        try await reopened.close()
    }

    // MARK: - The encoding

    @Test func valuesWithin64BitsKeepTheirEncoding() throws {
        for value in [0, 1, -1, 255, 65_536, Int64.max, Int64.min] {
            #expect(try BPlistEncoder.encode([Int128(value)]) == BPlistEncoder.encode([value]))
        }
        for value in [0, 255, UInt64(Int64.max), UInt64(Int64.max) + 1, UInt64.max] {
            #expect(try BPlistEncoder.encode([UInt128(value)]) == BPlistEncoder.encode([value]))
        }
    }

    @Test func valuesBeyond64BitsAreSixteenByteTwosComplement() throws {
        let cases: [(Int128, [UInt8])] = [
            (.max, [0x7F] + Array(repeating: 0xFF, count: 15)),
            (.min, [0x80] + Array(repeating: 0, count: 15)),
            (Int128(Int64.min) - 1, Array(repeating: 0xFF, count: 8) + [0x7F] + Array(repeating: 0xFF, count: 7)),
        ]
        for (value, bytes) in cases {
            let data = try BPlistEncoder.encode([value])
            #expect(data.range(of: Data([0x14] + bytes)) != nil, "\(value)")
            #expect(try BPlistDecoder.decode([Int128].self, from: data) == [value])
        }
        // A `UInt128` above `Int128.max` is its bits, which only a `UInt128` reads as it.
        let data = try BPlistEncoder.encode([UInt128.max])
        #expect(data.range(of: Data([0x14] + Array(repeating: 0xFF, count: 16))) != nil)
        #expect(try BPlistDecoder.decode([UInt128].self, from: data) == [.max])
        #expect(try BPlistDecoder.decode([Int128].self, from: data) == [-1])
    }

    @Test func aNumberThatDoesNotFitIsRefusedNotTruncated() throws {
        #expect(throws: DecodingError.self) { try BPlistDecoder.decode([Int64].self, from: try BPlistEncoder.encode([Int128.max])) }
        #expect(throws: DecodingError.self) { try BPlistDecoder.decode([UInt128].self, from: try BPlistEncoder.encode([Int128(-1)])) }
        #expect(throws: DecodingError.self) { try BPlistDecoder.decode([UInt64].self, from: try BPlistEncoder.encode([UInt128(UInt64.max) + 1])) }
        // A double reads the value rounded, as from JSON.
        #expect(try BPlistDecoder.decode([Double].self, from: try BPlistEncoder.encode([Int128.min])) == [-0x1p127])
    }

    // MARK: - Outside readers

    /// Python's `plistlib` reads 16-byte integers as signed: every `Int128`, and every `UInt128`
    /// up to `Int128.max`, exactly; a `UInt128` above that as its bits less 2^128.
    @Test func pythonReadsTheStoreFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("wide.plist.gz")
        try await Self.store(Self.objects, at: url)
        let script = #"""
            import gzip, json, plistlib, sys
            document = plistlib.loads(gzip.open(sys.argv[1]).read())
            print(json.dumps([{
                "id": o["id"], "signed": str(o["signed"]), "unsigned": str(o["unsigned"]),
                "optional": None if o.get("optional", "$null") == "$null" else str(o["optional"]),
                "list": [str(x) for x in o["list"]], "pair": [str(x) for x in o["pair"]], "single": str(o["single"]),
            } for o in document["entities"]["Wide"]]))
            """#
        let output = try await SnapshotTestKit.runPython(script, [url.path])
        let read = try JSONDecoder().decode([PythonView].self, from: output).sorted { $0.id < $1.id }
        /// As a signed 128-bit reader sees it.
        func signed(_ value: UInt128) -> String { String(Int128(truncatingIfNeeded: value)) }
        #expect(read == Self.objects.map { object in
            PythonView(
                id: object.id, signed: String(object.signed), unsigned: signed(object.unsigned), optional: object.optional.map { String($0) },
                list: object.list.map(signed), pair: [String(object.pair.low), signed(object.pair.high)], single: String(object.single.value))
        })
        #expect(read.first { $0.id == 1 }?.unsigned == "-1")
    }

    private struct PythonView: Codable, Equatable {
        let id: Int
        let signed: String
        let unsigned: String
        let optional: String?
        let list: [String]
        let pair: [String]
        let single: String
    }

    // MARK: - Generic values

    /// The generic reader takes a 16-byte integer beyond 64 bits as a rounded double and keeps
    /// its digits: a conversion to a property list writes it back as it was, one to JSON as
    /// the exact number.
    @Test(arguments: [SnapshotFormat.binaryPropertyList, .json])
    func aConversionKeepsEveryDigit(to format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("wide.plist")
        // A property list keeps the bits of a `UInt128` above `Int128.max`; JSON, which reads
        // them as the negative number they are to everyone else, only the others.
        let objects = format == .json ? Self.signedReadable : Self.objects
        try await Self.store(objects, at: url, compression: .none)
        let snapshot = try GenericSnapshot.read(from: url)
        let signed = try #require(snapshot.objects(of: "Wide").first { $0["id"] == .integer(2) })
        #expect(signed["signed"] == .double(Double(Int128.min)))
        #expect(signed["unsigned"] == .double(Double(Int128.max)))

        let copy = directory.file("copy.\(format.fileExtension)")
        try snapshot.write(to: copy, format: format, compression: .none)
        let container = try GraphContainer(for: [Wide.self], store: .file(copy, format: format, compression: .none))
        #expect(try Self.fetchAll(container) == objects)
        try await container.close()
    }

    /// A model migration reads the store as generic values, with the exact numbers recorded.
    @Test func aModelMigrationOfAPropertyListKeepsEveryDigit() async throws {
        struct Labelled: Entity, Equatable {
            var id: Int
            var signed: Int128
            var unsigned: UInt128
            var optional: Int128?
            var list: [UInt128]
            var pair: Pair
            var single: Single
            var label: String
            static var entityName: String { "Wide" }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("wide.plist.gz")
        try await Self.store(Self.signedReadable, at: url)
        let migrations = [SchemaMigration(from: 1, to: 2, [.addField("label", in: "Wide", default: .string("none"))])]
        let container = try GraphContainer(
            for: [Labelled.self], store: .file(url, format: .binaryPropertyList), version: 2, migrations: migrations)
        let migrated = try container.mainContext.fetch(FetchDescriptor<Labelled>(sortBy: [SortDescriptor(\.id)]))
        #expect(migrated == Self.signedReadable.map {
            Labelled(id: $0.id, signed: $0.signed, unsigned: $0.unsigned, optional: $0.optional, list: $0.list, pair: $0.pair, single: $0.single, label: "none")
        })
        try await container.close()
    }

    /// Generic values read a `UInt128` above `Int128.max` as the negative number its 16 bytes
    /// are to a signed reader: the JSON a model migration decodes from holds that number, so
    /// the migration is refused, naming the field, and the store is left as it was.
    @Test func aModelMigrationRefusesWhatItCannotKeep() async throws {
        struct Labelled: Entity {
            var id: Int
            var unsigned: UInt128
            var label: String
            static var entityName: String { "Wide" }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("wide.plist.gz")
        try await Self.store(Self.objects, at: url)
        let before = try Data(contentsOf: url)
        let migrations = [SchemaMigration(from: 1, to: 2, [.addField("label", in: "Wide", default: .string("none"))])]
        let error = #expect(throws: GraphStoreError.self) {
            _ = try GraphContainer(for: [Labelled.self], store: .file(url, format: .binaryPropertyList), version: 2, migrations: migrations)
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("unsigned"))
        #expect(try Data(contentsOf: url) == before)
    }
}
