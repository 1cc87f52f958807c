import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// A property list converted from JSON holds dates, data, URLs, decimals and `"NaN"` strings in
/// their JSON shapes where the snapshot's type hints did not name them: a nested value inside an
/// optional struct that was `nil`, or inside an enum case no object used, in every object the
/// hints sampled. The converted file's header says so (``SnapshotHeaderV1/jsonShapedValues``),
/// and the app's property-list decoder then reads those shapes where its types ask for them, so
/// the converted file opens with every value.
@Suite struct UnhintedJSONShapeTests {
    struct Detail: Codable, Sendable, Equatable {
        var when: Date
        var blob: Data
        var link: URL
        var based: URL
        var price: Decimal
        var label: String
    }

    enum Status: Codable, Sendable, Equatable {
        case open
        case shipped(at: Date, proof: Data)
    }

    struct Order: Entity, Equatable {
        var id: Int
        var detail: Detail?
        var status: Status
        var placed: Date
        var labels: [String]
    }

    static let base = URL(string: "https://example.com/dir/")!

    static let orders: [Order] = (0..<20).map { n in
        let posix = Locale(identifier: "en_US_POSIX")
        return Order(
            id: n,
            detail: n % 2 == 0 ? Detail(
                when: Date(timeIntervalSinceReferenceDate: 700_000_000.125 + Double(n)), blob: Data([UInt8(n), 0, 255]),
                link: URL(string: "https://example.com/\(n)?q=1")!, based: URL(string: "item/\(n)", relativeTo: base)!,
                price: Decimal(string: "\(n).1", locale: posix)!, label: ["NaN", "Infinity", "-Infinity", "plain"][n % 4]) : nil,
            status: n % 3 == 0 ? .shipped(at: Date(timeIntervalSinceReferenceDate: Double(n) * 1000), proof: Data([1, 2])) : .open,
            placed: Date(timeIntervalSinceReferenceDate: 600_000_000 + Double(n)), labels: n == 4 ? ["NaN", "x"] : [])
    }

    /// A JSON store of ``orders`` whose header names no field types, as if its sample had held
    /// none of the values above.
    static func unhintedJSONStore(in directory: TemporaryDirectory) async throws -> URL {
        let url = directory.file("orders.json")
        let container = try GraphContainer(for: [Order.self], store: .file(url, format: .json, compression: .none))
        container.mainContext.insert(contentsOf: orders)
        try container.mainContext.save()
        try await container.close()
        var document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var header = try #require(document["header"] as? [String: Any])
        header["fieldTypes"] = [String: Any]()
        document["header"] = header
        try JSONSerialization.data(withJSONObject: document).write(to: url)
        return url
    }

    @Test func aPropertyListConvertedWithoutHintsOpensWithEveryValue() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try await Self.unhintedJSONStore(in: directory)
        let plist = directory.file("orders.plist.gz")
        try GenericSnapshot.read(from: source).write(to: plist, format: .binaryPropertyList, compression: .gzip)
        // The values are there in their JSON shapes: a number for a nested date, a string for
        // a URL, a real for a "NaN" string.
        let converted = try GenericSnapshot.read(from: plist)
        #expect(converted.header.jsonShapedValues == true)
        let order0 = try #require(converted.entities[0].objects.first { $0["id"] == .integer(0) })
        #expect(order0["detail"]?["link"] == .string("https://example.com/0?q=1"))
        #expect(order0["detail"]?["label"]?.isNaNDouble == true)

        let container = try GraphContainer(for: [Order.self], store: .file(plist, format: .binaryPropertyList))
        #expect(try container.mainContext.fetch(FetchDescriptor<Order>(sortBy: [SortDescriptor(\.id)])) == Self.orders)
        try await container.close()
    }

    /// Decodes `T` from `value` written by `PropertyListEncoder`, accepting JSON shapes as in
    /// a file whose header says it may hold them.
    static func decodeAcceptingJSONShapes<T: Decodable>(_ type: T.Type, _ value: some Encodable) throws -> T {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let shapes = BPlistJSONShapes()
        shapes.accept()
        return try BPlistDecoder.decode(T.self, from: try encoder.encode(value), userInfo: [BPlistDecoder.jsonShapesKey: shapes])
    }

    /// Where the type does not ask for one of those values, a JSON shape is still refused, and
    /// a number that is no date, or no decimal, too.
    @Test func theJSONShapesReadOnlyWhereTheTypeAsksForThem() throws {
        struct Texts: Codable { var text: String }
        struct Links: Codable { var link: URL }
        struct Blobs: Codable { var blob: Data }
        struct Prices: Codable { var price: Decimal }
        struct Dates: Codable { var when: Date }
        #expect(throws: DecodingError.self) { try Self.decodeAcceptingJSONShapes(Texts.self, ["text": 1.5]) }
        #expect(throws: DecodingError.self) { try Self.decodeAcceptingJSONShapes(Links.self, ["link": 1.5]) }
        #expect(throws: DecodingError.self) { try Self.decodeAcceptingJSONShapes(Blobs.self, ["blob": "not base64!"]) }
        #expect(throws: DecodingError.self) { try Self.decodeAcceptingJSONShapes(Prices.self, ["price": Double.nan]) }
        #expect(throws: DecodingError.self) { try Self.decodeAcceptingJSONShapes(Dates.self, ["when": Double.nan]) }
        #expect(throws: DecodingError.self) { try Self.decodeAcceptingJSONShapes(Dates.self, ["when": -Double.infinity]) }
        // The JSON shapes themselves read, a decimal's digits exact.
        #expect(try Self.decodeAcceptingJSONShapes(Texts.self, ["text": -Double.infinity]).text == "-Infinity")
        #expect(try Self.decodeAcceptingJSONShapes(Prices.self, ["price": 0.1]).price == Decimal(string: "0.1")!)
        #expect(try Self.decodeAcceptingJSONShapes(Prices.self, ["price": UInt64.max]).price == Decimal(string: "18446744073709551615")!)
        #expect(try Self.decodeAcceptingJSONShapes(Dates.self, ["when": 7.5]).when == Date(timeIntervalSinceReferenceDate: 7.5))
        #expect(try Self.decodeAcceptingJSONShapes(Blobs.self, ["blob": "AAEC"]).blob == Data([0, 1, 2]))
    }

    /// Without the header's word, a property list reads as `PropertyListDecoder` reads it.
    @Test func withoutTheHeadersWordTheJSONShapesAreRefused() throws {
        struct Dates: Codable { var when: Date }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        #expect(throws: DecodingError.self) { try BPlistDecoder.decode(Dates.self, from: try encoder.encode(["when": 7.5])) }
        let notAccepted = BPlistJSONShapes()
        #expect(throws: DecodingError.self) {
            try BPlistDecoder.decode(Dates.self, from: try encoder.encode(["when": 7.5]), userInfo: [BPlistDecoder.jsonShapesKey: notAccepted])
        }
    }

    /// Types that try one type and fall back to another.
    enum Scalar: Codable, Equatable, Sendable {
        case text(String), number(Double)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) { self = .text(text) } else { self = .number(try container.decode(Double.self)) }
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            }
        }
    }

    enum Stamp: Codable, Equatable, Sendable {
        case date(Date), count(Int)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let date = try? container.decode(Date.self) { self = .date(date) } else { self = .count(try container.decode(Int.self)) }
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .date(let date): try container.encode(date)
            case .count(let count): try container.encode(count)
            }
        }
    }

    enum Payload: Codable, Equatable, Sendable {
        case bytes(Data), text(String)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let bytes = try? container.decode(Data.self) { self = .bytes(bytes) } else { self = .text(try container.decode(String.self)) }
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .bytes(let bytes): try container.encode(bytes)
            case .text(let text): try container.encode(text)
            }
        }
    }

    struct Cell: Entity, Equatable {
        var id: Int
        var value: Scalar
        var stamp: Stamp
        var payload: Payload
    }

    /// The app's own property-list store holds every value in its property-list shape and says
    /// nothing of JSON shapes: a type that tries one type and falls back to another reads back
    /// what it wrote (an infinite number stays a number, a count a count, text text).
    @Test func theAppsOwnPropertyListReadsBackExactly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("cells.plist")
        let cells = [Cell(id: 1, value: .number(.infinity), stamp: .count(5), payload: .text("abcd"))]
        let written = try GraphContainer(for: [Cell.self], store: .file(url, format: .binaryPropertyList, compression: .none))
        written.mainContext.insert(contentsOf: cells)
        try written.mainContext.save()
        try await written.close()
        #expect(try GenericSnapshot.read(from: url).header.jsonShapedValues == nil)
        let read = try GraphContainer(for: [Cell.self], store: .file(url, format: .binaryPropertyList, compression: .none))
        #expect(try read.mainContext.fetch(FetchDescriptor<Cell>()) == cells)
        try await read.close()
    }
}

extension SnapshotValue {
    fileprivate var isNaNDouble: Bool {
        if case .double(let number) = self { return number.isNaN }
        return false
    }
}
