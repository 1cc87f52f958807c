import Foundation
import GraphStore

/// A model whose values JSON, property lists and SQLite hold in different shapes: a `URL` (a
/// string in JSON, `{"relative": …}` in a property list), a `Decimal` (a number, or its parts),
/// optional dates and data set only in the last objects (after those a header's type hints
/// sample), and a dictionary of a URL's property-list shape that is not a URL. Version 2 adds a
/// field.
public enum BookmarkModels {
    public struct V1: Entity, Equatable {
        public var id: Int
        public var link: URL
        public var price: Decimal
        public var visited: Date?
        public var icon: Data?
        public var links: [URL]
        public var attributes: [String: String]
        public var grid: [[URL]]
        public var prices: [String: Decimal]
        public static var entityName: String { "Bookmark" }
    }

    public struct V2: Entity, Equatable {
        public var id: Int
        public var link: URL
        public var price: Decimal
        public var visited: Date?
        public var icon: Data?
        public var links: [URL]
        public var attributes: [String: String]
        public var grid: [[URL]]
        public var prices: [String: Decimal]
        public var note: String
        public static var entityName: String { "Bookmark" }
    }

    public static let migrations = [SchemaMigration(from: 1, to: 2, [.addField("note", in: "Bookmark", default: .string(""))])]

    /// A hundred bookmarks: a decimal longer than a double holds (the first), zeros (a decimal of
    /// length 0 in a property list), dates and data only from the 90th on.
    public static let bookmarks: [V1] = (0..<100).map(bookmark)

    public static func bookmark(_ n: Int) -> V1 {
        let posix = Locale(identifier: "en_US_POSIX")
        let price: Decimal =
            n == 0 ? Decimal(string: "12345678901234567890.123456789", locale: posix)!
            : n % 10 == 5 ? 0 : Decimal(string: "\(n).25", locale: posix)!
        let visited: Date? = n >= 90 ? Date(timeIntervalSinceReferenceDate: 800_000_000.5 + Double(n)) : nil
        let icon: Data? = n >= 90 ? Data([UInt8(n), 0, 255]) : nil
        let links: [URL] = n % 3 == 0 ? [URL(string: "file:///tmp/\(n)")!] : []
        let attributes: [String: String] = n == 1 ? ["relative": "not a URL"] : [:]
        // Arrays of arrays, and decimals under dictionary keys the sampled objects lack.
        let grid: [[URL]] = n % 4 == 0 ? [[URL(string: "https://example.com/grid/\(n)")!], []] : []
        let prices: [String: Decimal] = n >= 95 ? ["GBP": Decimal(string: "\(n).5", locale: posix)!] : [:]
        return V1(
            id: n, link: URL(string: "https://example.com/\(n)?q=\(n)")!, price: price, visited: visited, icon: icon,
            links: links, attributes: attributes, grid: grid, prices: prices)
    }

    /// What version 2 reads from `bookmark`.
    public static func migrated(_ bookmark: V1) -> V2 {
        V2(
            id: bookmark.id, link: bookmark.link, price: bookmark.price, visited: bookmark.visited, icon: bookmark.icon,
            links: bookmark.links, attributes: bookmark.attributes, grid: bookmark.grid, prices: bookmark.prices, note: "")
    }
}
