import ExampleModel
import Foundation
import PropertyBased
import Testing

@testable import GraphStore
@testable import GraphStoreCoding
import GraphStoreTestSupport

/// What `FastJSONEncoder` writes reads back to the bit through `JSONDecoder`, our
/// `FastJSONDecoder` and Python's `json`, and is the document `JSONEncoder` writes: random
/// edge values, the string and number cases of JSONTestSuite, and whole snapshot documents,
/// also those encoded in parts on several threads.
@Suite struct FastJSONEncoderRoundTripTests {
    typealias Kit = FastJSONEncoderTestKit

    // MARK: - Random values

    @Test func randomEdgeValuesReadBackToTheBit() async {
        await propertyCheck(count: 200, input: SnapshotGenerators.edgeValues) { value in
            let data = try FastJSONEncoder.encode(value)
            #expect(try Kit.decode(EdgeValues.self, data).differences(from: value) == [], "JSONDecoder")
            #expect(try FastJSONDecoder.decode(EdgeValues.self, from: data).differences(from: value) == [], "FastJSONDecoder")
            #expect(Kit.fast(value) == Kit.reference(value))
        }
    }

    /// Every field type the decoder knows (all integer widths, `Float`, `URL`, enums,
    /// dictionaries with integer keys…), from random seeds.
    @Test func randomValuesOfEveryFieldTypeMatchJSONEncoder() async {
        await propertyCheck(count: 200, input: Gen<UInt64>.bitSet) { seed in
            var generator = SplitMix64(seed: seed)
            let value = FastJSONDecoderTests.randomEverything(&generator)
            #expect(Kit.fast(value) == Kit.reference(value))
            let data = try FastJSONEncoder.encode(value)
            // Read back by both decoders, written again: the same text to the byte.
            #expect(FastJSONDecoderTests.canonical(try Kit.decode(FastJSONDecoderTests.Everything.self, data)) == FastJSONDecoderTests.canonical(value))
            #expect(FastJSONDecoderTests.canonical(try FastJSONDecoder.decode(FastJSONDecoderTests.Everything.self, from: data)) == FastJSONDecoderTests.canonical(value))
        }
    }

    @Test func randomGraphsMatchJSONEncoder() async {
        await propertyCheck(count: 40, input: SnapshotGenerators.graph) { graph in
            #expect(Kit.fast(graph.posts) == Kit.reference(graph.posts))
            #expect(Kit.fast(graph.notes) == Kit.reference(graph.notes))
            let notes = try FastJSONEncoder.encode(graph.notes), posts = try FastJSONEncoder.encode(graph.posts)
            #expect(try Kit.decode([Note].self, notes) == graph.notes)
            #expect(try FastJSONDecoder.decode([Post].self, from: posts) == graph.posts)
        }
    }

    @Test func fixedEdgeValuesReadBackToTheBit() throws {
        for value in [EdgeValues.extremes, .empties, .nullMarkerText] + EdgeValues.binaryPropertyListTraps.map(\.value) {
            let data = try FastJSONEncoder.encode(value)
            #expect(try Kit.decode(EdgeValues.self, data).differences(from: value) == [], "\(value)")
            #expect(try FastJSONDecoder.decode(EdgeValues.self, from: data).differences(from: value) == [], "\(value)")
            Kit.expectSame(value)
        }
    }

    // MARK: - JSONTestSuite

    /// The string and number documents of JSONTestSuite's `y_` (must accept) set, and of its
    /// `test_transform` set, that Swift values can hold (MIT License, © 2016 Nicolas Seriot).
    static let suiteStrings: [String] = [
        #"["\u0060\u012a\u12AB"]"#, #"["\uD801\udc37"]"#, #"["\ud83d\ude39\ud83d\udc8d"]"#, #"["\"\\\/\b\f\n\r\t"]"#,
        #"["\\u0000"]"#, #"["\""]"#, #"["a/*b*/c/*d//e"]"#, #"["\\a"]"#, #"["\\n"]"#, #"["\u0012"]"#, #"["\uFFFF"]"#,
        #"["asd"]"#, #"[ "asd"]"#, #"["\uDBFF\uDFFF"]"#, #"["new\u00A0line"]"#, "[\"\u{10FFFF}\"]", "[\"\u{FFFF}\"]",
        #"["\u0000"]"#, #"["\u002c"]"#, "[\"\u{3C0}\"]", "[\"\u{1BFFF}\"]", #"" ""#, #"["\uD834\uDd1e"]"#, #"["\u0821"]"#,
        #"["\u0123"]"#, "[\"\u{2028}\"]", "[\"\u{2029}\"]", #"["\u0061\u30af\u30EA\u30b9"]"#, #"["new\u000Aline"]"#,
        "[\"\u{7F}\"]", #"["\uA66D"]"#, #"["\u005C"]"#, "[\"\u{2342}\u{3234}\u{2342}\"]", #"["\uDBFF\uDFFE"]"#,
        #"["\uD83F\uDFFE"]"#, #"["\u200B"]"#, #"["\u2064"]"#, #"["\uFDD0"]"#, #"["\uFFFE"]"#, #"["\u0022"]"#,
        "[\"a\u{7F}a\"]", "[\"\u{20AC}\u{1D11E}\"]", #"["\u0000"]"#, #"["\uDBFF\uDFFF"]"#,
    ]

    static let suiteNumbers: [String] = [
        "[123e65]", "[0e+1]", "[0e1]", "[ 4]", "[-0.000000000000000000000000000000000000000000000000000000000000000000000000000001]",
        "[20e1]", "[-0]", "[-123]", "[-1]", "[1E22]", "[1E-2]", "[1E+2]", "[123e45]", "[123.456e78]", "[1e-2]", "[1e+2]",
        "[123]", "[123.456789]", "[1.0]", "[1.000000000000000005]", "[1000000000000000]", "[10000000000000000999]", "[1E6]",
        "[-9223372036854775808]", "[9223372036854775807]",
    ]

    static let suiteIntegers: [String] = ["[-9223372036854775808]", "[9223372036854775807]", "[-0]", "[0e1]", "[1E6]", "[20e1]"]

    @Test(arguments: suiteStrings)
    func jsonTestSuiteStrings(document: String) throws {
        // All are one-string arrays but `" "`, a bare string.
        let strings = document.hasPrefix("\"") ? [try Kit.decode(String.self, Data(document.utf8))] : try Kit.decode([String].self, Data(document.utf8))
        let data = try FastJSONEncoder.encode(strings)
        let back = try Kit.decode([String].self, data)
        #expect(back.map { Array($0.unicodeScalars) } == strings.map { Array($0.unicodeScalars) })
        #expect(try FastJSONDecoder.decode([String].self, from: data).map { Array($0.unicodeScalars) } == strings.map { Array($0.unicodeScalars) })
        Kit.expectSame(strings)
        // Only the required escapes: no byte below 0x20 is left raw, and non-ASCII stays UTF-8.
        #expect(!data.contains { $0 < 0x20 })
        #expect(String(data: data, encoding: .utf8) != nil)
    }

    @Test(arguments: suiteNumbers)
    func jsonTestSuiteNumbers(document: String) throws {
        // Read with our decoder: JSONDecoder refuses `0e1` (valid JSON).
        let doubles = try FastJSONDecoder.decode([Double].self, from: Data(document.utf8))
        let data = try FastJSONEncoder.encode(doubles)
        #expect(try Kit.decode([Double].self, data).map(\.bitPattern) == doubles.map(\.bitPattern))
        #expect(try FastJSONDecoder.decode([Double].self, from: data).map(\.bitPattern) == doubles.map(\.bitPattern))
        Kit.expectSame(doubles)
        // Those `Float` holds (JSONDecoder refuses the others) round-trip as floats too.
        guard let floats = try? FastJSONDecoder.decode([Float].self, from: Data(document.utf8)) else { return }
        #expect(try Kit.decode([Float].self, FastJSONEncoder.encode(floats)).map(\.bitPattern) == floats.map(\.bitPattern))
        Kit.expectSame(floats)
    }

    @Test(arguments: suiteIntegers)
    func jsonTestSuiteIntegers(document: String) throws {
        let integers = try Kit.decode([Int64].self, Data(document.utf8))
        #expect(try Kit.decode([Int64].self, FastJSONEncoder.encode(integers)) == integers)
        Kit.expectSame(integers)
    }

    // MARK: - Python

    /// Python's `json` reads our text and JSONEncoder's as the same values (floats compared
    /// by `repr`, so `-0.0` and every digit count).
    @Test func pythonReadsTheSameValues() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url
        var generator = SplitMix64(seed: 0x5EED)
        let everything = (0..<20).map { _ in FastJSONDecoderTests.randomEverything(&generator) }
        let documents: [(String, Data, Data)] = [
            ("extremes", try FastJSONEncoder.encode(EdgeValues.extremes), try SnapshotCodec.makeJSONEncoder().encode(EdgeValues.extremes)),
            ("everything", try FastJSONEncoder.encode(everything), try SnapshotCodec.makeJSONEncoder().encode(everything)),
            ("strings", try FastJSONEncoder.encode(FastJSONDecoderTests.edgeStrings), try SnapshotCodec.makeJSONEncoder().encode(FastJSONDecoderTests.edgeStrings)),
        ]
        var arguments: [String] = []
        for (name, fast, reference) in documents {
            let fastURL = directory.appendingPathComponent("\(name)-fast.json"), referenceURL = directory.appendingPathComponent("\(name)-reference.json")
            try fast.write(to: fastURL)
            try reference.write(to: referenceURL)
            arguments += [fastURL.path, referenceURL.path]
        }
        let script = """
        import json, sys
        paths = sys.argv[1:]
        for fast, reference in zip(paths[0::2], paths[1::2]):
            with open(fast, 'rb') as f: a = json.loads(f.read().decode('utf-8'))
            with open(reference, 'rb') as f: b = json.loads(f.read().decode('utf-8'))
            same = json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
            print(('same ' if same else 'different ') + fast)
        """
        let output = String(decoding: try await SnapshotTestKit.runPython(script, arguments), as: UTF8.self)
        let lines = output.split(separator: "\n")
        #expect(lines.count == documents.count)
        #expect(lines.allSatisfy { $0.hasPrefix("same ") }, "\(output)")
    }
}
