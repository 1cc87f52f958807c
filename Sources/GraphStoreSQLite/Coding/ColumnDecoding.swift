import Foundation
import GRDB

/// Decodes one top-level value of an entity from its column: the inverse of ``ColumnEncoding``.
enum ColumnDecoding {
    /// A `T` from `value`, stored in a column of `kind`.
    ///
    /// - Throws: `DecodingError` when the stored value does not fit `T`.
    /// - Complexity: O(size of the value).
    static func decode<T: Decodable>(_ type: T.Type, from value: DatabaseValue, kind: ColumnKind, codingPath: [any CodingKey], json: SQLiteJSON.Reader) throws -> T {
        if kind == .json, case .string(let text) = value.storage {
            do {
                return try json.decode(T.self, from: Data(text.utf8))
            } catch {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: codingPath, debugDescription: "the JSON in the column does not decode as \(T.self): \(error)", underlyingError: error))
            }
        }
        if T.self == Date.self {
            return Date(timeIntervalSinceReferenceDate: try double(value, as: Date.self, codingPath: codingPath)) as! T
        }
        if T.self == Data.self {
            guard case .blob(let data) = value.storage else { throw mismatch(Data.self, value, codingPath) }
            return data as! T
        }
        if T.self == UUID.self {
            let text = try string(value, codingPath: codingPath)
            guard let uuid = UUID(uuidString: text) else {
                throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: "\"\(text)\" is not a UUID"))
            }
            return uuid as! T
        }
        return try T(from: ColumnValueDecoder(value: value, kind: kind, codingPath: codingPath, json: json))
    }

    // MARK: - Primitives

    static func bool(_ value: DatabaseValue, codingPath: [any CodingKey]) throws -> Bool {
        guard case .int64(let number) = value.storage, number == 0 || number == 1 else { throw mismatch(Bool.self, value, codingPath) }
        return number == 1
    }

    /// TEXT, or the UTF-8 BLOB of a string containing NUL.
    static func string(_ value: DatabaseValue, codingPath: [any CodingKey]) throws -> String {
        switch value.storage {
        case .string(let text): return text
        case .blob(let bytes): return String(decoding: bytes, as: UTF8.self)
        default: throw mismatch(String.self, value, codingPath)
        }
    }

    /// A REAL, an INTEGER (exactly representable), or the 8-byte bit pattern of NaN / -0.0.
    static func double<T>(_ value: DatabaseValue, as type: T.Type, codingPath: [any CodingKey]) throws -> Double {
        switch value.storage {
        case .double(let number):
            return number
        case .int64(let number):
            return Double(number)
        case .blob(let bytes) where bytes.count == 8:
            return Double(bitPattern: bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        default:
            throw mismatch(T.self, value, codingPath)
        }
    }

    /// An INTEGER, or the 8-byte big-endian BLOB of an unsigned value above `Int64.max`.
    static func integer<T: FixedWidthInteger>(_ type: T.Type, _ value: DatabaseValue, codingPath: [any CodingKey]) throws -> T {
        let result: T?
        switch value.storage {
        case .int64(let number): result = T(exactly: number)
        case .blob(let bytes) where bytes.count == 8: result = T(exactly: bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        default: throw mismatch(T.self, value, codingPath)
        }
        guard let result else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: codingPath, debugDescription: "\(describe(value)) does not fit \(T.self)"))
        }
        return result
    }

    static func mismatch<T>(_ type: T.Type, _ value: DatabaseValue, _ codingPath: [any CodingKey]) -> DecodingError {
        if value.isNull {
            return .valueNotFound(T.self, DecodingError.Context(codingPath: codingPath, debugDescription: "expected \(T.self), found NULL"))
        }
        return .typeMismatch(T.self, DecodingError.Context(codingPath: codingPath, debugDescription: "expected \(T.self), found \(describe(value))"))
    }

    /// A short description of a stored value for messages, such as `TEXT "abc"`.
    static func describe(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: "NULL"
        case .int64(let number): "INTEGER \(number)"
        case .double(let number): "REAL \(number)"
        case .string(let text): "TEXT \"\(text.count > 40 ? text.prefix(40) + "…" : text)\""
        case .blob(let data): "BLOB of \(data.count) byte(s)"
        }
    }

    /// A row's `id` for messages: the text or integer as it is, anything else described.
    static func idText(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .string(let text): text
        case .int64(let number): String(number)
        default: describe(value)
        }
    }
}

// MARK: - ColumnValueDecoder

/// The decoder a nested value of a non-JSON column sees: one single value.
struct ColumnValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: DatabaseValue
    let kind: ColumnKind
    let codingPath: [any CodingKey]
    let json: SQLiteJSON.Reader
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw containerMismatch([String: Any].self)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw containerMismatch([Any].self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try ColumnDecoding.bool(value, codingPath: codingPath) }
    func decode(_ type: String.Type) throws -> String { try ColumnDecoding.string(value, codingPath: codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try ColumnDecoding.double(value, as: type, codingPath: codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try ColumnDecoding.double(value, as: type, codingPath: codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try ColumnDecoding.integer(type, value, codingPath: codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try ColumnDecoding.integer(type, value, codingPath: codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try ColumnDecoding.integer(type, value, codingPath: codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try ColumnDecoding.integer(type, value, codingPath: codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try ColumnDecoding.integer(type, value, codingPath: codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try ColumnDecoding.integer(type, value, codingPath: codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try ColumnDecoding.integer(type, value, codingPath: codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try ColumnDecoding.integer(type, value, codingPath: codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try ColumnDecoding.integer(type, value, codingPath: codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try ColumnDecoding.integer(type, value, codingPath: codingPath) }
    func decode(_ type: Int128.Type) throws -> Int128 { try ColumnDecoding.integer(type, value, codingPath: codingPath) }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try ColumnDecoding.integer(type, value, codingPath: codingPath) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try ColumnDecoding.decode(type, from: value, kind: kind, codingPath: codingPath, json: json)
    }

    private func containerMismatch<T>(_ type: T.Type) -> DecodingError {
        .typeMismatch(type, DecodingError.Context(
            codingPath: codingPath,
            debugDescription: "the \(kind.rawValue) column holds a single value (\(ColumnDecoding.describe(value))), not a container"))
    }
}

extension Row {
    /// The text at `index`, or `nil` for NULL or a value of another type. GRDB's typed
    /// subscripts trap on a value they cannot convert, which a damaged or foreign file may hold
    /// anywhere.
    func text(at index: Int) -> String? {
        if case .string(let text) = (self[index] as DatabaseValue).storage { text } else { nil }
    }

    /// The blob at `index`, or `nil` for NULL or a value of another type (see ``text(at:)``).
    func blob(at index: Int) -> Data? {
        if case .blob(let data) = (self[index] as DatabaseValue).storage { data } else { nil }
    }
}
