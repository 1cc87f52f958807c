import ExampleModel
import Foundation
import GraphStoreTestSupport
import PropertyBased
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// The snapshot's binary-plist reader gives what `PropertyListDecoder` gives for what
/// `PropertyListEncoder` writes (values to the bit; errors of the same case at the same coding
/// path), refuses damaged tables with the byte where they go wrong, and never crashes or
/// loops on hostile input.
@Suite struct BPlistDecoderTests {
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try encoder.encode(value)
    }

    /// An error's case and coding path, the parts both decoders must agree on.
    static func shape(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "not a DecodingError: \(error)" }
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .typeMismatch(_, let context): return "typeMismatch at \(path(context))"
        case .valueNotFound(_, let context): return "valueNotFound at \(path(context))"
        case .keyNotFound(let key, let context): return "keyNotFound(\(key.stringValue)) at \(path(context))"
        case .dataCorrupted(let context): return "dataCorrupted at \(path(context))"
        @unknown default: return "\(error)"
        }
    }

    struct Box<V: Codable>: Codable {
        var v: V
    }

    struct Row: Codable, Equatable {
        var name: String
        var count: Int
        var when: Date
        var blob: Data
        var ids: [UUID]
        var ratio: Double
        var small: Float
        var flag: Bool
        var big: UInt64
        var negative: Int64
        var optional: String?
        var nested: [String: [Int]]
        var url: URL
    }

    static func row(_ index: Int) -> Row {
        Row(
            name: index.isMultiple(of: 3) ? "naïve ☃︎ \(index)" : "row \(index)", count: index * 7 - 50,
            when: Date(timeIntervalSinceReferenceDate: Double(index) * 1_234.5678), blob: Data((0..<(index % 20)).map { UInt8($0 * 13 % 256) }),
            ids: (0..<(index % 3)).map { _ in UUID() }, ratio: Double(index) / 7, small: Float(index) / 3, flag: index.isMultiple(of: 2),
            big: UInt64.max - UInt64(index), negative: Int64.min + Int64(index), optional: index.isMultiple(of: 4) ? nil : "o\(index)",
            nested: ["a": [index], "b": []], url: URL(string: "https://example.com/\(index)")!)
    }

    @Test(arguments: [false, true])
    func readsWhatFoundationReads(parallel: Bool) throws {
        // Enough rows for the second half to be decoded on another thread when allowed.
        let rows = (0..<3_000).map(Self.row)
        let data = try Self.encode(rows)
        let ours = try BPlistDecoder.decode([Row].self, from: data, parallel: parallel)
        let foundation = try PropertyListDecoder().decode([Row].self, from: data)
        #expect(ours == foundation)
        #expect(ours == rows)
    }

    @Test func randomEdgeValuesReadAsFoundationReadsThem() async {
        await propertyCheck(count: 30, input: SnapshotGenerators.edgeValues.array(of: 1...6)) { values in
            let data = try Self.encode(EdgeValues.withOneNaNPattern(values))
            let ours = try BPlistDecoder.decode([EdgeValues].self, from: data)
            let foundation = try PropertyListDecoder().decode([EdgeValues].self, from: data)
            #expect(ours.count == foundation.count)
            for (mine, theirs) in zip(ours, foundation) {
                #expect(mine.differences(from: theirs).isEmpty, "\(mine.differences(from: theirs))")
            }
        }
    }

    /// What goes to Foundation's encoder holds one NaN pattern per document (see
    /// `EdgeValues.withOneNaNPattern`), and across documents each of the patterns it held.
    @Test func foundationGetsOneNaNPatternPerDocument() {
        let extremes = EdgeValues.extremes
        let held = Set(extremes.nested.values.filter(\.isNaN).map(\.bitPattern))
        #expect(held.count == 3)
        var picked = Set<UInt64>()
        for count in 1...6 {
            let documents = EdgeValues.withOneNaNPattern(Array(repeating: extremes, count: count))
            let nans = Set(documents.flatMap { $0.doubles + $0.nested.values }.filter(\.isNaN).map(\.bitPattern))
            #expect(nans.count == 1 && nans.isSubset(of: held))
            picked.formUnion(nans)
            // Everything but the NaNs' bits is as it was (`differences` lets any NaN match any NaN).
            #expect(documents.allSatisfy { extremes.differences(from: $0).isEmpty })
        }
        #expect(picked == held)
    }

    @Test func errorsHaveFoundationsCaseAndPath() throws {
        func expectSameShape<T: Decodable, V: Encodable>(_ type: T.Type, from value: V, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let data = try Self.encode(value)
            var foundation = "no error", ours = "no error"
            do { _ = try PropertyListDecoder().decode(T.self, from: data) } catch { foundation = Self.shape(error) }
            do { _ = try BPlistDecoder.decode(T.self, from: data) } catch { ours = Self.shape(error) }
            #expect(ours == foundation, sourceLocation: sourceLocation)
            #expect(ours != "no error", sourceLocation: sourceLocation)
        }
        try expectSameShape(Box<Int>.self, from: Box(v: "seven"))
        try expectSameShape(Box<String>.self, from: Box(v: 7))
        try expectSameShape(Box<Date>.self, from: Box(v: 7.5))
        try expectSameShape(Box<Data>.self, from: Box(v: "AAAA"))
        try expectSameShape(Box<Bool>.self, from: Box(v: "true"))
        try expectSameShape(Box<Int8>.self, from: Box(v: 300))
        try expectSameShape(Box<UInt>.self, from: Box(v: -1))
        try expectSameShape(Box<Int>.self, from: Box(v: [1]))
        try expectSameShape(Box<[Int]>.self, from: Box(v: ["a": 1]))
        try expectSameShape(Box<Int>.self, from: Box<Int?>(v: nil))
        try expectSameShape([Box<[Box<Int>]>].self, from: [Box(v: [Box(v: 1), Box(v: 2)]), Box(v: [Box(v: 3), Box<Int?>(v: nil)])])
        try expectSameShape([Box<[Int]>].self, from: [Box(v: [1, 2]), Box(v: [3, 4])].map { Box(v: $0.v.map(String.init)) })
    }

    /// Fields of concrete types (read without the coding path when they hold what is asked)
    /// that hold something else: the same case and path as Foundation, and our message.
    @Test func concreteFieldsThatDoNotHoldTheirTypeFailAsFoundationDoes() throws {
        struct Fields: Decodable {
            var name: String
            var small: Int8
            var ratio: Double
            var flag: Bool
            var note: String?
        }
        func member(_ name: String, _ value: Any) -> [String: Any] {
            var fields: [String: Any] = ["name": "n", "small": 1, "ratio": 0.5, "flag": true, "note": "x"]
            fields[name] = value
            return fields
        }
        let cases: [(key: String, value: Any, message: String)] = [
            ("name", 7, "Expected to decode String but found a number instead."),
            ("small", 300, "Parsed property list number does not fit in Int8."),
            ("small", "1", "Expected to decode Int8 but found a string instead."),
            ("ratio", "0.5", "Expected to decode Double but found a string instead."),
            ("flag", 1, "Expected to decode Bool but found a number instead."),
            ("note", 3, "Expected to decode String but found a number instead."),
        ]
        for testCase in cases {
            // Two good rows first, so that the failing one reuses a keyed container's state.
            let rows = [member("name", "a"), member("name", "b"), member(testCase.key, testCase.value)]
            let data = try PropertyListSerialization.data(fromPropertyList: rows, format: .binary, options: 0)
            var foundation = "no error", ours = "no error", message = ""
            do { _ = try PropertyListDecoder().decode([Fields].self, from: data) } catch { foundation = Self.shape(error) }
            do { _ = try BPlistDecoder.decode([Fields].self, from: data) } catch {
                ours = Self.shape(error)
                switch error as? DecodingError {
                case .typeMismatch(_, let context), .dataCorrupted(let context): message = context.debugDescription
                default: break
                }
            }
            #expect(ours == foundation, "\(testCase.key): \(testCase.value)")
            #expect(ours.hasSuffix("at [2].\(testCase.key)"), "\(testCase.key): \(ours)")
            #expect(message == testCase.message, "\(testCase.key): \(testCase.value)")
        }
    }

    @Test func aLaterErrorIsTheSameWithTheSecondHalfOnAnotherThread() throws {
        var rows: [Box<Int>] = (0..<4_000).map { Box(v: $0) }
        rows[3_123] = Box(v: Int.max)
        let data = try Self.encode(rows)
        for parallel in [false, true] {
            #expect {
                _ = try BPlistDecoder.decode([Box<Int32>].self, from: data, parallel: parallel)
            } throws: { error in
                Self.shape(error) == "dataCorrupted at [3123].v"
            }
        }
    }

    /// Members are looked up first at the cursor by the key object found there before; with
    /// dictionaries whose keys come in different sets and orders, every member still reads as
    /// Foundation reads it.
    @Test func keysInChangingOrdersAndSetsReadAsFoundationReadsThem() throws {
        struct Some: Codable, Equatable {
            var a: Int?
            var b: Int?
            var c: String?
        }
        let dictionaries: [[String: Int]] = [["a": 1, "b": 2], ["b": 3, "a": 4, "c": 5], ["c": 6], [:], ["a": 7, "b": 8], ["z": 9, "b": 10]]
        let data = try Self.encode(dictionaries)
        #expect(try BPlistDecoder.decode([[String: Int]].self, from: data) == PropertyListDecoder().decode([[String: Int]].self, from: data))
        let structs = try Self.encode((0..<200).map { Some(a: $0 % 3 == 0 ? nil : $0, b: $0 % 5 == 0 ? nil : -$0, c: $0 % 2 == 0 ? "c\($0)" : nil) })
        #expect(try BPlistDecoder.decode([Some].self, from: structs) == PropertyListDecoder().decode([Some].self, from: structs))
    }

    /// An ASCII key matches a name byte for byte, even after the same key object has matched
    /// another name: `"\u{212A}"` (KELVIN SIGN), which Swift finds equal to `"K"`, does not
    /// find the key `"K"`.
    @Test func anASCIIKeyIsMatchedByteForByteAfterItWasFound() throws {
        struct Pair: Decodable {
            enum Plain: String, CodingKey { case k = "K" }
            enum Kelvin: String, CodingKey { case k = "\u{212A}" }
            var plain: Int
            var kelvin: Int?
            init(from decoder: any Decoder) throws {
                var array = try decoder.unkeyedContainer()
                plain = try array.nestedContainer(keyedBy: Plain.self).decode(Int.self, forKey: .k)
                kelvin = try array.nestedContainer(keyedBy: Kelvin.self).decodeIfPresent(Int.self, forKey: .k)
            }
        }
        let pair = try BPlistDecoder.decode(Pair.self, from: Self.encode([["K": 1], ["K": 2]]))
        #expect(pair.plain == 1 && pair.kelvin == nil)
    }

    @Test func nullAndTheNullMarker() throws {
        let data = try Self.encode([Box<String?>(v: nil), Box(v: "$null"), Box(v: "text")])
        // Foundation writes nil as "$null": an optional reads it as nil either way...
        #expect(try BPlistDecoder.decode([Box<String?>].self, from: data).map(\.v) == [nil, nil, "text"])
        // ...and a non-optional String holding it is that string, where Foundation fails.
        let strings = try Self.encode([Box(v: "$null")])
        #expect(try BPlistDecoder.decode([Box<String>].self, from: strings).map(\.v) == ["$null"])
        #expect(throws: DecodingError.self) { try PropertyListDecoder().decode([Box<String>].self, from: strings) }
    }

    // MARK: - Damaged and hostile input

    @Test func everyTruncationIsRefusedNamingAByte() throws {
        let data = try Self.encode((0..<20).map(Self.row))
        for length in stride(from: 0, to: data.count, by: max(1, data.count / 400)) {
            #expect(throws: DecodingError.self, "cut at \(length)") {
                _ = try BPlistDecoder.decode([Row].self, from: data.prefix(length))
            }
        }
        do {
            _ = try BPlistDecoder.decode([Row].self, from: data.prefix(data.count - 1))
            Issue.record("a truncated file decoded")
        } catch let DecodingError.dataCorrupted(context) {
            let syntax = try #require(context.underlyingError as? BPlistSyntaxError)
            #expect(syntax.description.contains("at byte"))
        }
    }

    @Test func bitFlipsNeverCrash() throws {
        let rows = (0..<12).map(Self.row)
        let data = try Self.encode(rows)
        var refused = 0, changed = 0
        for position in 0..<data.count {
            for bit in [0, 3, 7] {
                var flipped = data
                flipped[position] ^= UInt8(1 << bit)
                do {
                    if try BPlistDecoder.decode([Row].self, from: flipped) != rows { changed += 1 }
                } catch {
                    refused += 1
                    #expect(error is DecodingError)
                }
            }
        }
        // Most flips break the table or a type; some change a value (a byte of a string).
        #expect(refused > data.count)
        #expect(changed > 0)
    }

    /// An array holding itself, read as a type that nests without end.
    @Test func aCycleIsRefusedNotFollowed() throws {
        final class Deep: Decodable {
            let children: [Deep]
            init(from decoder: any Decoder) throws {
                var container = try decoder.unkeyedContainer()
                var children: [Deep] = []
                while !container.isAtEnd { children.append(try container.decode(Deep.self)) }
                self.children = children
            }
        }
        // bplist00, object 0 at offset 8: an array (0xA1) of one reference, to object 0.
        var bytes = Array("bplist00".utf8) + [0xA1, 0x00]
        let tableOffset = bytes.count
        bytes += [0x08]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, UInt8(tableOffset)]
        #expect {
            _ = try BPlistDecoder.decode(Deep.self, from: Data(bytes))
        } throws: { error in
            guard case .dataCorrupted(let context) = error as? DecodingError else { return false }
            return context.debugDescription.contains("nests deeper than")
        }
    }

    @Test func hugeDeclaredSizesAreRefusedBeforeAnyAllocation() throws {
        // A string object claiming 2^62 characters in a 50-byte file.
        var bytes = Array("bplist00".utf8) + [0x5F, 0x13, 0x40, 0, 0, 0, 0, 0, 0, 0]
        let tableOffset = bytes.count
        bytes += [0x08]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, UInt8(tableOffset)]
        #expect {
            _ = try BPlistDecoder.decode(String.self, from: Data(bytes))
        } throws: { error in
            guard case .dataCorrupted(let context) = error as? DecodingError,
                  let syntax = context.underlyingError as? BPlistSyntaxError else { return false }
            return syntax.offset == 9 && syntax.reason.contains("exceeds the file")
        }
    }
}
