import Foundation
import GRDB
import GraphStore

/// Decodes a stored column value as a generic snapshot value, by the column's kind: what the
/// snapshot would hold for the value the typed store decodes with ``ColumnDecoding``.
///
/// Dates become ``GraphStore/SnapshotValue/date(_:)`` and BLOBs
/// ``GraphStore/SnapshotValue/data(_:)``: a JSON snapshot writes them as seconds since 2001
/// and Base64, a property list natively. A `json` column is read by the parser that reads JSON
/// snapshots (``GraphStore/SnapshotValue/readJSON(_:)``), so its dates and data stay numbers
/// and Base64 strings, as in a JSON snapshot.
enum GenericColumnDecoding {
    /// Why a stored value does not fit its column; the caller names the entity and id.
    struct Mismatch: Error {
        let reason: String
    }

    /// The generic value for `value` stored in a column of `kind`, or `nil` for NULL (the key
    /// is then absent from the object, as a `nil` optional is); the numbers of a `json` column
    /// that a double rounds are added to `numbers`.
    ///
    /// - Throws: ``Mismatch`` when the stored value is not one the kind allows.
    /// - Complexity: O(size of the value).
    static func decode(_ value: DatabaseValue, kind: ColumnKind, numbers: inout ExactNumbers.Bag) throws -> SnapshotValue? {
        switch (kind, value.storage) {
        case (_, .null):
            return nil
        case (.integer, .int64(let number)):
            return .integer(number)
        case (.integer, .blob(let bytes)) where bytes.count == 8:
            let number = bigEndian(bytes)
            return Int64(exactly: number).map(SnapshotValue.integer) ?? .unsigned(number)
        case (.bool, .int64(let number)) where number == 0 || number == 1:
            return .bool(number == 1)
        case (.real, _), (.date, _):
            let number: Double
            switch value.storage {
            case .double(let stored): number = stored
            case .int64(let stored): number = Double(stored)
            case .blob(let bytes) where bytes.count == 8: number = Double(bitPattern: bigEndian(bytes))
            default: throw mismatch(value, kind)
            }
            return kind == .date ? .date(Date(timeIntervalSinceReferenceDate: number)) : .double(number)
        case (.text, .string(let text)):
            return .string(text)
        case (.text, .blob(let bytes)):
            return .string(String(decoding: bytes, as: UTF8.self))
        case (.blob, .blob(let bytes)):
            return .data(bytes)
        case (.json, .string(let text)):
            do {
                // The exact value of a number a double rounds (a long decimal) goes into
                // `numbers`, so a migration writes it back whole.
                return try SnapshotValue.readJSON(Data(text.utf8), into: &numbers)
            } catch {
                throw Mismatch(reason: "its json column does not hold JSON: \(error)")
            }
        default:
            throw mismatch(value, kind)
        }
    }

    /// The `fieldTypes` entry of a column of `kind`, if the kind needs one.
    static func fieldType(of kind: ColumnKind) -> String? {
        switch kind {
        case .date: "date"
        case .blob: "data"
        case .real: "real"
        // The typed store writes a text column from a `String` (or a type encoded as one): the
        // hint keeps a "NaN" in it a string when the snapshot is read again.
        case .text: "string"
        case .integer, .bool, .json: nil
        }
    }

    // MARK: - Private

    private static func bigEndian(_ bytes: Data) -> UInt64 {
        bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    private static func mismatch(_ value: DatabaseValue, _ kind: ColumnKind) -> Mismatch {
        Mismatch(reason: "its \(kind.rawValue) column holds \(ColumnDecoding.describe(value))")
    }
}
