import Foundation
import Testing

@testable import GraphStore
@testable import GraphStoreCoding
import GraphStoreTestSupport

/// The snapshot's JSON decoder gives what `JSONDecoder` gives with the snapshot's strategies:
/// the same values to the bit and the same errors (case, coding path, message), except for
/// the documented differences, checked here too.
@Suite struct FastJSONDecoderTests {
    // MARK: - Comparing with JSONDecoder

    /// An error as comparable text: case, type, coding path (string and int values) and message.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "not a DecodingError: \(error)" }
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { "\($0.stringValue)#\($0.intValue.map(String.init) ?? "-")" }.joined(separator: "/")
        }
        switch error {
        case .typeMismatch(let type, let context): return "typeMismatch(\(type)) at [\(path(context))]: \(context.debugDescription)"
        case .valueNotFound(let type, let context): return "valueNotFound(\(type)) at [\(path(context))]: \(context.debugDescription)"
        case .keyNotFound(let key, let context): return "keyNotFound(\(key.stringValue)) at [\(path(context))]: \(context.debugDescription)"
        case .dataCorrupted(let context): return "dataCorrupted at [\(path(context))]: \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    /// A value as comparable text: its JSON, keys sorted, which tells doubles apart to the bit
    /// (`-0` from `0`, every digit needed to read the same double back).
    static func canonical<T: Encodable>(_ value: T) -> String {
        let encoder = SnapshotCodec.makeJSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "unencodable \(value)"
    }

    enum Outcome: Equatable, CustomStringConvertible {
        case value(String)
        case error(String)
        var description: String {
            switch self {
            case .value(let text): "value \(text)"
            case .error(let text): "error \(text)"
            }
        }
    }

    static func outcome<T: Codable>(_ body: () throws -> T) -> Outcome {
        do { return .value(canonical(try body())) } catch { return .error(describe(error)) }
    }

    static func jsonDecoder<T: Codable>(_ type: T.Type, _ json: Data) -> Outcome {
        outcome { try SnapshotCodec.makeJSONDecoder().decode(T.self, from: json) }
    }

    static func fastDecoder<T: Codable>(_ type: T.Type, _ json: Data, parallel: Bool = false) -> Outcome {
        outcome { try FastJSONDecoder.decode(T.self, from: json, parallel: parallel) }
    }

    /// Expects both decoders to give the same value or the same error. One difference is
    /// documented: a number that does not fit its type is, for `JSONDecoder`, "not valid JSON"
    /// without a coding path; here it is refused at its path, naming the number.
    static func expectSame<T: Codable>(_ type: T.Type, _ json: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let data = Data(json.utf8)
        let expected = jsonDecoder(T.self, data)
        let actual = fastDecoder(T.self, data)
        if expected == .error("dataCorrupted at []: The given data was not valid JSON."), case .error(let text) = actual,
           text.hasPrefix("dataCorrupted at ["), text.contains(": Parsed JSON number <"), text.contains("> does not fit in ") {
            return
        }
        #expect(actual == expected, "\(T.self) from \(json)", sourceLocation: sourceLocation)
    }

    struct Box<V: Codable>: Codable {
        var v: V
    }

    // MARK: - Values

    enum Kind: String, Codable, CaseIterable {
        case text, photo, quote
    }

    enum Level: Int, Codable {
        case low = 1, high = 2
    }

    struct Nested: Codable {
        var names: [String]
        var ids: [UUID]
        var doubles: [Double]
        var maybe: [Int?]
        var scores: [String: Int]
        var kinds: [Kind]
    }

    /// One field of every type the decoder reads itself, and some it reads through their
    /// `init(from:)`.
    struct Everything: Codable {
        var int: Int, int8: Int8, int16: Int16, int32: Int32, int64: Int64
        var uint: UInt, uint8: UInt8, uint16: UInt16, uint32: UInt32, uint64: UInt64
        var int128: Int128, uint128: UInt128
        var double: Double, float: Float
        var bool: Bool
        var text: String
        var date: Date
        var data: Data
        var uuid: UUID
        var url: URL
        var optionalText: String?
        var optionalDate: Date?
        var optionalDouble: Double?
        var kind: Kind
        var level: Level
        var nested: Nested
        var intKeyed: [Int: String]
    }

    static let edgeDoubles: [Double] = [
        0, -0.0, 1, -1, 0.1, 1.0 / 3, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
        Double(bitPattern: 0x000F_FFFF_FFFF_FFFF), Double(bitPattern: 0x0000_5000_0000_0001), .leastNormalMagnitude,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .ulpOfOne, Double(1 << 53) + 2, Double(1 << 53) * 3,
        1e22, 1e23, 123456789.123456789, 790_000_037.5, -86_400.25, .infinity, -.infinity, .nan, .pi, 1e-7,
    ]

    static let edgeStrings: [String] = [
        "", "plain", "quote \" backslash \\ slash /", "controls \u{0}\u{1}\u{8}\u{9}\u{A}\u{C}\u{D}\u{1F}\u{7F}",
        "é e\u{301} Ω \u{2126} 中文 😀 👩‍👩‍👧", "\u{2028}\u{2029}\u{FEFF}\u{FFFF}\u{10FFFF}", String(repeating: "long ", count: 40),
        "Infinity", "NaN", "c0ffee00-0000-4000-8000-000000000001",
    ]

    static func randomString(_ generator: inout SplitMix64) -> String {
        if Int.random(in: 0..<3, using: &generator) == 0 { return edgeStrings.randomElement(using: &generator)! }
        let length = Int.random(in: 0..<30, using: &generator)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            let range: ClosedRange<UInt32> = [0...0x7F, 0...0x7F, 0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xFFFF, 0x10000...0x10FFFF].randomElement(using: &generator)!
            scalars.append(Unicode.Scalar(UInt32.random(in: range, using: &generator))!)
        }
        return String(scalars)
    }

    static func randomDouble(_ generator: inout SplitMix64) -> Double {
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: edgeDoubles.randomElement(using: &generator)!
        case 1: Double(bitPattern: generator.next())
        case 2: Double(Int.random(in: -1_000_000...1_000_000, using: &generator)) / 8
        default: Double.random(in: -1e9...1e9, using: &generator)
        }
    }

    static func randomEverything(_ generator: inout SplitMix64) -> Everything {
        func pick<T: FixedWidthInteger>(_ type: T.Type) -> T {
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: T.min
            case 1: T.max
            case 2: 0
            default: T.random(in: T.min...T.max, using: &generator)
            }
        }
        let urls = ["https://example.com/a?b=c#d", "file:///tmp/x%20y", "mailto:someone@example.com", "relative/path"]
        return Everything(
            int: pick(Int.self), int8: pick(Int8.self), int16: pick(Int16.self), int32: pick(Int32.self), int64: pick(Int64.self),
            uint: pick(UInt.self), uint8: pick(UInt8.self), uint16: pick(UInt16.self), uint32: pick(UInt32.self), uint64: pick(UInt64.self),
            int128: [Int128.min, Int128.max, 0, Int128(pick(Int64.self)) * 1_000_003].randomElement(using: &generator)!,
            uint128: [UInt128.max, 0, UInt128(pick(UInt64.self)) * 65_537].randomElement(using: &generator)!,
            double: randomDouble(&generator), float: Float(bitPattern: UInt32(truncatingIfNeeded: generator.next())),
            bool: Bool.random(using: &generator), text: randomString(&generator),
            date: Date(timeIntervalSinceReferenceDate: randomDouble(&generator)),
            data: Data((0..<Int.random(in: 0..<40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }),
            uuid: UUID(uuid: (0..<16).reduce(into: UUID().uuid) { uuid, index in
                withUnsafeMutableBytes(of: &uuid) { $0[index] = UInt8.random(in: 0...255, using: &generator) }
            }),
            url: URL(string: urls.randomElement(using: &generator)!)!,
            optionalText: Bool.random(using: &generator) ? nil : randomString(&generator),
            optionalDate: Bool.random(using: &generator) ? nil : Date(timeIntervalSinceReferenceDate: randomDouble(&generator)),
            optionalDouble: Bool.random(using: &generator) ? nil : randomDouble(&generator),
            kind: Kind.allCases.randomElement(using: &generator)!, level: Bool.random(using: &generator) ? .low : .high,
            nested: Nested(
                names: (0..<Int.random(in: 0..<4, using: &generator)).map { _ in randomString(&generator) },
                ids: (0..<Int.random(in: 0..<4, using: &generator)).map { _ in UUID() },
                doubles: (0..<Int.random(in: 0..<4, using: &generator)).map { _ in randomDouble(&generator) },
                maybe: (0..<Int.random(in: 0..<4, using: &generator)).map { _ in Bool.random(using: &generator) ? nil : pick(Int.self) },
                scores: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0..<24, using: &generator)).map { ("key\($0)-\(randomString(&generator))", $0) }),
                kinds: (0..<Int.random(in: 0..<3, using: &generator)).map { _ in Kind.allCases.randomElement(using: &generator)! }),
            intKeyed: [Int(pick(Int8.self)): randomString(&generator)])
    }

    /// Random values of every field type, written by `JSONEncoder` (with escapes for quotes,
    /// backslashes, slashes and control characters), read the same by both decoders.
    @Test func randomValuesDecodeLikeJSONDecoder() throws {
        var generator = SplitMix64(seed: 0x5EED)
        var values = (0..<400).map { _ in Self.randomEverything(&generator) }
        for (index, double) in Self.edgeDoubles.enumerated() {
            values[index].double = double
            values[index].date = Date(timeIntervalSinceReferenceDate: double)
            values[index].optionalDouble = double
            values[index].float = Float(double)
        }
        let json = try SnapshotCodec.makeJSONEncoder().encode(values)
        let expected = Self.jsonDecoder([Everything].self, json)
        guard case .value = expected else {
            Issue.record("JSONDecoder failed: \(expected)")
            return
        }
        #expect(Self.fastDecoder([Everything].self, json) == expected)
        #expect(Self.fastDecoder([Everything].self, json, parallel: true) == expected)
        // Pretty-printed: whitespace everywhere.
        let encoder = SnapshotCodec.makeJSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes]
        let pretty = try encoder.encode(values)
        #expect(Self.fastDecoder([Everything].self, pretty) == expected)
    }

    @Test func edgeValuesReadToTheBit() throws {
        let decoded = try FastJSONDecoder.decode(
            Box<[Double]>.self, from: Data(#"{"v":[5e-324,-0.0,-0,0,2.2250738585072011e-308,1.7976931348623157e308,"Infinity","-Infinity","NaN",0.1,4.9406564584124654e-324]}"#.utf8))
        let bits = decoded.v.map(\.bitPattern)
        #expect(bits == [1, 1 << 63, 1 << 63, 0, 0x000F_FFFF_FFFF_FFFF, 0x7FEF_FFFF_FFFF_FFFF, 0x7FF0_0000_0000_0000, 0xFFF0_0000_0000_0000, Double.nan.bitPattern, 0.1.bitPattern, 1])
        let integers = try FastJSONDecoder.decode(
            Box<[Int64]>.self, from: Data(#"{"v":[-9223372036854775808,9223372036854775807,-0,0,1.0,1e3,1.5e1,100e-2,9223372036854775807.0]}"#.utf8))
        #expect(integers.v == [.min, .max, 0, 0, 1, 1000, 15, 1, .max])
        #expect(try FastJSONDecoder.decode(Box<UInt64>.self, from: Data(#"{"v":18446744073709551615}"#.utf8)).v == .max)
        #expect(try FastJSONDecoder.decode(Box<UInt64>.self, from: Data(#"{"v":-0}"#.utf8)).v == 0)
        #expect(try FastJSONDecoder.decode(Box<Int128>.self, from: Data(#"{"v":-170141183460469231731687303715884105728}"#.utf8)).v == .min)
        #expect(try FastJSONDecoder.decode(Box<UInt128>.self, from: Data(#"{"v":340282366920938463463374607431768211455}"#.utf8)).v == .max)
        #expect(try FastJSONDecoder.decode(Box<Float>.self, from: Data(#"{"v":1e-45}"#.utf8)).v.bitPattern == 1)
    }

    // MARK: - Semantics, input by input

    @Test func integersLikeJSONDecoder() {
        for json in [
            #"{"v":1}"#, #"{"v":-1}"#, #"{"v":1.0}"#, #"{"v":1e3}"#, #"{"v":1E+2}"#, #"{"v":100e-2}"#, #"{"v":0.0e5}"#, #"{"v":-0}"#,
            #"{"v":9223372036854775807}"#, #"{"v":-9223372036854775808}"#, #"{"v":"1"}"#, #"{"v":null}"#, #"{"v":true}"#,
            #"{"v":[1]}"#, #"{"v":{}}"#, #"{}"#, #"{"v":1,"v":2}"#, #"{"w":1,"v":2,"v":3}"#,
        ] {
            Self.expectSame(Box<Int>.self, json)
            Self.expectSame(Box<Int64>.self, json)
            Self.expectSame(Box<Int?>.self, json)
        }
        for json in [#"{"v":127}"#, #"{"v":-128}"#, #"{"v":-0.0}"#] { Self.expectSame(Box<Int8>.self, json) }
        for json in [#"{"v":18446744073709551615}"#, #"{"v":-0}"#, #"{"v":-0.0}"#, #"{"v":0}"#] {
            Self.expectSame(Box<UInt64>.self, json)
            Self.expectSame(Box<UInt>.self, json)
        }
    }

    /// `JSONDecoder` reports a number that does not fit as "not valid JSON" without a path; this
    /// decoder says which number, where: the snapshot error then names the object.
    @Test func numbersThatDoNotFitAreRefusedWithTheirPath() {
        let cases: [(json: String, type: String, refusedByJSONDecoder: Bool)] = [
            (#"{"v":[1.5]}"#, "Int", true), (#"{"v":[9223372036854775808]}"#, "Int", true), (#"{"v":[1e19]}"#, "Int", true),
            (#"{"v":[-9223372036854775809]}"#, "Int", true), (#"{"v":[1e400]}"#, "Int", true),
            // JSONDecoder reads these through a Double, rounding them to integers (0, 1 and
            // 12345678901234567).
            (#"{"v":[1e-400]}"#, "Int", false), (#"{"v":[1.0000000000000001]}"#, "Int", false), (#"{"v":[12345678901234567.5]}"#, "Int", false),
        ]
        for (json, type, refusedByJSONDecoder) in cases {
            let data = Data(json.utf8)
            let number = json.dropFirst(6).dropLast(2)
            #expect(Self.fastDecoder(Box<[Int]>.self, data) == .error(
                "dataCorrupted at [v#-/Index 0#0]: Parsed JSON number <\(number)> does not fit in \(type)."), "\(json)")
            if refusedByJSONDecoder {
                #expect(Self.jsonDecoder(Box<[Int]>.self, data) == .error("dataCorrupted at []: The given data was not valid JSON."))
            }
        }
        for (type, json) in [("UInt64", #"{"v":[-1]}"#), ("UInt64", #"{"v":[18446744073709551616]}"#)] {
            #expect(Self.fastDecoder(Box<[UInt64]>.self, Data(json.utf8)) == .error(
                "dataCorrupted at [v#-/Index 0#0]: Parsed JSON number <\(json.dropFirst(6).dropLast(2))> does not fit in \(type)."))
        }
        #expect(Self.fastDecoder(Box<Int8>.self, Data(#"{"v":128}"#.utf8)) == .error("dataCorrupted at [v#-]: Parsed JSON number <128> does not fit in Int8."))
        #expect(Self.fastDecoder(Box<Double>.self, Data(#"{"v":1e400}"#.utf8)) == .error("dataCorrupted at [v#-]: Parsed JSON number <1e400> does not fit in Double."))
        #expect(Self.fastDecoder(Box<Double>.self, Data(#"{"v":-1e-400}"#.utf8)) == .error("dataCorrupted at [v#-]: Parsed JSON number <-1e-400> does not fit in Double."))
        #expect(Self.fastDecoder(Box<Float>.self, Data(#"{"v":1e39}"#.utf8)) == .error("dataCorrupted at [v#-]: Parsed JSON number <1e39> does not fit in Float."))
    }

    @Test func floatingPointLikeJSONDecoder() {
        for json in [
            #"{"v":5e-324}"#, #"{"v":-0.0}"#, #"{"v":"Infinity"}"#, #"{"v":"-Infinity"}"#, #"{"v":"NaN"}"#, #"{"v":"\u0049nfinity"}"#,
            #"{"v":"inf"}"#, #"{"v":1.7976931348623157e308}"#, #"{"v":2.2250738585072011e-308}"#, #"{"v":0.1}"#,
            #"{"v":123456789012345678901234567890}"#, #"{"v":1e22}"#, #"{"v":1e23}"#, #"{"v":9007199254740993}"#,
            #"{"v":-1.5e-10}"#, #"{"v":0.30000000000000004}"#, #"{"v":null}"#, #"{"v":true}"#, #"{"v":0e-400}"#,
            #"{"v":1.00000000000000011102230246251565404236316680908203125}"#, #"{"v":2.4703282292062328e-324}"#,
        ] {
            Self.expectSame(Box<Double>.self, json)
            Self.expectSame(Box<Double?>.self, json)
            Self.expectSame(Box<Float>.self, json)
            Self.expectSame(Box<Date>.self, json)
        }
    }

    @Test func stringsLikeJSONDecoder() {
        for json in [
            #"{"v":"a\"b\\c\/d\b\f\n\r\t\u0000\u00e9\u00E9\ud83d\ude00\uD83D\uDE00"}"#, #"{"v":"é"}"#, #"{"v":""}"#,
            #"{"v":1}"#, #"{"v":null}"#, #"{}"#, #"{"v":[]}"#, #"{"v":"\uffff\u2028"}"#,
        ] {
            Self.expectSame(Box<String>.self, json)
            Self.expectSame(Box<String?>.self, json)
            Self.expectSame(Box<[String]>.self, json)
        }
        for json in [#"{"v":true}"#, #"{"v":1}"#, #"{"v":null}"#, #"{"v":"true"}"#] {
            Self.expectSame(Box<Bool>.self, json)
            Self.expectSame(Box<Bool?>.self, json)
        }
    }

    @Test func foundationTypesLikeJSONDecoder() {
        for json in [#"{"v":"AAE="}"#, #"{"v":"AAE"}"#, #"{"v":""}"#, #"{"v":5}"#, #"{"v":null}"#, #"{"v":"A\u0041E="}"#, #"{"v":"A A="}"#] {
            Self.expectSame(Box<Data>.self, json)
        }
        for json in [
            #"{"v":"c0ffee00-0000-4000-8000-000000000001"}"#, #"{"v":"C0FFEE00-0000-4000-8000-00000000000A"}"#, #"{"v":"nope"}"#,
            #"{"v":"c0ffee00-+000-4000-8000-000000000001"}"#, #"{"v":"c0ffee00-0000-4000-8000-00000000000g"}"#,
            #"{"v":"\u00630ffee00-0000-4000-8000-000000000001"}"#, #"{"v":5}"#, #"{"v":null}"#, #"{"v":"c0ffee0000004000800000000000000001"}"#,
        ] {
            Self.expectSame(Box<UUID>.self, json)
            Self.expectSame(Box<UUID?>.self, json)
        }
        for json in [
            #"{"v":[]}"#, #"{"v":null}"#, #"{"v":{}}"#, #"{"v":["bad"]}"#, #"{"v":[5]}"#, #"{"v":[null]}"#,
            #"{"v":["c0ffee00-0000-4000-8000-000000000001","C0FFEE00-0000-4000-8000-000000000002"]}"#,
        ] {
            Self.expectSame(Box<[UUID]>.self, json)
        }
        for json in [#"{"v":"https://example.com/a?b=c"}"#, #"{"v":"https:\/\/example.com"}"#, #"{"v":5}"#, #"{"v":null}"#] {
            Self.expectSame(Box<URL>.self, json)
        }
        for json in [#"{"v":12.345}"#, #"{"v":-0.001}"#, #"{"v":1e10}"#, #"{"v":"1"}"#, #"{"v":null}"#] {
            Self.expectSame(Box<Decimal>.self, json)
        }
        for json in [#"{"v":800000000.125}"#, #"{"v":-86400.25}"#, #"{"v":"x"}"#, #"{"v":null}"#, #"{"v":"Infinity"}"#, #"{"v":[]}"#] {
            Self.expectSame(Box<Date>.self, json)
            Self.expectSame(Box<Date?>.self, json)
        }
    }

    @Test func collectionsAndEnumsLikeJSONDecoder() {
        for json in [#"{"v":[1,null,3]}"#, #"{"v":[]}"#, #"{"v":[null]}"#, #"{"v":["x"]}"#, #"{"v":{"a":1}}"#] {
            Self.expectSame(Box<[Int?]>.self, json)
            Self.expectSame(Box<[Int]>.self, json)
        }
        let many = "{" + (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"k7\":99}"
        for json in [#"{"v":{"a":1,"b":2,"a":3}}"#, #"{"v":{}}"#, #"{"v":{"\u0061":1,"a":2}}"#, "{\"v\":\(many)}", #"{"v":{"a":"x"}}"#] {
            Self.expectSame(Box<[String: Int]>.self, json)
        }
        for json in [#"{"v":{"1":"a","-2":"b"}}"#, #"{"v":{"1":"a","x":"b"}}"#] {
            Self.expectSame(Box<[Int: String]>.self, json)
        }
        for json in [#"{"v":"text"}"#, #"{"v":"nope"}"#, #"{"v":1}"#, #"{"v":null}"#] {
            Self.expectSame(Box<Kind>.self, json)
            Self.expectSame(Box<Kind?>.self, json)
        }
        for json in [#"{"v":2}"#, #"{"v":9}"#, #"{"v":"2"}"#] {
            Self.expectSame(Box<Level>.self, json)
        }
        for json in [#"[1,2]"#, #"{"a":1}"#, #"1"#, #""x""#, #"null"#, #"[]"#] {
            Self.expectSame([Int].self, json)
            Self.expectSame([String: Int].self, json)
            Self.expectSame(Int.self, json)
            Self.expectSame(String.self, json)
            Self.expectSame(Int?.self, json)
        }
    }
}
