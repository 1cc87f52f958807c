import Foundation
import GraphStore
import Testing

/// Entities keyed by `Date` and by `Double`, in two model versions, for the tests of a journal
/// replayed during a migration at open: a snapshot or SQLite store reads such an id as a date
/// or a double, while the journal's JSON writes a whole number without `.0` and reads it back
/// as an integer.
public enum IDFormModels {
    /// An entity of version 1 whose id is of type `ID`, and its version-2 form.
    public protocol Keyed: Entity, Equatable {
        init(id: ID, note: String)
        var note: String { get }
    }

    /// A compound id holding a date: nested, so the date is a value inside an object.
    public struct SlotKey: Codable, Hashable, Sendable {
        public var day: Date
        public var user: Int
        public init(day: Date, user: Int) { (self.day, self.user) = (day, user) }
    }

    public enum V1 {
        public struct Name: Keyed {
            public var id: String
            public var note: String
            public static var entityName: String { "Name" }
            public init(id: String, note: String) { (self.id, self.note) = (id, note) }
        }

        public struct Item: Keyed {
            public var id: UUID
            public var note: String
            public static var entityName: String { "Item" }
            public init(id: UUID, note: String) { (self.id, self.note) = (id, note) }
        }

        public struct Slot: Keyed {
            public var id: SlotKey
            public var note: String
            public static var entityName: String { "Slot" }
            public init(id: SlotKey, note: String) { (self.id, self.note) = (id, note) }
        }

        public struct Day: Keyed {
            public var id: Date
            public var note: String
            public static var entityName: String { "Day" }
            public init(id: Date, note: String) { (self.id, self.note) = (id, note) }
        }

        public struct Reading: Keyed {
            public var id: Double
            public var note: String
            public static var entityName: String { "Reading" }
            public init(id: Double, note: String) { (self.id, self.note) = (id, note) }
        }
    }

    public enum V2 {
        public struct Name: Keyed {
            public var id: String
            public var note: String
            public var rank: Int
            public static var entityName: String { "Name" }
            public init(id: String, note: String) { (self.id, self.note, rank) = (id, note, 0) }
        }

        public struct Item: Keyed {
            public var id: UUID
            public var note: String
            public var done: Bool
            public static var entityName: String { "Item" }
            public init(id: UUID, note: String) { (self.id, self.note, done) = (id, note, false) }
        }

        public struct Slot: Keyed {
            public var id: SlotKey
            public var note: String
            public var booked: Bool
            public static var entityName: String { "Slot" }
            public init(id: SlotKey, note: String) { (self.id, self.note, booked) = (id, note, false) }
        }

        public struct Day: Keyed {
            public var id: Date
            public var note: String
            public var mood: Int
            public static var entityName: String { "Day" }
            public init(id: Date, note: String) { (self.id, self.note, mood) = (id, note, 0) }
        }

        public struct Reading: Keyed {
            public var id: Double
            public var note: String
            public var unit: String
            public static var entityName: String { "Reading" }
            public init(id: Double, note: String) { (self.id, self.note, unit) = (id, note, "kg") }
        }
    }

    /// The one step from version 1 to 2: `field` added to `entity` with `value`.
    public static func migrations(adding field: String, to entity: String, default value: SnapshotValue) -> [SchemaMigration] {
        [SchemaMigration(from: 1, to: 2, [.addField(field, in: entity, default: value)])]
    }

    /// Midnights, whole seconds since 2001, and one instant with a fraction.
    public static let days = [750_000_000, 750_086_400, 750_172_800.25, 750_259_200, 750_345_600].map(Date.init(timeIntervalSinceReferenceDate:))

    /// One slot per day, each of another user.
    public static var slots: [SlotKey] { days.enumerated().map { SlotKey(day: $1, user: $0 + 1) } }

    /// Expects the changes a test's journaled save made to objects of `ids`: the first
    /// deleted, the second and third edited (notes "1, edited", "2, edited"), the last inserted
    /// (note "inserted"), the others as saved before (their index as note); each id once.
    public static func expectEveryChange<ID: Hashable>(
        _ objects: [(id: ID, note: String)], ids: [ID], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let notes = Dictionary(objects.map { ($0.id, [$0.note]) }, uniquingKeysWith: +)
        var expected: [ID: [String]] = [ids[1]: ["1, edited"], ids[2]: ["2, edited"], ids[ids.count - 1]: ["inserted"]]
        for (index, id) in ids.enumerated().dropFirst(3).dropLast() { expected[id] = ["\(index)"] }
        #expect(notes == expected, sourceLocation: sourceLocation)
        #expect(objects.count == ids.count - 1, sourceLocation: sourceLocation)
    }
}
