import ExampleModel
import Foundation
import GraphStoreTestSupport
import PropertyBased
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// Our binary-plist writer: lossless through our reader, and read by Foundation's
/// `PropertyListDecoder` and Python's `plistlib` as the values written.
@Suite struct BPlistEncoderTests {
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        try BPlistEncoder.encode(value)
    }

    @Test func randomEdgeValuesReadBackExactlyWithOurDecoder() async {
        await propertyCheck(count: 40, input: SnapshotGenerators.edgeValues.array(of: 1...6)) { values in
            let back = try BPlistDecoder.decode([EdgeValues].self, from: try Self.encode(values))
            #expect(back.count == values.count)
            for (written, read) in zip(values, back) {
                #expect(written.differences(from: read).isEmpty, "\(written.differences(from: read))")
            }
        }
    }

    @Test func randomEdgeValuesReadBackWithFoundationsDecoder() async {
        await propertyCheck(count: 40, input: SnapshotGenerators.edgeValues.array(of: 1...6)) { values in
            // Foundation reads `"$null"` in an optional as nil whatever its encoding, so
            // those values are left to our decoder (see the test above).
            let values = values.filter { $0.optionalText != "$null" }
            let back = try PropertyListDecoder().decode([EdgeValues].self, from: try Self.encode(values))
            #expect(back.count == values.count)
            for (written, read) in zip(values, back) {
                #expect(written.differences(from: read).isEmpty, "\(written.differences(from: read))")
            }
        }
    }

    @Test func foundationsLossesAreGone() throws {
        let values = [EdgeValues.extremes, .empties, .nullMarkerText] + EdgeValues.binaryPropertyListTraps.map(\.value)
        let back = try BPlistDecoder.decode([EdgeValues].self, from: try Self.encode(values))
        for (written, read) in zip(values, back) {
            #expect(written.differences(from: read).isEmpty, "\(written.id): \(written.differences(from: read))")
        }
        // Foundation's own writer still loses them (so the test above checks something).
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let lossy = try BPlistDecoder.decode([EdgeValues].self, from: try encoder.encode(EdgeValues.binaryPropertyListTraps.map(\.value)))
        #expect(zip(EdgeValues.binaryPropertyListTraps.map(\.value), lossy).contains { !$0.differences(from: $1).isEmpty })
    }

    @Test func nilIsTheNullMarkerAndTheTextIsNot() throws {
        let values: [String?] = [nil, "$null", "$null ", nil]
        let data = try Self.encode(values)
        #expect(try BPlistDecoder.decode([String?].self, from: data) == values)
        // Foundation's decoder reads both nils as nil, as it reads its own encoder's output.
        let foundation = try PropertyListDecoder().decode([String?].self, from: data)
        #expect(foundation[0] == nil && foundation[3] == nil && foundation[2] == "$null ")
    }

    /// The number of objects a binary property list's trailer gives.
    static func objectCount(_ data: Data) -> Int {
        data.suffix(24).prefix(8).reduce(0) { $0 << 8 | Int($1) }
    }

    @Test func stringsAreSharedByTheirBytesAndUUIDsWithTheirText() throws {
        struct Mixed: Codable, Equatable {
            var uuids: [UUID]
            var texts: [String]
        }
        let bytes = SplitMix64.bytes(300 * 16, seed: 0x5EED)
        let uuids = (0..<300).map { index in
            bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(fromByteOffset: index * 16, as: uuid_t.self)) }
        }
        // Thousands of texts, most of them repeated, enough to grow the table of shared strings
        // several times; canonically equivalent texts, which stay two; UUIDs as text, which are
        // the same objects as the UUIDs; and long texts, written each time.
        var texts = (0..<20_000).map { "text \($0 % 4_999)" }
        texts += ["é", "e\u{301}", "é", "$null", "$null"]
        texts += uuids.prefix(100).map(\.uuidString)
        texts += Array(repeating: String(repeating: "long ", count: 20), count: 3)
        let value = Mixed(uuids: uuids + uuids, texts: texts)
        let data = try Self.encode(value)
        #expect(try BPlistDecoder.decode(Mixed.self, from: data) == value)
        #expect(try PropertyListDecoder().decode(Mixed.self, from: data) == value)
        let shareable = texts.filter { $0.utf8.count <= BPlistObjectTable.longestSharedString }
        let distinct = Set((shareable + uuids.map(\.uuidString)).map { Array($0.utf8) }).count
        // The dictionary, its two keys, the two arrays, the distinct short texts, and each long one.
        #expect(Self.objectCount(data) == 5 + distinct + 3)
    }

    /// Keys are found by the identity of their text first: equal keys from different `String`s
    /// are still one object, and canonically equivalent keys still two.
    @Test func keysAreSharedByTheirBytesWhateverStringHoldsThem() throws {
        struct Key: CodingKey {
            var stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }
        struct Keyed: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                // A new heap string each time, longer than a small string's 15 bytes.
                try container.encode(7, forKey: Key(stringValue: String(repeating: "long key ", count: 3)))
                try container.encode(7, forKey: Key(stringValue: "é"))
                try container.encode(7, forKey: Key(stringValue: "e\u{301}"))
            }
        }
        let data = try Self.encode(Array(repeating: Keyed(), count: 50))
        // The array, 50 dictionaries, three keys and one integer.
        #expect(Self.objectCount(data) == 1 + 50 + 3 + 1)
        let read = try PropertyListSerialization.propertyList(from: data, format: nil) as! [[String: Int]]
        #expect(read.count == 50 && read[0]["long key long key long key "] == 7)
    }

    @Test func sizesOfEveryWidthReadBack() throws {
        // Counts and references across the 1-, 2- and 4-byte boundaries.
        for count in [0, 14, 15, 255, 256, 65_535, 65_536 + 3] {
            let numbers = (0..<count).map { Int64($0) * (($0 & 1) == 0 ? 1 : -7919) }
            let texts = (0..<min(count, 300)).map { String(repeating: "é", count: $0) }
            let data = try Self.encode(Pair(numbers: numbers, texts: texts, blob: Data(repeating: 7, count: count)))
            let ours = try BPlistDecoder.decode(Pair.self, from: data)
            let theirs = try PropertyListDecoder().decode(Pair.self, from: data)
            #expect(ours == Pair(numbers: numbers, texts: texts, blob: Data(repeating: 7, count: count)))
            #expect(theirs == ours)
        }
    }

    /// Python's `plistlib` reads the values, to the bit for numbers and to the Unicode
    /// scalar for strings, including the ones Foundation's writer loses.
    @Test func pythonReadsTheValuesExactly() async throws {
        let values = [EdgeValues.empties, .nullMarkerText] + EdgeValues.binaryPropertyListTraps.map(\.value)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("values.plist")
        try Self.encode(values).write(to: url)
        let script = #"""
            import json, plistlib, struct, sys
            values = plistlib.load(open(sys.argv[1], "rb"))
            bits = lambda x: struct.pack(">d", x).hex()
            scalars = lambda s: [ord(c) for c in s]
            print(json.dumps([{
                "id": v["id"],
                "optionalText": scalars(v["optionalText"]) if "optionalText" in v else None,
                "text": scalars(v["text"]),
                "doubles": [bits(x) for x in v["doubles"]],
                "floats": [bits(x) for x in v["floats"]],
                "texts": [scalars(t) for t in v["texts"]],
                "names": sorted([scalars(k), scalars(n)] for k, n in v["nested"]["names"].items()),
            } for v in values]))
            """#
        let output = try await SnapshotTestKit.runPython(script, [url.path])
        let read = try JSONDecoder().decode([PythonView].self, from: output)
        #expect(read.count == values.count)
        func scalars(_ text: String) -> [UInt32] { text.unicodeScalars.map(\.value) }
        func bits(_ value: Double) -> String { String(format: "%016llx", value.bitPattern) }
        for (value, view) in zip(values, read) {
            #expect(view.id == value.id)
            #expect(view.optionalText == value.optionalText.map(scalars))
            #expect(view.text == scalars(value.text))
            #expect(view.doubles == value.doubles.map(bits))
            #expect(view.floats == value.floats.map { bits(Double($0)) })
            #expect(view.texts == value.texts.map(scalars))
            #expect(view.names == value.nested.names.map { [scalars($0.key), scalars($0.value)] }.sorted { $0.lexicographicallyPrecedes($1) { $0.lexicographicallyPrecedes($1) } })
        }
    }

    private struct PythonView: Decodable {
        let id: String
        let optionalText: [UInt32]?
        let text: [UInt32]
        let doubles: [String]
        let floats: [String]
        let texts: [[UInt32]]
        let names: [[[UInt32]]]
    }

    private struct Pair: Codable, Equatable {
        let numbers: [Int64]
        let texts: [String]
        let blob: Data
    }
}
