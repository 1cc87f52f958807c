import Foundation
import GRDB
import GraphStore

/// Whether a value a Core Data import read fits its attribute's type as the app holds it
/// (`Int16` for Integer 16, `UUID` for UUID…, as ``EntitySourceGenerator`` types it).
///
/// SQLite keeps whatever a row was given: `70000` in an Integer 16 column, `5.5` in an Integer
/// 64 column, text in a UUID or Date column, a BLOB in a String column. Imported as stored,
/// such a value makes a snapshot the app's types refuse to open, or, where the type reads it
/// anyway (a `String` from a BLOB's Base64 text), a value the app never wrote. The import
/// refuses it instead, naming the row, and writes nothing.
enum CoreDataValueFit {
    /// The value to import for `value` (converted from `stored`) under `type`: `value`, or an
    /// integral REAL of an integer attribute as the integer; `nil` when it does not fit.
    static func fitted(_ value: SnapshotValue, stored: DatabaseValue, type: CoreDataModelDescription.AttributeType) -> SnapshotValue? {
        switch type {
        case .integer16: return integer(value, in: Int64(Int16.min)...Int64(Int16.max))
        case .integer32: return integer(value, in: Int64(Int32.min)...Int64(Int32.max))
        case .integer64: return integer(value, in: Int64.min...Int64.max)
        case .double, .decimal:
            if case .integer = value { return value }
            if case .double = value { return value }
            return nil
        case .float:
            if case .integer = value { return value }
            if case .double(let number) = value, !number.isFinite || abs(number) <= Double(Float.greatestFiniteMagnitude) { return value }
            return nil
        case .string:
            if case .string = value { return value }
            return nil
        case .boolean:
            if case .bool = value { return value }
            return nil
        case .date:
            // Seconds since 2001, from the date conversion.
            if case .double = value { return value }
            return nil
        case .binary, .transformable:
            if case .data = value { return value }
            return nil
        case .uuid:
            if case .string(let text) = value, UUID(uuidString: text) != nil { return value }
            return nil
        case .uri:
            if case .string(let text) = value, URL(string: text) != nil { return value }
            return nil
        }
    }

    /// The refusal of `stored`, which does not fit `type`, in the row `Z_PK pk` of `entity`;
    /// `subject` names where it is ("its attribute x (column ZX, Integer 16 in the model)").
    static func refusal(_ subject: String, stored: DatabaseValue, type: CoreDataModelDescription.AttributeType, path: String, entity: String, pk: Int64) -> GraphStoreError {
        .codingFailed(
            path: path, entity: entity, id: "Z_PK \(pk)",
            reason: "\(subject) holds \(reason(stored, type: type)); fix the row in the store, or the attribute's type in the model")
    }

    /// Why `stored` does not fit `type`, for an error naming the row.
    static func reason(_ stored: DatabaseValue, type: CoreDataModelDescription.AttributeType) -> String {
        let swiftType = EntitySourceGenerator.swiftType(type)
        let what: String
        switch type {
        case .integer16, .integer32, .integer64:
            if case .int64 = stored.storage {
                what = "beyond \(swiftType)'s range"
            } else {
                what = "not an integer \(swiftType) holds"
            }
        case .uuid: what = "neither a UUID's 16 bytes nor its text"
        case .uri: what = "not a URL's text"
        case .date: what = "not a number of seconds since 2001"
        case .boolean: what = "neither 0 nor 1"
        default: what = "not a value of type \(swiftType)"
        }
        return "\(describe(stored)), \(what): the app's \(swiftType) cannot read it, so it could not open the migrated store"
    }

    /// The stored value as ``CoreDataIDIdentity/describe(_:)`` has it, a long BLOB or text cut short.
    static func describe(_ stored: DatabaseValue) -> String {
        switch stored.storage {
        case .blob(let data) where data.count > 32: "a BLOB of \(data.count) bytes"
        case .string(let text) where text.count > 80: "TEXT '\(CoreDataIDIdentity.escaped(String(text.prefix(80))))…' (\(text.utf8.count) bytes)"
        default: CoreDataIDIdentity.describe(stored)
        }
    }

    private static func integer(_ value: SnapshotValue, in range: ClosedRange<Int64>) -> SnapshotValue? {
        switch value {
        case .integer(let number): return range.contains(number) ? value : nil
        case .double(let number):
            guard let exact = Int64(exactly: number), range.contains(exact) else { return nil }
            return .integer(exact)
        default: return nil
        }
    }
}
