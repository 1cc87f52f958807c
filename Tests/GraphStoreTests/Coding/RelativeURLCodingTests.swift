import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// A URL with a base reads back `==` from our JSON (its own `Codable` form,
/// `{"relative": …, "base": …}`, where `JSONEncoder` writes its absolute string and loses the
/// base), while a URL without one keeps `JSONEncoder`'s exact text; the generic values convert
/// the form between JSON and property lists.
@Suite struct RelativeURLCodingTests {
    typealias Models = RelativeURLModels

    struct Holder: Codable, Equatable {
        var url: URL
        var optional: URL?
        var array: [URL]
        var byName: [String: URL]
    }

    static func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    @Test func aURLWithABaseIsWrittenInItsCodableForm() throws {
        #expect(Self.text(try FastJSONEncoder.encode(Models.relative))
            == #"{"relative":"sub\/file.txt","base":"https:\/\/a.example\/dir\/"}"#)
        #expect(Self.text(try FastJSONEncoder.encode([Models.relative]))
            == #"[{"relative":"sub\/file.txt","base":"https:\/\/a.example\/dir\/"}]"#)
    }

    /// Existing files and outside readers see no change: the text `JSONEncoder` writes.
    @Test func aURLWithoutABaseKeepsJSONEncodersText() throws {
        for url in Models.urls where url.baseURL == nil {
            let holder = Holder(url: url, optional: url, array: [url], byName: ["k": url])
            #expect(try FastJSONEncoderTestKit.sortedText(FastJSONEncoder.encode(holder))
                == FastJSONEncoderTestKit.sortedText(SnapshotCodec.makeJSONEncoder().encode(holder)))
            #expect(Self.text(try FastJSONEncoder.encode(url)) == Self.text(try SnapshotCodec.makeJSONEncoder().encode(url)))
        }
    }

    @Test(arguments: RelativeURLModels.urls)
    func everyURLReadsBackEqual(url: URL) throws {
        let holder = Holder(url: url, optional: url, array: [url, Models.relative], byName: ["k": url])
        let decoded = try FastJSONDecoder.decode(Holder.self, from: FastJSONEncoder.encode(holder))
        #expect(decoded == holder)
        #expect(decoded.url.baseURL == url.baseURL && decoded.url.relativeString == url.relativeString)
        #expect(try FastJSONDecoder.decode(URL.self, from: FastJSONEncoder.encode(url)) == url)
    }

    /// What `JSONEncoder` wrote (a string) and what `URL.encode(to:)` writes through it (a base
    /// nested once more, or none) both read.
    @Test func theDecoderReadsEveryShape() throws {
        #expect(try FastJSONDecoder.decode(URL.self, from: Data(#""https:\/\/a.example\/dir\/sub\/file.txt""#.utf8))
            == URL(string: "https://a.example/dir/sub/file.txt"))
        #expect(try FastJSONDecoder.decode(URL.self, from: Data(#"{"base":"https://a.example/dir/","relative":"sub/file.txt"}"#.utf8))
            == Models.relative)
        #expect(try FastJSONDecoder.decode(URL.self, from: Data(#"{"relative":"https://b.example/"}"#.utf8)) == URL(string: "https://b.example/"))
        let nested = #"{"relative":"x","base":{"relative":"y/","base":"https://a.example/"}}"#
        #expect(try FastJSONDecoder.decode(URL.self, from: Data(nested.utf8))
            == URL(string: "x", relativeTo: URL(string: "y/", relativeTo: URL(string: "https://a.example/")!)!))
        // JSONEncoder's own output of `URL.encode(to:)` reads as the URL.
        struct ViaCodable: Encodable {
            let url: URL
            func encode(to encoder: any Encoder) throws { try url.encode(to: encoder) }
        }
        #expect(try FastJSONDecoder.decode(URL.self, from: JSONEncoder().encode(ViaCodable(url: Models.relative))) == Models.relative)
    }

    @Test func aDamagedURLObjectIsRefusedAtItsPath() throws {
        #expect(throws: DecodingError.self) { try FastJSONDecoder.decode(Holder.self, from: Data(#"{"url":{"base":"https://a/"},"array":[],"byName":{}}"#.utf8)) }
        #expect(throws: DecodingError.self) { try FastJSONDecoder.decode(Holder.self, from: Data(#"{"url":{"relative":1},"array":[],"byName":{}}"#.utf8)) }
    }

    /// Through the generic values: the property-list shape (base a dictionary too) and JSON's
    /// (base a string) turn into each other, bases nested to any depth.
    @Test func theGenericShapesConvertBothWays() {
        let propertyList: SnapshotValue = .object([
            "relative": .string("x"),
            "base": .object(["relative": .string("y/"), "base": .object(["relative": .string("https://a.example/")])]),
        ])
        let json: SnapshotValue = .object([
            "relative": .string("x"), "base": .object(["relative": .string("y/"), "base": .string("https://a.example/")]),
        ])
        #expect(propertyList.propertyListURLInJSONShape == json)
        #expect(json.jsonURLInPropertyListShape == propertyList)
        #expect(SnapshotValue.object(["relative": .string("https://a.example/")]).propertyListURLInJSONShape == .string("https://a.example/"))
        #expect(SnapshotValue.string("https://a.example/").jsonURLInPropertyListShape == .object(["relative": .string("https://a.example/")]))
        // JSON's readers take the string "NaN" for a double: as a URL it is the string again.
        #expect(SnapshotValue.double(.nan).jsonURLInPropertyListShape == .object(["relative": .string("NaN")]))
        #expect(SnapshotValue.object(["relative": .double(-.infinity), "base": .string("https://a.example/")]).jsonURLInPropertyListShape
            == .object(["relative": .string("-Infinity"), "base": .object(["relative": .string("https://a.example/")])]))
        // Not a URL: another key, or a base that is none.
        #expect(SnapshotValue.object(["relative": .string("x"), "other": .string("y")]).propertyListURLInJSONShape == nil)
        #expect(SnapshotValue.object(["relative": .string("x"), "base": .integer(1)]).jsonURLInPropertyListShape == nil)
    }

    /// The probe names the URL, not its members: no `link.relative` or `link.base` taken for a
    /// string field, whatever the URL holds.
    @Test func theProbeNamesAURLWithABaseAsAURL() {
        let types = FieldTypeProbe.fieldTypes(of: [Models.link(0)])
        #expect(types["link"] == "url" && types["origin"] == "url" && types["links[]"] == "url")
        #expect(types["place.home"] == "url" && types["place.mirror"] == "url")
        #expect(!types.keys.contains { $0.hasSuffix(".relative") || $0.hasSuffix(".base") })
        #expect(FieldTypeProbe.fieldTypes(of: Models.links.map { $0 as any Entity }) == FieldTypeProbe.fieldTypes(of: [Models.link(3)]))
    }
}
