import Foundation
import GRDB

/// Encodes one top-level value of an entity as a column value.
///
/// `Date` becomes a `date` REAL, `Data` a BLOB, `UUID` its `uuidString`, an `Int128` or
/// `UInt128` an integer or, beyond 64 bits, its JSON number (``wide(_:)``); a value that encodes
/// a single primitive (a raw-value enum, a wrapper) becomes that primitive; anything that
/// encodes a keyed or unkeyed container (a nested struct, an array, a dictionary) becomes JSON
/// text written with ``SQLiteJSON``.
enum ColumnEncoding {
    /// The column value for `value`.
    ///
    /// - Throws: `EncodingError.invalidValue` for a value that encodes nothing; the JSON
    ///   encoder's errors.
    /// - Complexity: O(size of the value).
    static func encode<T: Encodable>(_ value: T, codingPath: [any CodingKey], json: SQLiteJSON.Writer) throws -> ColumnValue {
        if T.self == Date.self { return .real((value as! Date).timeIntervalSinceReferenceDate, kind: .date) }
        if T.self == Data.self { return .blob(value as! Data) }
        if T.self == UUID.self { return .text((value as! UUID).uuidString) }
        if let primitive = primitive(value) { return primitive }
        let probe = ValueProbe(codingPath: codingPath, json: json)
        try value.encode(to: probe)
        if probe.needsJSON { return try jsonValue(value, json: json) }
        guard let captured = probe.captured else {
            throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: codingPath, debugDescription: "\(T.self) encoded no value"))
        }
        return captured
    }

    /// `value` as JSON text in a `json` column.
    static func jsonValue<T: Encodable>(_ value: T, json: SQLiteJSON.Writer) throws -> ColumnValue {
        ColumnValue(value: String(decoding: try json.encode(value), as: UTF8.self).databaseValue, kind: .json)
    }

    /// The integer column value for an unsigned value. One above `Int64.max`, which SQLite's
    /// signed INTEGER cannot hold (it would turn it into a REAL), is kept as the 8-byte
    /// big-endian BLOB of its `UInt64` value.
    static func unsigned<T: FixedWidthInteger & UnsignedInteger>(_ value: T) -> ColumnValue {
        if let signed = Int64(exactly: value) { return .integer(signed) }
        return ColumnValue(value: withUnsafeBytes(of: UInt64(value).bigEndian) { Data($0) }.databaseValue, kind: .integer)
    }

    /// The column value for an `Int128` or `UInt128`: within 64 bits the integer an `Int64` or
    /// `UInt64` gets (so the column is an `integer` one, as for the narrower types); beyond, the
    /// JSON number with every digit, as the snapshot document writes it, in a `json` column (a
    /// REAL would round it). A field holding both turns its column to `json`, as a field whose
    /// values encode as several kinds does.
    static func wide<T: FixedWidthInteger>(_ value: T) -> ColumnValue {
        if let signed = Int64(exactly: value) { return .integer(signed) }
        if let unsigned = UInt64(exactly: value) { return self.unsigned(unsigned) }
        return ColumnValue(value: String(value).databaseValue, kind: .json)
    }

    /// Whether `value`, written for a column of kind `recorded`, is an integer beyond 64 bits
    /// (``wide(_:)``'s JSON number) where the column holds integers: the field did not change
    /// type, its values grew, and the writer turns the column to `json`.
    static func widens(_ recorded: ColumnKind, to value: ColumnValue) -> Bool {
        guard recorded == .integer, value.kind == .json, case .string(let text) = value.value.storage else { return false }
        return Int64(text) == nil && UInt64(text) == nil && (Int128(text) != nil || UInt128(text) != nil)
    }

    /// A primitive reaching the generic entry point (a generic caller's `encode(_:)` does).
    private static func primitive<T: Encodable>(_ value: T) -> ColumnValue? {
        switch value {
        case let value as String: .text(value)
        case let value as Bool: .bool(value)
        case let value as Double: .real(value)
        case let value as Float: .real(Double(value))
        case let value as Int: .integer(Int64(value))
        case let value as Int64: .integer(value)
        case let value as Int32: .integer(Int64(value))
        case let value as Int16: .integer(Int64(value))
        case let value as Int8: .integer(Int64(value))
        case let value as UInt: unsigned(value)
        case let value as UInt64: unsigned(value)
        case let value as UInt32: .integer(Int64(value))
        case let value as UInt16: .integer(Int64(value))
        case let value as UInt8: .integer(Int64(value))
        case let value as Int128: wide(value)
        case let value as UInt128: wide(value)
        default: nil
        }
    }
}

// MARK: - ValueProbe

/// Runs a value's `encode(to:)` to learn whether it is a single primitive (captured) or needs
/// a container (then it is written as JSON instead).
private final class ValueProbe: Encoder, SingleValueEncodingContainer {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    private let json: SQLiteJSON.Writer
    private(set) var captured: ColumnValue?
    private(set) var needsJSON = false

    init(codingPath: [any CodingKey], json: SQLiteJSON.Writer) {
        self.codingPath = codingPath
        self.json = json
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        needsJSON = true
        return DiscardingEncoder(codingPath: codingPath).container(keyedBy: type)
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        needsJSON = true
        return DiscardingEncoder(codingPath: codingPath).unkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() throws { captured = .null }
    func encode(_ value: Bool) throws { captured = .bool(value) }
    func encode(_ value: String) throws { captured = .text(value) }
    func encode(_ value: Double) throws { captured = .real(value) }
    func encode(_ value: Float) throws { captured = .real(Double(value)) }
    func encode(_ value: Int) throws { captured = .integer(Int64(value)) }
    func encode(_ value: Int8) throws { captured = .integer(Int64(value)) }
    func encode(_ value: Int16) throws { captured = .integer(Int64(value)) }
    func encode(_ value: Int32) throws { captured = .integer(Int64(value)) }
    func encode(_ value: Int64) throws { captured = .integer(value) }
    func encode(_ value: UInt) throws { captured = ColumnEncoding.unsigned(value) }
    func encode(_ value: UInt8) throws { captured = .integer(Int64(value)) }
    func encode(_ value: UInt16) throws { captured = .integer(Int64(value)) }
    func encode(_ value: UInt32) throws { captured = .integer(Int64(value)) }
    func encode(_ value: UInt64) throws { captured = ColumnEncoding.unsigned(value) }
    func encode(_ value: Int128) throws { captured = ColumnEncoding.wide(value) }
    func encode(_ value: UInt128) throws { captured = ColumnEncoding.wide(value) }

    func encode<T: Encodable>(_ value: T) throws {
        captured = try ColumnEncoding.encode(value, codingPath: codingPath, json: json)
    }
}
