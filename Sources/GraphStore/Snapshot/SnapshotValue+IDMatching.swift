import Foundation

extension SnapshotValue {
    /// The value as generic ids are matched across sources: a number that is a whole number
    /// as ``integer(_:)`` (or ``unsigned(_:)`` above `Int64.max`), whatever kind it was read
    /// as, and a date as its seconds since 2001 made so, also inside arrays and objects (an id
    /// of a struct holding a date); any other value itself.
    ///
    /// One typed id reads as different generic values depending on where it was read: a
    /// `Date` or `Double` id is a ``date(_:)`` in a property-list snapshot and a SQLite `date`
    /// column, a ``double(_:)`` once put in the JSON conventions, and an ``integer(_:)`` in a
    /// journal record when it is a whole number (JSON writes `750000000`, not
    /// `750000000.0`). Keyed by this value, they are one object's.
    ///
    /// Only for matching: the values kept and written out stay as they were read. Zero and
    /// negative zero match, as the typed ids `0.0` and `-0.0` are equal.
    ///
    /// - Complexity: O(1) for a single value; O(size) for an array or object.
    package var idMatchingKey: SnapshotValue {
        switch self {
        case .date(let date):
            return SnapshotValue.double(date.timeIntervalSinceReferenceDate).idMatchingKey
        case .double(let number):
            if number == 0 { return .integer(0) }
            if let whole = Int64(exactly: number) { return .integer(whole) }
            if let whole = UInt64(exactly: number) { return .unsigned(whole) }
            return self
        case .array(let elements):
            return .array(elements.map(\.idMatchingKey))
        case .object(let fields):
            return .object(fields.mapValues(\.idMatchingKey))
        default:
            return self
        }
    }
}
