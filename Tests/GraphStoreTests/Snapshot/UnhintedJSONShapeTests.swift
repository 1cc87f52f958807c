import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// A property list converted from JSON holds dates, data, URLs, decimals and `"NaN"` strings in
/// their JSON shapes where the snapshot's type hints did not name them: a nested value inside an
/// optional struct that was `nil`, or inside an enum case no object used, in every object the
/// hints sampled. The app's property-list decoder reads those shapes where its types ask for
/// them, so the converted file opens with every value.
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
        let order0 = try #require(converted.entities[0].objects.first { $0["id"] == .integer(0) })
        #expect(order0["detail"]?["link"] == .string("https://example.com/0?q=1"))
        #expect(order0["detail"]?["label"]?.isNaNDouble == true)

        let container = try GraphContainer(for: [Order.self], store: .file(plist, format: .binaryPropertyList))
        #expect(try container.mainContext.fetch(FetchDescriptor<Order>(sortBy: [SortDescriptor(\.id)])) == Self.orders)
        try await container.close()
    }

    /// Where the type does not ask for one of those values, a JSON shape is still refused.
    @Test func aNumberIsNoStringOrURLWhereTheTypeAsksForOne() throws {
        struct Texts: Codable { var text: String }
        struct Links: Codable { var link: URL }
        struct Blobs: Codable { var blob: Data }
        struct Prices: Codable { var price: Decimal }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        #expect(throws: DecodingError.self) { try BPlistDecoder.decode(Texts.self, from: try encoder.encode(["text": 1.5])) }
        #expect(throws: DecodingError.self) { try BPlistDecoder.decode(Links.self, from: try encoder.encode(["link": 1.5])) }
        #expect(throws: DecodingError.self) { try BPlistDecoder.decode(Blobs.self, from: try encoder.encode(["blob": "not base64!"])) }
        #expect(throws: DecodingError.self) { try BPlistDecoder.decode(Prices.self, from: try encoder.encode(["price": Double.nan])) }
        // The JSON shapes themselves read.
        #expect(try BPlistDecoder.decode(Texts.self, from: try encoder.encode(["text": -Double.infinity])).text == "-Infinity")
        #expect(try BPlistDecoder.decode(Prices.self, from: try encoder.encode(["price": 0.1])).price == Decimal(string: "0.1")!)
    }
}

extension SnapshotValue {
    fileprivate var isNaNDouble: Bool {
        if case .double(let number) = self { return number.isNaN }
        return false
    }
}
