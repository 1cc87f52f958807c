import Foundation

/// One property value as an index holds it: the common types unboxed, any other `Comparable`
/// boxed. Values of one index column all have one Swift type, so only `null` ever meets
/// another case.
///
/// The order is `null` first (as SQLite's `NULL`), then, for floating point, NaN, then the
/// type's own `<`. Integers of every width compare as `Int64`, floats as `Double`.
///
/// Any other type is boxed in a class, so the enum is no larger than a `String` plus its tag
/// (17 bytes instead of 41 for an inline existential): every index node holds one or more, and
/// a commit copies a path of nodes.
enum IndexValue: Sendable, CustomStringConvertible {
    case null
    case int(Int64)
    case double(Double)
    case string(String)
    case date(Date)
    case other(OtherIndexValue)

    /// The value of a property, `nil` (at any depth of optionals) as `.null`.
    init<V>(_ value: V) {
        if V.self == Date.self {
            self = .date(unsafeBitCast(value, to: Date.self))
        } else if V.self == Int.self {
            self = .int(Int64(unsafeBitCast(value, to: Int.self)))
        } else if V.self == Int64.self {
            self = .int(unsafeBitCast(value, to: Int64.self))
        } else if V.self == String.self {
            self = .string(unsafeBitCast(value, to: String.self))
        } else if V.self == Double.self {
            self = .double(unsafeBitCast(value, to: Double.self))
        } else {
            self = Self(any: value)
        }
    }

    /// The value of a predicate constant or a property of unknown type; `nil` when it is of a
    /// type an index cannot hold.
    init(any value: Any) {
        guard let indexed = Self(constant: value) else {
            preconditionFailure("GraphStore: an index value of type \(type(of: value)) is not Comparable & Sendable.")
        }
        self = indexed
    }

    /// The value of a predicate constant, or `nil` when an index cannot hold its type.
    init?(constant value: Any) {
        switch value {
        case let value as any IndexOptional:
            guard let wrapped = value.unwrapped else {
                self = .null
                return
            }
            guard let indexed = IndexValue(constant: wrapped) else { return nil }
            self = indexed
        case let value as Date: self = .date(value)
        case let value as Int: self = .int(Int64(value))
        case let value as Int64: self = .int(value)
        case let value as Int32: self = .int(Int64(value))
        case let value as Int16: self = .int(Int64(value))
        case let value as Int8: self = .int(Int64(value))
        case let value as UInt32: self = .int(Int64(value))
        case let value as UInt16: self = .int(Int64(value))
        case let value as UInt8: self = .int(Int64(value))
        case let value as Double: self = .double(value)
        case let value as Float: self = .double(Double(value))
        case let value as String: self = .string(value)
        case let value as any Comparable & Sendable: self = .other(OtherIndexValue(value))
        default: return nil
        }
    }

    var isNaN: Bool {
        switch self {
        case .double(let value): value.isNaN
        case .date(let value): value.timeIntervalSinceReferenceDate.isNaN
        case .other(let value): !value.isEqualToItself
        default: false
        }
    }

    /// The NaN of this value's type, if it has one: what sorts below every number (and above
    /// `nil`) in an index of such values.
    var nanOfItsType: IndexValue? {
        switch self {
        case .double: return .double(.nan)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: .nan))
        case .other(let value):
            return Self.nan(like: value.value).map { .other(OtherIndexValue($0)) }
        default: return nil
        }
    }

    /// The NaN of `value`'s type, when it is a floating-point type.
    private static func nan<T: Comparable & Sendable>(like value: T) -> T? {
        guard let floating = value as? any FloatingPoint else { return nil }
        return nanAsAny(floating) as? T
    }

    private static func nanAsAny<F: FloatingPoint>(_: F) -> Any { F.nan }

    var description: String {
        switch self {
        case .null: "nil"
        case .int(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): value.debugDescription
        case .date(let value): "\(value)"
        case .other(let value): "\(value.value)"
        }
    }

    /// Three-way comparison in index order.
    ///
    /// Switches on one value and matches the other against the same case, so neither is
    /// copied into a tuple (which retained strings and boxes on every comparison).
    @inline(__always)
    static func compare(_ a: IndexValue, _ b: IndexValue) -> Int {
        switch a {
        case .int(let x):
            if case .int(let y) = b { return x < y ? -1 : (x == y ? 0 : 1) }
        case .date(let x):
            // A date of a NaN interval sorts as a NaN double: first, and equal to itself.
            if case .date(let y) = b { return compare(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate) }
        case .string(let x):
            if case .string(let y) = b { return x == y ? 0 : (x < y ? -1 : 1) }
        case .double(let x):
            if case .double(let y) = b { return compare(x, y) }
        case .other(let x):
            if case .other(let y) = b {
                // A value not equal to itself (a NaN of `Float16`, `CGFloat`, `Float80`…) sorts
                // first and equal to itself, as NaN does among doubles: under `<` alone it
                // compares greater both ways, and an index could neither find nor order it.
                return orderOfNaNs(!x.isEqualToItself, !y.isEqualToItself) ?? compareOpened(x.value, y.value)
            }
        case .null:
            if case .null = b { return 0 }
            return -1
        }
        if case .null = b { return 1 }
        preconditionFailure("GraphStore: index values of different types: \(a), \(b)")
    }

    /// NaN first, equal to itself, then `<`.
    @inline(__always)
    private static func compare(_ x: Double, _ y: Double) -> Int {
        orderOfNaNs(x.isNaN, y.isNaN) ?? (x < y ? -1 : (x == y ? 0 : 1))
    }

    /// The order of two values of which one or both are NaN (not equal to themselves): NaN
    /// first, and equal to another NaN; `nil` when neither is.
    @inline(__always)
    private static func orderOfNaNs(_ xIsNaN: Bool, _ yIsNaN: Bool) -> Int? {
        guard xIsNaN || yIsNaN else { return nil }
        return xIsNaN == yIsNaN ? 0 : (xIsNaN ? -1 : 1)
    }

    private static func compareOpened<T: Comparable>(_ x: T, _ y: any Comparable) -> Int {
        guard let y = y as? T else { preconditionFailure("GraphStore: index values of different types: \(x), \(y)") }
        return x < y ? -1 : (x == y ? 0 : 1)
    }
}

/// A `Comparable` index value of a type ``IndexValue`` does not hold unboxed.
final class OtherIndexValue: Sendable {
    let value: any Comparable & Sendable
    /// `value == value`: false for a NaN, which the index orders by its own rule (see
    /// ``IndexValue/compare(_:_:)``). Found once, as the box is made.
    let isEqualToItself: Bool

    init(_ value: any Comparable & Sendable) {
        self.value = value
        isEqualToItself = Self.isEqualToItself(value)
    }

    private static func isEqualToItself<T: Comparable>(_ value: T) -> Bool { value == value }
}

/// Lets `IndexValue(any:)` look through optionals of any wrapped type.
protocol IndexOptional {
    var unwrapped: Any? { get }
}

extension Optional: IndexOptional {
    var unwrapped: Any? { self.map { $0 as Any } }
}

/// The values of one object's indexed properties, in the index's order. The first is stored
/// inline, so a one-property index allocates no array.
struct IndexKey: Sendable, CustomStringConvertible {
    let first: IndexValue
    let rest: [IndexValue]

    init(_ values: [IndexValue]) {
        first = values[0]
        rest = Array(values.dropFirst())
    }

    init(first: IndexValue, rest: [IndexValue]) {
        self.first = first
        self.rest = rest
    }

    var count: Int { 1 + rest.count }

    subscript(position: Int) -> IndexValue { position == 0 ? first : rest[position - 1] }

    var description: String { count == 1 ? first.description : "(" + (0..<count).map { self[$0].description }.joined(separator: ", ") + ")" }

    /// Compares the first `min(count, prefix.count)` values with `prefix`.
    func compare(prefix: [IndexValue]) -> Int {
        for position in 0..<min(count, prefix.count) {
            let order = IndexValue.compare(self[position], prefix[position])
            if order != 0 { return order }
        }
        return 0
    }

    static func compare(_ a: IndexKey, _ b: IndexKey) -> Int {
        let order = IndexValue.compare(a.first, b.first)
        if order != 0 || a.rest.isEmpty { return order }
        for position in a.rest.indices {
            let order = IndexValue.compare(a.rest[position], b.rest[position])
            if order != 0 { return order }
        }
        return 0
    }
}

extension ObjectKey {
    /// A total order on ids, for breaking ties between equal index values: ids of one type in
    /// their natural order (UUIDs by their bytes, strings by `<`), ids of other types by type
    /// name, then description, then hash value (stable within a process, which is as long as
    /// an index lives).
    static func indexOrder(_ a: ObjectKey, _ b: ObjectKey) -> Int {
        if let order = a.unboxedOrder(b) { return order }
        if a == b { return 0 }
        let x = a.base, y = b.base
        switch (x, y) {
        case (let x as UUID, let y as UUID):
            let order = withUnsafeBytes(of: x.uuid) { p in withUnsafeBytes(of: y.uuid) { q in memcmp(p.baseAddress!, q.baseAddress!, 16) } }
            return order < 0 ? -1 : 1
        case (let x as Int, let y as Int): return x < y ? -1 : 1
        case (let x as Int64, let y as Int64): return x < y ? -1 : 1
        case (let x as Int32, let y as Int32): return x < y ? -1 : 1
        case (let x as String, let y as String): return x < y ? -1 : 1
        default:
            let tx = String(reflecting: type(of: x)), ty = String(reflecting: type(of: y))
            if tx != ty { return tx < ty ? -1 : 1 }
            let dx = String(reflecting: x), dy = String(reflecting: y)
            if dx != dy { return dx < dy ? -1 : 1 }
            return x.hashValue < y.hashValue ? -1 : 1
        }
    }
}
