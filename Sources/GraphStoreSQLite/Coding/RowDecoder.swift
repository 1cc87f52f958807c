import Foundation
import GRDB
import GraphStore

/// Decodes an entity from one row: a keyed container whose keys are the table's columns.
///
/// A NULL column reads as an absent key (`contains` is false, `decodeIfPresent` gives `nil`),
/// as a key the entity skipped when it was encoded.
struct RowDecoder: Decoder {
    let table: TableLayout
    /// The row's values, in ``TableLayout/columns`` order.
    let values: [DatabaseValue]
    let json: SQLiteJSON.Reader
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Decodes an object of `type` from `values`.
    ///
    /// - Throws: `DecodingError` when a value does not fit the entity.
    /// - Complexity: O(size of the row).
    static func decode(_ type: any Entity.Type, table: TableLayout, values: [DatabaseValue], json: SQLiteJSON.Reader) throws -> any Entity {
        try type.init(from: RowDecoder(table: table, values: values, json: json))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowDecodingContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, DecodingError.Context(codingPath: [], debugDescription: "a row is a keyed value; an entity must decode a keyed container"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, DecodingError.Context(codingPath: [], debugDescription: "a row is a keyed value; an entity must decode a keyed container"))
    }
}

// MARK: - RowDecodingContainer

private struct RowDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: RowDecoder
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        decoder.table.columns.indices.compactMap { index in
            decoder.values[index].isNull ? nil : Key(stringValue: decoder.table.columns[index])
        }
    }

    func contains(_ key: Key) -> Bool {
        guard let index = decoder.table.index(of: key.stringValue) else { return false }
        return !decoder.values[index].isNull
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let index = decoder.table.index(of: key.stringValue) else { return true }
        return decoder.values[index].isNull
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try ColumnDecoding.bool(value(key), codingPath: [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try ColumnDecoding.string(value(key), codingPath: [key]) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try ColumnDecoding.double(value(key), as: type, codingPath: [key]) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try ColumnDecoding.double(value(key), as: type, codingPath: [key])) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try ColumnDecoding.integer(type, value(key), codingPath: [key]) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try ColumnDecoding.integer(type, value(key), codingPath: [key]) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try ColumnDecoding.integer(type, value(key), codingPath: [key]) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try ColumnDecoding.integer(type, value(key), codingPath: [key]) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try ColumnDecoding.integer(type, value(key), codingPath: [key]) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try ColumnDecoding.integer(type, value(key), codingPath: [key]) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try ColumnDecoding.integer(type, value(key), codingPath: [key]) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try ColumnDecoding.integer(type, value(key), codingPath: [key]) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try ColumnDecoding.integer(type, value(key), codingPath: [key]) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try ColumnDecoding.integer(type, value(key), codingPath: [key]) }
    // An integer column, or beyond 64 bits a `json` one (see ``ColumnEncoding/wide(_:)``).
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try column(type, key) }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try column(type, key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try column(type, key) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw unsupported(key, "nestedContainer(keyedBy:forKey:)")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw unsupported(key, "nestedUnkeyedContainer(forKey:)")
    }

    func superDecoder() throws -> any Decoder {
        throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "the SQLite store does not support superDecoder() at the top level"))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        throw unsupported(key, "superDecoder(forKey:)")
    }

    // MARK: - Private

    private func columnIndex(_ key: Key) throws -> Int {
        guard let index = decoder.table.index(of: key.stringValue) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(
                codingPath: [], debugDescription: "table \(decoder.table.name) has no column \"\(key.stringValue)\""))
        }
        return index
    }

    /// The value of `key`'s column as a `T`, by the column's kind.
    private func column<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        let index = try columnIndex(key)
        return try ColumnDecoding.decode(
            type, from: decoder.values[index], kind: decoder.table.kinds[index], codingPath: [key], json: decoder.json)
    }

    private func value(_ key: Key) throws -> DatabaseValue {
        decoder.values[try columnIndex(key)]
    }

    private func unsupported(_ key: Key, _ method: String) -> DecodingError {
        .dataCorrupted(DecodingError.Context(
            codingPath: [key],
            debugDescription: "the SQLite store does not support \(method) at the top level; decode the value with decode(_:forKey:)"))
    }
}
