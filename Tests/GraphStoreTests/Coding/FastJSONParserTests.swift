import Foundation
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// The strict RFC 8259 parser under the snapshot's JSON decoder: what it accepts, what it
/// refuses and at which byte, and the tape it builds.
@Suite struct FastJSONParserTests {
    /// Parses `text`'s UTF-8 bytes.
    static func parse(_ text: String, maxDepth: Int = FastJSONParser.defaultMaxDepth) throws(FastJSONSyntaxError) -> FastJSONDocument {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    static func parse(_ bytes: [UInt8], maxDepth: Int = FastJSONParser.defaultMaxDepth) throws(FastJSONSyntaxError) -> FastJSONDocument {
        let result: Result<FastJSONDocument, FastJSONSyntaxError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(FastJSONSyntaxError) {
                let document = try FastJSONParser.parse(buffer, maxDepth: maxDepth)
                document.takeOwnershipOfBytes()
                return .success(document)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The error parsing `bytes`, or `nil` when they parse.
    static func rejection(_ bytes: [UInt8], maxDepth: Int = FastJSONParser.defaultMaxDepth) -> FastJSONSyntaxError? {
        do {
            _ = try parse(bytes, maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - JSONTestSuite

    /// The suite's parser cases, shipped with the tests (`Fixtures/JSONTestSuite`).
    static let suiteDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/JSONTestSuite/test_parsing")

    /// Nicolas Seriot's JSONTestSuite: every `y_` document parses, every `n_` document is
    /// refused (with an offset inside or just past it); `i_` documents may go either way but
    /// must not crash.
    @Test func jsonTestSuite() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.suiteDirectory.path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(names.count == 318, "the suite's files are all there")
        var accepted: [String: Int] = [:], refused: [String: Int] = [:]
        for name in names {
            let bytes = Array(try Data(contentsOf: Self.suiteDirectory.appendingPathComponent(name)))
            let error = Self.rejection(bytes)
            let kind = String(name.prefix(2))
            if let error {
                refused[kind, default: 0] += 1
                #expect(error.offset >= 0 && error.offset <= bytes.count, "\(name): \(error)")
            } else {
                accepted[kind, default: 0] += 1
            }
            switch kind {
            case "y_": #expect(error == nil, "\(name) must parse: \(error.map(\.description) ?? "")")
            case "n_": #expect(error != nil, "\(name) must be refused")
            default: break
            }
        }
        #expect(accepted["y_"] == 95 && refused["y_"] == nil, "y_: \(accepted["y_"] ?? 0) accepted")
        #expect(refused["n_"] == 188 && accepted["n_"] == nil, "n_: \(refused["n_"] ?? 0) refused")
        // Accepted: huge and tiny numbers (refused only when decoded), 500 nested arrays.
        // Refused: invalid UTF-8, unpaired surrogates, UTF-16 and a byte order mark (the
        // decoder converts and skips those before parsing).
        #expect(accepted["i_"] == 11 && refused["i_"] == 24, "i_: \(accepted["i_"] ?? 0) accepted, \(refused["i_"] ?? 0) refused")
    }

    // MARK: - Refusals, each with its offset

    @Test(arguments: [
        ("", 0, "empty"),
        ("   ", 0, "no value"),
        ("{", 1, "ends inside an object"),
        ("[1,2", 4, "ends inside an array"),
        ("{\"a\":1,}", 7, "expected a string key"),
        ("{\"a\" 1}", 5, "expected ':'"),
        ("{\"a\":1 \"b\":2}", 7, "expected ',' or '}'"),
        ("[1 2]", 3, "expected ',' or ']'"),
        ("[1,]", 3, "cannot start a value"),
        ("[,1]", 1, "cannot start a value"),
        ("{1:2}", 1, "expected a string key"),
        ("\"abc", 4, "ends inside a string"),
        ("[01]", 2, "leading zero"),
        ("[-01]", 3, "leading zero"),
        ("[1.]", 3, "after the decimal point"),
        ("[.5]", 1, "cannot start a value"),
        ("[1e]", 3, "in the exponent"),
        ("[1e+]", 4, "in the exponent"),
        ("[-]", 2, "expected a digit"),
        ("[+1]", 1, "cannot start a value"),
        ("[1", 2, "ends inside an array"),
        ("-", 1, "ends inside a number"),
        ("\"a\u{01}b\"", 2, "control character"),
        ("\"tab\there\"", 4, "control character"),
        ("\"\\q\"", 1, "invalid escape"),
        ("\"\\u12G4\"", 5, "not a hex digit"),
        ("\"\\u12", 5, "ends inside a string"),
        ("\"\\uD800\"", 1, "high surrogate without"),
        ("\"\\uD800x\"", 1, "high surrogate without"),
        ("\"\\uD800\\n\"", 1, "high surrogate without"),
        ("\"\\uD800\\u0041\"", 1, "not a low surrogate"),
        ("\"\\uDC00\"", 1, "low surrogate without"),
        ("\"a\\uDFFF\\uD800\"", 2, "low surrogate without"),
        ("tru", 3, "ends inside the literal"),
        ("trUe", 2, "expected true"),
        ("nul", 3, "ends inside the literal"),
        ("[fals]", 5, "expected false"),
        ("[1] x", 4, "after the end"),
        ("{}{}", 2, "after the end"),
        ("NaN", 0, "cannot start a value"),
        ("[Infinity]", 1, "cannot start a value"),
        ("'a'", 0, "cannot start a value"),
        ("[1,2]]", 5, "after the end"),
    ])
    func refusalsCarryTheOffset(input: String, offset: Int, reason: String) {
        let error = Self.rejection(Array(input.utf8))
        #expect(error?.offset == offset, "\(input.debugDescription): \(error.map(\.description) ?? "parsed")")
        #expect(error?.reason.contains(reason) == true, "\(input.debugDescription): \(error.map(\.description) ?? "parsed")")
    }

    @Test(arguments: [
        ([0x22, 0xFF, 0x22], 1),             // never valid in UTF-8
        ([0x22, 0x80, 0x22], 1),             // a lone continuation byte
        ([0x22, 0xC0, 0x80, 0x22], 1),       // overlong NUL
        ([0x22, 0xC3, 0x22], 2),             // missing continuation byte
        ([0x22, 0xE0, 0x80, 0x80, 0x22], 2), // overlong three-byte form
        ([0x22, 0xED, 0xA0, 0x80, 0x22], 2), // an encoded surrogate (U+D800)
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 2), // beyond U+10FFFF
        ([0x22, 0xF0, 0x9F, 0x98], 4),       // truncated at the end of the document
        ([0x5B, 0xFF, 0x5D], 1),             // outside a string
        ([0xEF, 0xBB, 0xBF, 0x7B, 0x7D], 0), // a byte order mark (the decoder skips it first)
    ] as [([UInt8], Int)])
    func invalidUTF8IsRefusedWithTheOffset(bytes: [UInt8], offset: Int) {
        let error = Self.rejection(bytes)
        #expect(error?.offset == offset, "\(bytes): \(error.map(\.description) ?? "parsed")")
    }

    @Test func validUTF8Parses() throws {
        for text in ["\"é\"", "\"中文\"", "\"😀\"", "\"\u{10FFFF}\"", "\"\u{FFFF}\"", "\"\u{7FF}\u{800}\u{FFFD}\"", "{\"ключ\":\"значение\"}"] {
            let document = try Self.parse(text)
            let flagged = (0..<document.tokenCount).contains { document.token(at: $0).kind == .string && document.token(at: $0).tag & FastJSONFlag.nonASCII != 0 }
            #expect(flagged, "\(text)")
        }
    }

    // MARK: - Nesting

    @Test func nestingUpToTheLimitParsesAndDeeperIsRefused() throws {
        let limit = FastJSONParser.defaultMaxDepth
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(try Self.parse(deepest).tokenCount == limit)
        let objects = String(repeating: "{\"a\":", count: limit) + "1" + String(repeating: "}", count: limit)
        #expect(try Self.parse(objects).tokenCount == limit * 2 + 1)

        let tooDeep = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
        let error = Self.rejection(Array(tooDeep.utf8))
        #expect(error?.offset == limit)
        #expect(error?.reason.contains("nest deeper than \(limit) levels") == true)

        #expect(Self.rejection(Array("[[[1]]]".utf8), maxDepth: 2)?.offset == 2)
        #expect(Self.rejection(Array("[[1]]".utf8), maxDepth: 2) == nil)
    }

    /// A hundred thousand opening brackets are refused at the limit, without recursion.
    @Test func hugeNestingDoesNotCrash() {
        let error = Self.rejection(Array(repeating: UInt8(ascii: "["), count: 100_000))
        #expect(error?.offset == FastJSONParser.defaultMaxDepth)
        let objects = Array(String(repeating: "{\"a\":", count: 100_000).utf8)
        #expect(Self.rejection(objects)?.offset == FastJSONParser.defaultMaxDepth * 5)
    }

    // MARK: - The tape

    @Test func tapeHoldsValuesKeysCountsAndEnds() throws {
        let text = #"{"a":[1,-2.5e3,"x\n"],"b":{},"c":[],"d":true,"e":false,"f":null,"gé":"\u00e9"}"#
        let document = try Self.parse(text)
        let tokens = (0...document.tokenCount).map { document.token(at: $0) }
        #expect(document.tokenCount == 18)
        #expect(tokens[0].kind == .object && tokens[0].count == 7 && tokens[0].end == 18)
        #expect(tokens[0].tag & FastJSONFlag.slowKeys != 0)  // "gé" is not ASCII
        #expect(tokens[1].kind == .string && String(decoding: document.span(1), as: UTF8.self) == "a")
        #expect(tokens[2].kind == .array && tokens[2].count == 3 && tokens[2].end == 6)
        #expect(tokens[3].kind == .number && tokens[3].tag & FastJSONFlag.nonInteger == 0)
        #expect(tokens[4].kind == .number && tokens[4].tag & FastJSONFlag.nonInteger != 0 && tokens[4].tag & FastJSONFlag.negative != 0)
        #expect(String(decoding: document.span(4), as: UTF8.self) == "-2.5e3")
        #expect(tokens[5].kind == .string && tokens[5].tag & FastJSONFlag.escaped != 0)
        #expect(tokens[7].kind == .object && tokens[7].count == 0 && tokens[7].end == 8)
        #expect(tokens[9].kind == .array && tokens[9].count == 0 && tokens[9].end == 10)
        #expect(tokens[11].kind == .true && tokens[13].kind == .false && tokens[15].kind == .null)
        #expect(document.skip(2) == 6 && document.skip(3) == 4)
        // The missing-value token after the last one.
        #expect(document.missing == document.tokenCount && tokens[document.missing].kind == .null)
    }

    @Test func scalarsAtTheTopLevelAndWhitespaceParse() throws {
        for text in ["0", "-0", "1e-7", " \t\r\n\"x\" \n", "true", "null", "[]", "{}", " [ 1 , { \"a\" : [ ] } ] "] {
            _ = try Self.parse(text)
        }
    }

    @Test func duplicateAndEscapedKeysMarkTheObject() throws {
        func slow(_ text: String) throws -> Bool { try Self.parse(text).token(at: 0).tag & FastJSONFlag.slowKeys != 0 }
        #expect(try !slow(#"{"a":1,"b":2,"ab":3,"ba":4}"#))
        #expect(try slow(#"{"a":1,"b":2,"a":3}"#))
        #expect(try slow(#"{"abcdef":1,"abXXef":2,"abcdef":3}"#))
        #expect(try !slow(#"{"abcdef":1,"abXXef":2}"#))  // same fingerprint, different keys
        #expect(try slow(#"{"\u0061":1}"#))
        let many = "{" + (0...FastJSONParser.maxCheckedKeys).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        #expect(try slow(many))
    }

    /// Strings of every length around the 8-byte steps of the scanner, with a special byte at
    /// every position.
    @Test func stringScanningFindsEveryQuoteEscapeAndControlByte() throws {
        for length in 0..<40 {
            let plain = String(repeating: "a", count: length)
            let document = try Self.parse("[\"\(plain)\"]")
            #expect(document.token(at: 1).length == length)
            for position in 0..<length {
                var bytes = Array(plain.utf8)
                bytes[position] = 0x1F
                #expect(Self.rejection([0x22] + bytes + [0x22])?.offset == position + 1)
                bytes[position] = 0x5C
                bytes.insert(0x6E, at: position + 1)
                let escaped = try Self.parse([0x22] + bytes + [0x22])
                #expect(escaped.token(at: 0).tag & FastJSONFlag.escaped != 0 && escaped.token(at: 0).length == length + 1)
            }
        }
    }
}
