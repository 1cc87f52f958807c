import Foundation
import GRDB
import GraphStore
import GraphStoreCoding

/// How the values of one column are stored, as recorded in `graphstore_columns`: enough for a
/// tool without the app's types to turn a row back into the snapshot document's JSON values.
///
/// | kind      | declared type | values                                                          |
/// |-----------|---------------|-----------------------------------------------------------------|
/// | `integer` | INTEGER       | signed 64-bit integers; an unsigned one above `Int64.max` as an 8-byte big-endian BLOB |
/// | `bool`    | INTEGER       | 0 or 1                                                          |
/// | `real`    | REAL          | doubles; NaN and -0.0 as an 8-byte big-endian IEEE 754 BLOB      |
/// | `date`    | REAL          | seconds since 2001-01-01T00:00:00Z, exactly `timeIntervalSinceReferenceDate` (specials as for `real`) |
/// | `text`    | TEXT          | strings (UUIDs as `uuidString`); a string containing NUL as a BLOB of its UTF-8 |
/// | `blob`    | BLOB          | `Data`                                                          |
/// | `json`    | TEXT          | nested values and arrays as JSON, with the snapshot codec's strategies; an `Int128` or `UInt128` beyond 64 bits as its JSON number |
///
/// Every kind may hold NULL: an absent optional.
enum ColumnKind: String, Sendable, CaseIterable {
    case integer, real, text, blob, bool, json, date

    /// The type the column is declared with in `CREATE TABLE` / `ALTER TABLE`.
    var declaredType: String {
        switch self {
        case .integer, .bool: "INTEGER"
        case .real, .date: "REAL"
        case .text, .json: "TEXT"
        case .blob: "BLOB"
        }
    }
}

/// One encoded top-level value: what SQLite stores, and its kind unless it is NULL.
struct ColumnValue: Sendable {
    var value: DatabaseValue
    /// `nil` for NULL, which fits a column of any kind.
    var kind: ColumnKind?

    static let null = ColumnValue(value: .null, kind: nil)

    static func bool(_ value: Bool) -> ColumnValue {
        ColumnValue(value: Int64(value ? 1 : 0).databaseValue, kind: .bool)
    }

    static func integer(_ value: Int64) -> ColumnValue {
        ColumnValue(value: value.databaseValue, kind: .integer)
    }

    /// A string in a `text` column. SQLite's C API (as GRDB calls it) ends text at a NUL
    /// character, so a string containing one is kept as a BLOB of its UTF-8 instead.
    static func text(_ value: String) -> ColumnValue {
        guard value.utf8.contains(0) else { return ColumnValue(value: value.databaseValue, kind: .text) }
        return ColumnValue(value: Data(value.utf8).databaseValue, kind: .text)
    }

    static func blob(_ value: Data) -> ColumnValue {
        ColumnValue(value: value.databaseValue, kind: .blob)
    }

    /// A double in a `real` or `date` column. SQLite turns NaN into NULL and, in a REAL column,
    /// -0.0 into 0, so those two are kept as their bit pattern in an 8-byte BLOB instead.
    static func real(_ value: Double, kind: ColumnKind = .real) -> ColumnValue {
        guard value.isNaN || (value == 0 && value.sign == .minus) else {
            return ColumnValue(value: value.databaseValue, kind: kind)
        }
        return ColumnValue(value: withUnsafeBytes(of: value.bitPattern.bigEndian) { Data($0) }.databaseValue, kind: kind)
    }

    /// The approximate number of bytes SQLite stores for the value.
    var byteCount: Int {
        switch value.storage {
        case .null: 0
        case .int64, .double: 8
        case .string(let text): text.utf8.count
        case .blob(let data): data.count
        }
    }
}

/// The JSON coding of nested values: the snapshot document's own coders, ``FastJSONEncoder`` and
/// ``FastJSONDecoder``, so a `json` column holds exactly what the snapshot document holds for the
/// same value.
///
/// Stores written before used Foundation's `JSONEncoder` with the snapshot's strategies, whose
/// text is the same but for a `URL` with a base: `JSONEncoder` writes its absolute string, which
/// reads back as another URL (no base, not `==`), where ours writes the URL's own `Codable` form,
/// `{"relative": …, "base": …}`. Ours reads both, so those stores open as they are.
enum SQLiteJSON {
    /// Writes a `json` column's text (``FastJSONEncoder``).
    struct Writer {
        /// The JSON text of `value`.
        ///
        /// `FastJSONEncoder` refuses a few things `JSONEncoder` writes (containers used out of
        /// order): such a value is written by `JSONEncoder`, as the snapshot codec does and as
        /// stores did before, provided the text is JSON (`JSONEncoder` writes a NaN `Decimal` as a
        /// bare `NaN`). A URL with a base inside such a value then loses its base, as it always
        /// did there.
        ///
        /// - Throws: `EncodingError` as ``FastJSONEncoder/encode(_:userInfo:)`` throws it.
        /// - Complexity: O(size of the text).
        func encode<T: Encodable>(_ value: T) throws -> Data {
            do {
                return try FastJSONEncoder.encode(value)
            } catch {
                if let data = try? SnapshotCodec.makeJSONEncoder().encode(value), (try? SnapshotValue.readJSON(data)) != nil { return data }
                throw error
            }
        }
    }

    /// Reads a `json` column's text (``FastJSONDecoder``).
    struct Reader {
        /// A `T` from the JSON text `data`.
        ///
        /// - Throws: `DecodingError` as ``FastJSONDecoder/decode(_:from:userInfo:nonConformingFloats:maxDepth:parallel:)``
        ///   throws it.
        /// - Complexity: O(size of the text), plus the decoding.
        func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T { try FastJSONDecoder.decode(type, from: data) }
    }

    static func makeEncoder() -> Writer { Writer() }
    static func makeDecoder() -> Reader { Reader() }
}
