import Foundation

/// The JSON numbers of a document that a `Double` holds only rounded, with their exact values,
/// so that generic values (``SnapshotValue/double(_:)``) carry every digit through a migration
/// or a conversion.
///
/// A `Decimal` of more than 15 significant digits (`12345678901234567890.12`) or an `Int128` /
/// `UInt128` beyond 64 bits is a JSON number that reads as a rounded ``SnapshotValue/double(_:)``.
/// Reading records the number under the double it rounds to; writing JSON writes the recorded
/// number wherever that double still stands, so an untouched field (renamed, moved or copied
/// by a step) keeps its digits. A double a step computed that happens to equal a recorded one
/// is written with the recorded digits, which read back as that same double.
///
/// Two different numbers that round to the same double (a long one and another, long or
/// short) cannot both be kept: writing that double throws rather than pick one. Numbers of
/// values that were read and then replaced (by a later journal record, say) still count.
package struct ExactNumbers: Sendable {
    /// The exact values of each rounded double, by the double's bit pattern: more than one
    /// when different numbers rounded to it.
    private var values: [UInt64: [Decimal]] = [:]
    /// The bit patterns of the doubles read that a double holds exactly (every other number):
    /// one of them that a long number also rounds to cannot take that number's digits.
    private var plain: Set<UInt64> = []

    /// Where writers find the numbers: the `userInfo` key of the JSON encoder.
    package static let userInfoKey = CodingUserInfoKey(rawValue: "GraphStore.ExactNumbers")!

    /// The `userInfo` of a JSON encoder that writes these numbers whole.
    package var userInfo: [CodingUserInfoKey: any Sendable] { isEmpty ? [:] : [Self.userInfoKey: self] }

    package var isEmpty: Bool { values.isEmpty }

    package init() {}

    /// Records the number whose JSON text is `text`, read as `double`, if the double lost
    /// some of its digits and a `Decimal` holds them all.
    ///
    /// - Complexity: O(1) for a text of at most 15 significant digits (every such number
    ///   survives a `Double`); O(length of the text) otherwise.
    mutating func record(_ text: some Collection<UInt8>, as double: Double) {
        guard double.isFinite else { return }
        guard Self.significantDigits(text) > 15 else {
            plain.insert(double.bitPattern)
            return
        }
        let string = String(decoding: text, as: UTF8.self)
        let posix = Locale(identifier: "en_US_POSIX")
        guard let exact = Decimal(string: string, locale: posix), !exact.isNaN,
              // A Decimal holds up to 38 or 39 digits; a longer number is not kept whole, and
              // no Swift type wrote it.
              Self.significantDigits(Array(exact.description.utf8)) == Self.significantDigits(text),
              Decimal(string: "\(double)", locale: posix) != exact
        else {
            plain.insert(double.bitPattern)
            return
        }
        let key = double.bitPattern
        if let held = values[key] {
            if !held.contains(exact) { values[key] = held + [exact] }
        } else {
            values[key] = [exact]
        }
    }

    /// Takes in the numbers of another document (a journal's beside its snapshot's).
    package mutating func merge(_ other: ExactNumbers) {
        values.merge(other.values) { held, new in held + new.filter { !held.contains($0) } }
        plain.formUnion(other.plain)
    }

    /// The exact value to write for `double`, or `nil` to write the double itself.
    ///
    /// - Throws: `EncodingError.invalidValue` when two different numbers rounded to `double`.
    func exact(for double: Double, codingPath: [any CodingKey]) throws -> Decimal? {
        guard let recorded = values[double.bitPattern] else { return nil }
        guard recorded.count == 1, !plain.contains(double.bitPattern) else {
            var numbers = recorded.sorted().map(\.description)
            if plain.contains(double.bitPattern) { numbers.insert("\(double)", at: 0) }
            throw EncodingError.invalidValue(double, EncodingError.Context(
                codingPath: codingPath,
                debugDescription: "the numbers \(numbers.joined(separator: " and ")) of the file all read as the double \(double); writing it would lose the digits of all but one"))
        }
        return recorded[0]
    }

    /// The significant digits of a JSON number's text: its mantissa's digits without the
    /// leading and trailing zeros.
    private static func significantDigits(_ text: some Collection<UInt8>) -> Int {
        var first: Int?, last = 0, position = 0
        for byte in text {
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { break }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { continue }
            if byte != UInt8(ascii: "0") {
                if first == nil { first = position }
                last = position
            }
            position += 1
        }
        guard let first else { return 0 }
        return last - first + 1
    }
}

extension SnapshotValue {
    /// Encodes a double, or the exact number `numbers` recorded for it.
    static func exact(_ value: Double, in numbers: ExactNumbers?, codingPath: [any CodingKey]) throws -> Decimal? {
        guard let numbers, !numbers.isEmpty else { return nil }
        return try numbers.exact(for: value, codingPath: codingPath)
    }
}
