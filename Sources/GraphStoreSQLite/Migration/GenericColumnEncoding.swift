import Foundation
import GRDB
import GraphStore
import GraphStoreCoding

/// Chooses the ``ColumnKind`` of one top-level key from the generic values an entity's objects
/// hold there, so a snapshot becomes the table the typed store would have written.
///
/// The header's ``GraphStore/SnapshotHeaderV1/fieldTypes`` decide first: `"date"` gives a
/// `date` column, `"data"` a `blob` one, `"real"` a `real` one (a JSON document cannot tell
/// `3.0` from `3`), `"url"` and `"decimal"` a `json` one (as the typed store keeps them).
/// Without a hint the values decide:
///
/// | values                                           | kind      |
/// |--------------------------------------------------|-----------|
/// | only Booleans                                    | `bool`    |
/// | only integers                                    | `integer` |
/// | numbers, at least one not an integer             | `real`    |
/// | only strings (and, from JSON, `"NaN"`-like ones) | `text`    |
/// | only data / only dates (property lists)          | `blob` / `date` |
/// | an array or an object, or a mixture              | `json`    |
/// | a number a double holds only rounded (an `Int128` beyond 64 bits, a long `Decimal`) | `json` |
///
/// A number a double rounds (one the snapshot's exact numbers hold the digits
/// of) makes its column `json` whatever else the column holds, so its digits are kept as the
/// typed store keeps an `Int128` beyond 64 bits; under a `date` or `real` hint, which no such
/// number fits, it is refused when it is written (see ``GenericColumnEncoding``).
///
/// A key with no non-null value gets no column, as in the typed store.
struct ColumnKindInference {
    /// Where the values come from: a JSON document reads `"NaN"`, `"Infinity"` and
    /// `"-Infinity"` strings as doubles, so beside strings they are strings again.
    let isFromJSON: Bool
    private var sawBool = false
    private var sawInteger = false
    private var sawFiniteDouble = false
    private var sawNonFiniteDouble = false
    private var sawString = false
    private var sawData = false
    private var sawDate = false
    private var sawContainer = false
    private var sawRounded = false

    init(isFromJSON: Bool) {
        self.isFromJSON = isFromJSON
    }

    /// Counts one value in; `numbers` are the exact numbers of the object that holds it.
    ///
    /// - Complexity: O(1).
    mutating func add(_ value: SnapshotValue, numbers: ExactNumbers.Bag? = nil) {
        if GenericColumnEncoding.isRounded(value, numbers: numbers) { sawRounded = true }
        switch value {
        case .null: break
        case .bool: sawBool = true
        case .integer, .unsigned: sawInteger = true
        case .double(let number): if number.isFinite { sawFiniteDouble = true } else { sawNonFiniteDouble = true }
        case .string: sawString = true
        case .data: sawData = true
        case .date: sawDate = true
        case .array, .object: sawContainer = true
        }
    }

    /// The kind for the values seen, or `nil` when every value was null.
    func kind(hint: String?) -> ColumnKind? {
        let sawNumber = sawInteger || sawFiniteDouble || sawNonFiniteDouble
        let sawAny = sawNumber || sawBool || sawString || sawData || sawDate || sawContainer
        guard sawAny else { return nil }
        switch hint {
        case "date": return .date
        case "data": return .blob
        case "real": return .real
        // The typed store keeps a URL and a decimal as JSON (a string, or a URL with a base as
        // `{"relative": …, "base": …}`, and a number).
        case "url", "decimal": return .json
        default: break
        }
        if sawContainer || sawRounded { return .json }
        let others = [sawBool, sawNumber, sawString, sawData, sawDate].filter { $0 }.count
        if others == 1 {
            if sawBool { return .bool }
            if sawString { return .text }
            if sawData { return .blob }
            if sawDate { return .date }
            return sawFiniteDouble || sawNonFiniteDouble ? .real : .integer
        }
        // From JSON, a non-finite double beside strings was the string "NaN" (or an infinity).
        if isFromJSON, sawString, sawNonFiniteDouble, !sawInteger, !sawFiniteDouble, !sawBool, !sawData, !sawDate {
            return .text
        }
        return .json
    }
}

/// Encodes generic snapshot values as column values of a given kind: what ``RowEncoder`` writes
/// for the same value of the app's type.
enum GenericColumnEncoding {
    /// Why a value does not fit its column; the caller names the entity and id.
    struct Mismatch: Error {
        let reason: String
    }

    /// The column value for `value` in a column of `kind`.
    ///
    /// A `json` column's text is what the snapshot document holds (``SQLiteJSON``) with sorted
    /// keys, written by ``FastJSONEncoder``.
    ///
    /// - Throws: ``Mismatch`` when the value cannot be stored as `kind` (a string that is not
    ///   Base64 in a `blob` column, text in a `date` column, a number with more digits than a
    ///   double keeps in a `real` or `date` column); the JSON encoder's errors.
    /// - Complexity: O(size of the value).
    static func encode(_ value: SnapshotValue, as kind: ColumnKind, numbers: ExactNumbers.Bag? = nil) throws -> ColumnValue {
        if case .null = value { return .null }
        if kind != .json, isRounded(value, numbers: numbers), case .double(let number) = value {
            let exact = (try? numbers?.exact(for: number, codingPath: []))?.description ?? "a longer number"
            throw Mismatch(
                reason: "the number \(exact) has more digits than a double keeps; a \(kind.rawValue) column (as the header's field types make it) would round it to \(number)")
        }
        switch (kind, value) {
        case (.json, _):
            // A double `numbers` holds the exact value of (a long decimal) is written whole.
            let text = String(decoding: try FastJSONEncoder.encode(ExactlyEncoded(value: value, numbers: numbers, sortsKeys: true)), as: UTF8.self)
            return ColumnValue(value: text.databaseValue, kind: .json)
        case (.integer, .integer(let number)):
            return .integer(number)
        case (.integer, .unsigned(let number)):
            return ColumnEncoding.unsigned(number)
        case (.bool, .bool(let flag)):
            return .bool(flag)
        case (.real, _), (.date, _):
            guard let seconds = double(value) else { throw mismatch(value, kind) }
            return .real(seconds, kind: kind)
        case (.text, .string(let text)):
            return .text(text)
        case (.text, .double(let number)) where !number.isFinite:
            return .text(SnapshotValue.nonFiniteName(number))
        case (.blob, .data(let bytes)):
            return .blob(bytes)
        case (.blob, .string(let text)):
            guard let bytes = Data(base64Encoded: text) else {
                throw Mismatch(reason: "the header's field types make it data, but its string is not Base64")
            }
            return .blob(bytes)
        default:
            throw mismatch(value, kind)
        }
    }

    /// Whether `value` is a double that stands for a number it rounds: one `numbers` (the
    /// exact numbers of the object holding it) keep the digits of.
    ///
    /// - Complexity: O(1).
    static func isRounded(_ value: SnapshotValue, numbers: ExactNumbers.Bag?) -> Bool {
        guard let numbers, case .double(let number) = value else { return false }
        do {
            return try numbers.exact(for: number, codingPath: []) != nil
        } catch {
            // Two numbers of the object round to it: both are long. Writing the JSON says so.
            return true
        }
    }

    // MARK: - Private

    /// A number (or date) as a double, including the non-finite names JSON uses.
    private static func double(_ value: SnapshotValue) -> Double? {
        switch value {
        case .double(let number): number
        case .integer(let number): Double(number)
        case .unsigned(let number): Double(number)
        case .date(let date): date.timeIntervalSinceReferenceDate
        case .string("NaN"): .nan
        case .string("Infinity"): .infinity
        case .string("-Infinity"): -.infinity
        default: nil
        }
    }

    private static func mismatch(_ value: SnapshotValue, _ kind: ColumnKind) -> Mismatch {
        Mismatch(reason: "the column holds \(kind.rawValue) values, but this object's value is \(describe(value))")
    }

    /// A short description of a generic value for messages.
    static func describe(_ value: SnapshotValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "the Boolean \(flag)"
        case .integer(let number): "the integer \(number)"
        case .unsigned(let number): "the integer \(number)"
        case .double(let number): "the number \(number)"
        case .string(let text): "the string \"\(text.count > 40 ? text.prefix(40) + "…" : text)\""
        case .data(let bytes): "\(bytes.count) byte(s) of data"
        case .date(let date): "the date \(date.timeIntervalSinceReferenceDate)"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
