import Foundation
import GraphStore

/// An entity whose top-level properties hold every value SQLite makes hard to keep: integer
/// extremes, unsigned values above `Int64.max`, NaN and -0.0, dates to the bit, empty and
/// binary `Data`, NUL and other Unicode in text, optionals, raw-value enums, single-value
/// wrappers and nested `Codable` values (stored as JSON).
struct SQLiteEdgeValues: Entity, CustomStringConvertible {
    enum Mood: String, Codable, Sendable {
        case calm, ünïcödé = "ünï 😀"
    }

    /// A single-value wrapper around a date: stored as a `date` column, not JSON.
    struct Stamp: Codable, Sendable {
        var date: Date

        init(_ date: Date) { self.date = date }
        init(from decoder: any Decoder) throws { date = try decoder.singleValueContainer().decode(Date.self) }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(date)
        }
    }

    struct Nested: Codable, Sendable {
        var when: Date
        var bytes: Data
        var values: [Double]
        var names: [String: String]
        var big: UInt64
        var inner: [Nested]?
    }

    var id: String
    var int64Min: Int64
    var int64Max: Int64
    var uint64Max: UInt64
    var int8: Int8
    var uint32: UInt32
    var double: Double
    var negativeZero: Double
    var infinity: Double
    var negativeInfinity: Double
    var nan: Double
    var subnormal: Double
    var float: Float
    var floatNegativeZero: Float
    var date: Date
    var negativeZeroDate: Date
    var distantPast: Date
    var data: Data
    var emptyData: Data
    var text: String
    var emptyText: String
    var flag: Bool
    var uuid: UUID
    var mood: Mood
    var stamp: Stamp
    var optionalText: String?
    var optionalDate: Date?
    var optionalNested: Nested?
    var nested: Nested
    var list: [Int64]
    var uuids: [UUID]

    var description: String { "SQLiteEdgeValues(\(id.debugDescription))" }

    static let specialDoubles: [Double] = [
        .infinity, -.infinity, .nan, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .pi, 0.1, 123_456_789.123_456_79,
    ]

    static let extremes = SQLiteEdgeValues(
        id: "extremes \u{0} é e\u{301} 😀",
        int64Min: .min, int64Max: .max, uint64Max: .max, int8: .min, uint32: .max,
        double: 0.1 + 0.2, negativeZero: -0.0, infinity: .infinity, negativeInfinity: -.infinity, nan: .nan,
        subnormal: .leastNonzeroMagnitude, float: .pi, floatNegativeZero: -0.0,
        date: Date(timeIntervalSinceReferenceDate: Double(bitPattern: 0x41C7_6543_2109_8765)),
        negativeZeroDate: Date(timeIntervalSinceReferenceDate: -0.0),
        distantPast: .distantPast,
        data: Data((0...255).map { UInt8($0) }), emptyData: Data(),
        text: "\u{0}NUL \u{1}\u{1F}\u{7F} \"quotes\" \\ é e\u{301} 中文 👩‍👩‍👧‍👦 🇨🇭 \u{202E} \u{FEFF} \u{10FFFF} \r\n\t",
        emptyText: "", flag: true, uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, mood: .ünïcödé,
        stamp: Stamp(Date(timeIntervalSinceReferenceDate: 800_000_000.000_000_1)),
        optionalText: "", optionalDate: Date(timeIntervalSinceReferenceDate: -978_307_200.000_000_1),
        optionalNested: Nested(when: .distantFuture, bytes: Data([0]), values: [], names: ["\u{0}": "nul key"], big: 0, inner: []),
        nested: Nested(
            when: Date(timeIntervalSinceReferenceDate: .leastNonzeroMagnitude), bytes: Data((0...255).reversed().map { UInt8($0) }),
            values: specialDoubles, names: ["": "empty", "é": "composed", "quote\"back\\slash": "</script>"], big: .max,
            inner: [Nested(when: Date(timeIntervalSinceReferenceDate: 1), bytes: Data(), values: [-1], names: [:], big: 1, inner: nil)]),
        list: [.min, -1, 0, .max], uuids: [UUID(), UUID()])

    static let empties = SQLiteEdgeValues(
        id: "",
        int64Min: 0, int64Max: 0, uint64Max: 0, int8: 0, uint32: 0,
        double: 0, negativeZero: 0, infinity: 0, negativeInfinity: 0, nan: 0, subnormal: 0, float: 0, floatNegativeZero: 0,
        date: Date(timeIntervalSinceReferenceDate: 0), negativeZeroDate: Date(timeIntervalSinceReferenceDate: 0),
        distantPast: Date(timeIntervalSince1970: 0),
        data: Data(), emptyData: Data(), text: "", emptyText: "", flag: false, uuid: UUID(), mood: .calm,
        stamp: Stamp(Date(timeIntervalSinceReferenceDate: 0)),
        optionalText: nil, optionalDate: nil, optionalNested: nil,
        nested: Nested(when: Date(timeIntervalSinceReferenceDate: 0), bytes: Data(), values: [], names: [:], big: 0, inner: nil),
        list: [], uuids: [])

    /// What differs between `self` and `other`, to the bit: doubles and dates by bit pattern
    /// (NaN matches NaN), strings by their Unicode scalars.
    func differences(from other: SQLiteEdgeValues) -> [String] {
        var found: [String] = []
        func check(_ same: Bool, _ field: String, _ mine: Any, _ theirs: Any) {
            if !same { found.append("\(field): wrote \(mine), read \(theirs)") }
        }
        func bits(_ value: Double) -> UInt64 { value.isNaN ? Double.nan.bitPattern : value.bitPattern }
        func bits(_ date: Date) -> UInt64 { bits(date.timeIntervalSinceReferenceDate) }
        func bits(_ date: Date?) -> UInt64? { date.map { bits($0) } }
        func scalars(_ text: String?) -> [UInt32]? { text.map { $0.unicodeScalars.map(\.value) } }
        func same(_ a: Nested?, _ b: Nested?) -> Bool {
            guard let a, let b else { return a == nil && b == nil }
            return bits(a.when) == bits(b.when) && a.bytes == b.bytes && a.values.map(bits) == b.values.map(bits)
                && a.names.count == b.names.count && a.names.allSatisfy { key, value in
                    b.names.contains { scalars($0.key) == scalars(key) && scalars($0.value) == scalars(value) }
                }
                && a.big == b.big && (a.inner?.count == b.inner?.count)
                && zip(a.inner ?? [], b.inner ?? []).allSatisfy { same($0, $1) }
        }
        check(scalars(id) == scalars(other.id), "id", id.debugDescription, other.id.debugDescription)
        check(int64Min == other.int64Min, "int64Min", int64Min, other.int64Min)
        check(int64Max == other.int64Max, "int64Max", int64Max, other.int64Max)
        check(uint64Max == other.uint64Max, "uint64Max", uint64Max, other.uint64Max)
        check(int8 == other.int8, "int8", int8, other.int8)
        check(uint32 == other.uint32, "uint32", uint32, other.uint32)
        for (name, mine, theirs) in [
            ("double", double, other.double), ("negativeZero", negativeZero, other.negativeZero),
            ("infinity", infinity, other.infinity), ("negativeInfinity", negativeInfinity, other.negativeInfinity),
            ("nan", nan, other.nan), ("subnormal", subnormal, other.subnormal),
        ] {
            check(bits(mine) == bits(theirs), name, mine.bitPattern, theirs.bitPattern)
        }
        check(float.bitPattern == other.float.bitPattern, "float", float, other.float)
        check(floatNegativeZero.bitPattern == other.floatNegativeZero.bitPattern, "floatNegativeZero", floatNegativeZero, other.floatNegativeZero)
        check(bits(date) == bits(other.date), "date", bits(date), bits(other.date))
        check(bits(negativeZeroDate) == bits(other.negativeZeroDate), "negativeZeroDate", bits(negativeZeroDate), bits(other.negativeZeroDate))
        check(bits(distantPast) == bits(other.distantPast), "distantPast", bits(distantPast), bits(other.distantPast))
        check(data == other.data, "data", data.count, other.data.count)
        check(emptyData == other.emptyData, "emptyData", emptyData.count, other.emptyData.count)
        check(scalars(text) == scalars(other.text), "text", text.debugDescription, other.text.debugDescription)
        check(scalars(emptyText) == scalars(other.emptyText), "emptyText", emptyText, other.emptyText)
        check(flag == other.flag, "flag", flag, other.flag)
        check(uuid == other.uuid, "uuid", uuid, other.uuid)
        check(mood == other.mood, "mood", mood, other.mood)
        check(bits(stamp.date) == bits(other.stamp.date), "stamp", bits(stamp.date), bits(other.stamp.date))
        check(scalars(optionalText) == scalars(other.optionalText), "optionalText", optionalText as Any, other.optionalText as Any)
        check(bits(optionalDate) == bits(other.optionalDate), "optionalDate", optionalDate as Any, other.optionalDate as Any)
        check(same(optionalNested, other.optionalNested), "optionalNested", optionalNested as Any, other.optionalNested as Any)
        check(same(nested, other.nested), "nested", nested, other.nested)
        check(list == other.list, "list", list, other.list)
        check(uuids == other.uuids, "uuids", uuids, other.uuids)
        return found
    }
}
