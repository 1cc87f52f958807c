import Foundation
import GraphStore

/// A model whose `String` fields hold exactly what a JSON snapshot writes for a non-finite
/// `Double` (`"NaN"`, `"Infinity"`, `"-Infinity"`), beside `Double` fields that hold those
/// values, one of them optional and set only after the objects a header's type hints sample.
public enum NonFiniteModels {
    public struct Reading: Entity {
        public var id: Int
        public var label: String
        public var value: Double
        public var limit: Double?
        public static var entityName: String { "Reading" }

        public init(id: Int, label: String, value: Double, limit: Double? = nil) {
            self.id = id
            self.label = label
            self.value = value
            self.limit = limit
        }

        /// Whether `other` holds the same values, a NaN matching a NaN.
        public func matches(_ other: Reading) -> Bool {
            func same(_ a: Double?, _ b: Double?) -> Bool {
                switch (a, b) {
                case (nil, nil): true
                case let (a?, b?): a == b || (a.isNaN && b.isNaN)
                default: false
                }
            }
            return id == other.id && label == other.label && same(value, other.value) && same(limit, other.limit)
        }
    }

    /// Version 2 of the reading: its label in capitals, which the migration's `.transform` makes
    /// and which fails on a label that is not a string.
    public struct CappedReading: Entity {
        public var id: Int
        public var label: String
        public var value: Double
        public var limit: Double?
        public static var entityName: String { "Reading" }

        public var reading: Reading { Reading(id: id, label: label, value: value, limit: limit) }

        public static let migrations = [SchemaMigration(from: 1, to: 2, [
            .transform("Reading") { object in
                guard case .string(let label)? = object["label"] else { throw NotAString(value: "\(object["label"] ?? .null)") }
                object["label"] = .string(label.uppercased())
            },
        ])]
    }

    /// A label the migration step did not see as a string.
    public struct NotAString: Error {
        public var value: String

        public init(value: String) { self.value = value }
    }

    /// The readings as ``CappedReading``'s migration makes them.
    public static func capped(_ readings: [Reading]) -> [Reading] {
        readings.map { Reading(id: $0.id, label: $0.label.uppercased(), value: $0.value, limit: $0.limit) }
    }

    /// A hundred readings: the first three labelled with the non-finite names and holding
    /// those values, the last one a limit of minus infinity.
    public static let readings: [Reading] = (0..<100).map { id in
        let names = ["NaN", "Infinity", "-Infinity"]
        let values: [Double] = [.nan, .infinity, -.infinity]
        return Reading(
            id: id, label: id < 3 ? names[id] : "reading \(id)", value: id < 3 ? values[id] : Double(id) / 4,
            limit: id == 99 ? -.infinity : nil)
    }

    /// Whether `found` holds exactly `expected`, in any order.
    public static func match(_ found: [Reading], _ expected: [Reading]) -> Bool {
        let found = found.sorted { $0.id < $1.id }
        return found.count == expected.count && zip(found, expected.sorted { $0.id < $1.id }).allSatisfy { $0.matches($1) }
    }
}
