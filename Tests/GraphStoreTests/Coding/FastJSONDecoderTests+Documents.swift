import Foundation
import Testing

@testable import GraphStore
@testable import GraphStoreCoding
import GraphStoreTestSupport

extension FastJSONDecoderTests {
    // MARK: - Keys

    struct Accented: Codable {
        var é: Int  // precomposed U+00E9
    }

    struct Kelvin: Codable {
        var value: Int
        enum CodingKeys: String, CodingKey { case value = "\u{212A}" }  // KELVIN SIGN, canonically "K"
    }

    struct ManyFields: Codable {
        var a: Int, b: String?, c: Double, d: [Int], e: Bool?, f: Int
    }

    @Test func keysMatchAsSwiftComparesStrings() {
        for json in [#"{"é":1}"#, "{\"e\u{301}\":2}", #"{"e\u0301":3}"#, #"{"\u00e9":4}"#, #"{"e":5}"#, "{\"e\u{301}\":6,\"é\":7}"] {
            Self.expectSame(Accented.self, json)
        }
        for json in [#"{"K":1}"#, "{\"\u{212A}\":2}", #"{"k":3}"#, #"{"a":0,"K":4}"#] {
            Self.expectSame(Kelvin.self, json)
        }
    }

    @Test func membersInAnyOrderWithDuplicatesAndExtras() {
        for json in [
            #"{"a":1,"b":"x","c":1.5,"d":[1],"e":true,"f":2}"#,
            #"{"f":2,"e":true,"d":[1],"c":1.5,"b":"x","a":1}"#,
            #"{"z":0,"c":1.5,"a":1,"y":[{"a":9}],"f":2,"d":[]}"#,
            #"{"a":1,"c":1.5,"d":[1],"f":2,"a":7,"f":8}"#,
            #"{"a":1,"b":null,"c":1.5,"d":[1],"e":null,"f":2}"#,
            #"{"a":1,"c":1.5,"d":[1]}"#,
            #"{"a":1,"b":5,"c":1.5,"d":[1],"f":2}"#,
        ] {
            Self.expectSame(ManyFields.self, json)
            Self.expectSame([ManyFields].self, "[\(json),\(json)]")
        }
    }

    // MARK: - Containers used by hand

    /// Records what a decoder's containers report and throw, as text to compare.
    struct Probe: Codable {
        var log: [String]

        enum Keys: String, CodingKey { case a, b, list, nested, missing, `super` }

        init(from decoder: any Decoder) throws {
            var log: [String] = []
            func note(_ label: String, _ body: () throws -> String) {
                do { log.append("\(label): \(try body())") } catch { log.append("\(label): \(FastJSONDecoderTests.describe(error))") }
            }
            let keyed = try decoder.container(keyedBy: Keys.self)
            note("allKeys") { keyed.allKeys.map(\.stringValue).sorted().joined(separator: ",") }
            note("contains a") { "\(keyed.contains(.a))" }
            note("contains missing") { "\(keyed.contains(.missing))" }
            note("decodeNil a") { "\(try keyed.decodeNil(forKey: .a))" }
            note("decodeNil missing") { "\(try keyed.decodeNil(forKey: .missing))" }
            note("decodeNil b") { "\(try keyed.decodeNil(forKey: .b))" }
            note("nested missing") { "\(try keyed.nestedContainer(keyedBy: Keys.self, forKey: .missing).allKeys.count)" }
            note("nested a") { "\(try keyed.nestedContainer(keyedBy: Keys.self, forKey: .a).codingPath.count)" }
            note("super") { "\(try keyed.superDecoder().singleValueContainer().decodeNil())" }
            note("super a") { "\(try keyed.superDecoder(forKey: .a).codingPath.map(\.stringValue))" }
            note("super b int") { "\(try keyed.superDecoder(forKey: .b).singleValueContainer().decode(Int.self))" }
            note("nested object") {
                let nested = try keyed.nestedContainer(keyedBy: Keys.self, forKey: .nested)
                return "\(nested.codingPath.map(\.stringValue)) \(try nested.decode(Int.self, forKey: .a)) \(try nested.decode(String.self, forKey: .b))"
            }
            note("list") {
                var list = try keyed.nestedUnkeyedContainer(forKey: .list)
                var parts = ["count \(list.count ?? -1)"]
                parts.append("nil \(try list.decodeNil())")
                parts.append("nil \(try list.decodeNil())")
                parts.append("int \(try list.decode(Int.self)) at \(list.currentIndex)")
                parts.append("int \(try list.decode(Int.self)) at \(list.currentIndex)")
                parts.append("string? \(String(describing: try list.decodeIfPresent(String.self)))")
                var inner = try list.nestedUnkeyedContainer()
                parts.append("inner \(inner.codingPath.map(\.stringValue)) \(try inner.decode(Int.self))")
                let object = try list.nestedContainer(keyedBy: Keys.self)
                parts.append("object \(object.codingPath.map(\.stringValue)) \(try object.decode(Int.self, forKey: .a))")
                let sup = try list.superDecoder()
                parts.append("super \(sup.codingPath.map(\.stringValue)) \(try sup.singleValueContainer().decode(Bool.self))")
                parts.append("atEnd \(list.isAtEnd) \(list.currentIndex)")
                parts.append("past end optional \(String(describing: try list.decodeIfPresent(Int.self))) \(list.currentIndex)")
                do { _ = try list.decode(Int.self) } catch { parts.append(FastJSONDecoderTests.describe(error)) }
                do { _ = try list.decodeNil() } catch { parts.append(FastJSONDecoderTests.describe(error)) }
                do { _ = try list.nestedUnkeyedContainer() } catch { parts.append(FastJSONDecoderTests.describe(error)) }
                do { _ = try list.superDecoder() } catch { parts.append(FastJSONDecoderTests.describe(error)) }
                return parts.joined(separator: "; ")
            }
            note("list as keyed") { "\(try keyed.nestedContainer(keyedBy: Keys.self, forKey: .list))" }
            note("a as unkeyed") { "\(try keyed.nestedUnkeyedContainer(forKey: .a).count ?? -1)" }
            note("b as unkeyed") { "\(try keyed.nestedUnkeyedContainer(forKey: .b).count ?? -1)" }
            note("single on object") { "\(try decoder.singleValueContainer().decode(Int.self))" }
            note("unkeyed on object") { "\(try decoder.unkeyedContainer().count ?? -1)" }
            note("user info") { "\(decoder.userInfo.count)" }
            self.log = log
        }
    }

    @Test func containersUsedByHandLikeJSONDecoder() {
        let json = #"{"a":null,"b":7,"nested":{"a":1,"b":"two"},"list":[null,1,2,null,[3],{"a":4},true]}"#
        Self.expectSame(Probe.self, json)
        Self.expectSame([Probe].self, "[\(json),\(json)]")
        Self.expectSame(Probe.self, #"{"a":{},"b":null,"super":5,"list":[]}"#)
    }

    // MARK: - Documents that are not JSON

    @Test func invalidDocumentsAreDataCorruptedWithTheOffset() throws {
        for (json, offset) in [("{\"v\":1", 6), ("{\"v\":tru}", 8), ("", 0), ("{\"v\":\"\\ud800\"}", 6), ("{\"v\":1} {}", 8)] {
            do {
                _ = try FastJSONDecoder.decode(Box<Int>.self, from: Data(json.utf8))
                Issue.record("\(json) decoded")
            } catch DecodingError.dataCorrupted(let context) {
                #expect(context.codingPath.isEmpty && context.debugDescription == "The given data was not valid JSON.")
                #expect((context.underlyingError as? FastJSONSyntaxError)?.offset == offset, "\(json): \(String(describing: context.underlyingError))")
            }
        }
    }

    @Test func byteOrderMarkAndUTF16AreReadAsJSONDecoderReadsThem() throws {
        let text = #"{"v":"héllo 😀"}"#
        var inputs = [Data([0xEF, 0xBB, 0xBF] + Array(text.utf8))]
        for encoding: String.Encoding in [.utf16BigEndian, .utf16LittleEndian, .utf32BigEndian, .utf32LittleEndian, .utf16] {
            inputs.append(try #require(text.data(using: encoding)))
        }
        for input in inputs {
            #expect(try FastJSONDecoder.decode(Box<String>.self, from: input).v == "héllo 😀")
            #expect(Self.fastDecoder(Box<String>.self, input) == Self.jsonDecoder(Box<String>.self, input))
        }
    }

    // MARK: - Lifetimes and threads

    /// A decoder kept by the decoded value, used after the decoding returned.
    final class Keeper: Decodable, @unchecked Sendable {
        let decoder: any Decoder
        init(from decoder: any Decoder) throws { self.decoder = decoder }
    }

    struct KeptContainer: Decodable {
        let container: KeyedDecodingContainer<StringCodingKey>
        init(from decoder: any Decoder) throws { container = try decoder.container(keyedBy: StringCodingKey.self) }
    }

    @Test func decodersAndContainersOutliveTheBytes() throws {
        var data = Data(#"{"name":"kept after the decoding","n":[1,2,3]}"#.utf8)
        let keeper = try FastJSONDecoder.decode(Keeper.self, from: data)
        let kept = try FastJSONDecoder.decode(KeptContainer.self, from: data)
        data.resetBytes(in: 0..<data.count)
        let container = try keeper.decoder.container(keyedBy: StringCodingKey.self)
        #expect(try container.decode(String.self, forKey: StringCodingKey("name")) == "kept after the decoding")
        #expect(try kept.container.decode([Int].self, forKey: StringCodingKey("n")) == [1, 2, 3])
    }

    struct Item: Codable, Equatable {
        var id: Int
        var name: String
        var when: Date
        var tags: [UUID]
    }

    /// Elements that fail, in either half of a large array: the same error as decoding in
    /// order, the first one in the array.
    @Test func largeArraysDecodeTheSameOnTwoThreads() throws {
        let count = ArraySpeculation.minimumElements * 2 + 11
        let items = (0..<count).map { Item(id: $0, name: "item \($0)", when: Date(timeIntervalSinceReferenceDate: Double($0) * 1.5), tags: [UUID()]) }
        let json = try SnapshotCodec.makeJSONEncoder().encode(Box(v: items))
        let expected = Self.jsonDecoder(Box<[Item]>.self, json)
        #expect(Self.fastDecoder(Box<[Item]>.self, json, parallel: true) == expected)
        #expect(try FastJSONDecoder.decode(Box<[Item]>.self, from: json, parallel: true).v == items)

        var text = String(decoding: json, as: UTF8.self)
        for id in [count - 1, count / 2, count / 2 + 1, 3] {
            text = text.replacingOccurrences(of: "\"id\":\(id),", with: "\"id\":\"\(id)\",")
            let damaged = Data(text.utf8)
            let sequential = Self.jsonDecoder(Box<[Item]>.self, damaged)
            #expect(Self.fastDecoder(Box<[Item]>.self, damaged, parallel: true) == sequential, "id \(id)")
            #expect(Self.fastDecoder(Box<[Item]>.self, damaged, parallel: false) == sequential, "id \(id)")
        }
    }

    /// A type that stops reading its array midway, or reads its second half differently.
    struct HalfReader: Decodable {
        var read: [Int]
        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            var read: [Int] = []
            let total = container.count ?? 0
            while !container.isAtEnd && read.count < total * 3 / 4 {
                if container.currentIndex == total * 2 / 3, try container.decodeNil() { continue }
                read.append(try container.decode(Item.self).id)
            }
            if !container.isAtEnd { read.append(try container.decode(Box<Int>.self).v) }
            self.read = read
        }
    }

    @Test func speculationIsDroppedWhenTheCallerDoesSomethingElse() throws {
        let count = ArraySpeculation.minimumElements * 2
        var elements = (0..<count).map { #"{"id":\#($0),"name":"n","when":1.5,"tags":[]}"# }
        elements[count * 3 / 4] = #"{"v":-1,"id":0,"name":"n","when":1.5,"tags":[]}"#
        let json = Data("[\(elements.joined(separator: ","))]".utf8)
        let decoded = try FastJSONDecoder.decode(HalfReader.self, from: json, parallel: true)
        #expect(decoded.read == Array(0..<(count * 3 / 4)) + [-1])
        // A null two thirds in: the reader skips it, then fails on an element without "v".
        let withNull = Data("[\(elements.enumerated().map { $0.offset == count * 2 / 3 ? "null" : $0.element }.joined(separator: ","))]".utf8)
        func outcome(parallel: Bool) -> String {
            do { return "\(try FastJSONDecoder.decode(HalfReader.self, from: withNull, parallel: parallel).read)" } catch { return Self.describe(error) }
        }
        #expect(outcome(parallel: true) == outcome(parallel: false))
        #expect(outcome(parallel: false).hasPrefix("keyNotFound(v) at [Index \(count * 3 / 4 + 1)#\(count * 3 / 4 + 1)]"))
    }
}
