import Foundation
import GraphStore

/// One top-level key of an encoded object and its column value.
struct EncodedField: Sendable {
    let name: String
    var value: ColumnValue
}

/// Encodes an entity as one row: a column value per top-level key, in the order the entity
/// encodes them. Keys an entity skips (a `nil` optional under `encodeIfPresent`) are absent;
/// the writer stores NULL for them.
final class RowEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    fileprivate let json: SQLiteJSON.Writer
    /// The kinds of the table's existing columns: a value for a `json` column is written as JSON
    /// whatever its own kind, so a column keeps one kind.
    fileprivate let existingKinds: [String: ColumnKind]
    fileprivate var fields: [EncodedField] = []
    private var refusal: String?

    private init(existingKinds: [String: ColumnKind], json: SQLiteJSON.Writer) {
        self.existingKinds = existingKinds
        self.json = json
    }

    /// The fields of `object`.
    ///
    /// - Throws: `EncodingError` when the object does not encode a keyed container, uses
    ///   nested containers at the top level, or holds a value ``ColumnEncoding`` refuses.
    /// - Complexity: O(size of the object).
    static func encode(_ object: any Entity, existingKinds: [String: ColumnKind], json: SQLiteJSON.Writer) throws -> [EncodedField] {
        let encoder = RowEncoder(existingKinds: existingKinds, json: json)
        try object.encode(to: encoder)
        if let refusal = encoder.refusal {
            throw EncodingError.invalidValue(object, EncodingError.Context(codingPath: [], debugDescription: refusal))
        }
        return encoder.fields
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RowContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        refuse("an entity must encode a keyed container (an object), not an array")
        return DiscardingEncoder(codingPath: []).unkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        refuse("an entity must encode a keyed container (an object), not a single value")
        return DiscardingEncoder(codingPath: []).singleValueContainer()
    }

    fileprivate func refuse(_ reason: String) {
        if refusal == nil { refusal = reason }
    }
}

// MARK: - RowContainer

private struct RowContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RowEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {
        encoder.fields.append(EncodedField(name: key.stringValue, value: .null))
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { try add(value, .bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try add(value, .text(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try add(value, .real(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try add(value, .real(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try add(value, .integer(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try add(value, .integer(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try add(value, .integer(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try add(value, .integer(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try add(value, .integer(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try add(value, ColumnEncoding.unsigned(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try add(value, .integer(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try add(value, .integer(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try add(value, .integer(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try add(value, ColumnEncoding.unsigned(value), key) }
    mutating func encode(_ value: Int128, forKey key: Key) throws { try add(value, ColumnEncoding.wide(value), key) }
    mutating func encode(_ value: UInt128, forKey key: Key) throws { try add(value, ColumnEncoding.wide(value), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try add(value, ColumnEncoding.encode(value, codingPath: [key], json: encoder.json), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        refuseNesting(key, "nestedContainer(keyedBy:forKey:)")
        return DiscardingEncoder(codingPath: [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        refuseNesting(key, "nestedUnkeyedContainer(forKey:)")
        return DiscardingEncoder(codingPath: [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        encoder.refuse("the entity uses superEncoder() at the top level, which the SQLite store does not support")
        return DiscardingEncoder(codingPath: [])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        refuseNesting(key, "superEncoder(forKey:)")
        return DiscardingEncoder(codingPath: [key])
    }

    private func add<T: Encodable>(_ value: T, _ column: ColumnValue, _ key: Key) throws {
        var column = column
        if column.kind != nil, column.kind != .json, encoder.existingKinds[key.stringValue] == .json {
            column = try ColumnEncoding.jsonValue(value, json: encoder.json)
        }
        encoder.fields.append(EncodedField(name: key.stringValue, value: column))
    }

    private func refuseNesting(_ key: Key, _ method: String) {
        encoder.refuse(
            "the entity calls \(method) for \"\(key.stringValue)\" at the top level; the SQLite store needs each top-level value encoded with encode(_:forKey:) (a nested Codable type is fine)")
    }
}
