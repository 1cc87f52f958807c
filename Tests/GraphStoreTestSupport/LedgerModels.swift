import Foundation
import GraphStore

/// A model of dictionaries whose values JSON, property lists and SQLite's `json` columns hold
/// in different shapes (dates, data, URLs, decimals, and strings JSON also writes for
/// non-finite doubles), under keys that differ from object to object, so that the keys a type
/// hint's sample holds never cover them all.
public enum LedgerModels {
    public enum Currency: String, Codable, CodingKeyRepresentable, Hashable, Sendable {
        case gbp, eur
    }

    public struct Ledger: Entity, Equatable {
        public var id: Int
        public var prices: [String: Decimal]
        public var visits: [Int: Date]
        public var links: [String: URL]
        public var notes: [String: String]
        public var blobs: [String: [Data]]
        public var rates: [Currency: Decimal]
        public static var entityName: String { "Ledger" }

        public init(
            id: Int, prices: [String: Decimal], visits: [Int: Date], links: [String: URL], notes: [String: String], blobs: [String: [Data]],
            rates: [Currency: Decimal]
        ) {
            self.id = id
            self.prices = prices
            self.visits = visits
            self.links = links
            self.notes = notes
            self.blobs = blobs
            self.rates = rates
        }
    }

    /// 150 ledgers, each with its own key (`k<id>`); the notes cycle through `"NaN"`,
    /// `"Infinity"`, `"-Infinity"` and `"plain"`; every other ledger has an empty `rates`.
    public static let ledgers: [Ledger] = (0..<150).map { n in
        let posix = Locale(identifier: "en_US_POSIX")
        let key = "k\(n)"
        return Ledger(
            id: n, prices: [key: Decimal(string: "\(n).125", locale: posix)!],
            visits: [n: Date(timeIntervalSinceReferenceDate: 700_000_000.25 + Double(n))],
            links: [key: URL(string: "https://example.com/\(n)")!],
            notes: [key: ["NaN", "Infinity", "-Infinity", "plain"][n % 4]],
            blobs: [key: [Data([UInt8(n % 256), 1])]],
            rates: n % 2 == 0 ? [.gbp: Decimal(n)] : [:])
    }
}
