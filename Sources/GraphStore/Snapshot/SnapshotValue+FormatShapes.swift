import Foundation

/// URLs and decimals, which JSON and property lists write in different shapes: `JSONEncoder`
/// (and a JSON snapshot) writes a `URL` as its absolute string and a `Decimal` as a number,
/// while their `Codable` forms, which a property list holds, are dictionaries: `{"relative": …}`
/// (with `"base"` for a relative URL) and the decimal's parts (`exponent`, `length`,
/// `isNegative`, `isCompact`, `mantissa`).
///
/// A URL with a base is the exception: its absolute string would read back without the base,
/// a different URL (not `==`), so a JSON snapshot, a journal and a SQLite `json` column hold
/// it in its `Codable` form too, `{"relative": …, "base": …}`, with the base in JSON's shape (a
/// string, or that form again): what `URL.encode(to:)` writes through `JSONEncoder`. Between
/// the formats only the base's shape changes. A URL without a base stays a string in JSON, byte
/// for byte as `JSONEncoder` writes it.
///
/// Going from a property list to the JSON conventions, the shapes are recognised wherever they
/// stand (a dictionary with exactly those keys and value types). Going from JSON to a property
/// list needs the header's type hints (``FieldTypeProbe``): a string or a number says nothing
/// by itself.
extension SnapshotValue {
    /// The keys of a `Decimal`'s parts.
    private static let decimalPartKeys: Set<String> = ["exponent", "length", "isNegative", "isCompact", "mantissa"]

    /// This value, a URL in its property-list shape (`{"relative": …}`, with `"base"`, in that
    /// shape too, for a URL with a base), in the shape JSON holds it: the string for a URL
    /// without a base, `{"relative": …, "base": …}` with the base in JSON's shape for one with a
    /// base; `nil` for another value.
    ///
    /// ```swift
    /// // {"relative": "https://a.com/"}                                → "https://a.com/"
    /// // {"relative": "b.txt", "base": {"relative": "https://a.com/"}} → {"relative": "b.txt", "base": "https://a.com/"}
    /// ```
    ///
    /// - Complexity: O(depth of the bases).
    var propertyListURLInJSONShape: SnapshotValue? {
        guard case .object(let fields) = self, case .string(let relative)? = fields["relative"] else { return nil }
        switch fields.count {
        case 1:
            // Without a base, the relative string is the absolute one.
            return .string(relative)
        case 2:
            guard let base = fields["base"]?.propertyListURLInJSONShape, URL(string: relative, relativeTo: base.urlInJSONShape) != nil else {
                return nil
            }
            return .object(["relative": .string(relative), "base": base])
        default:
            return nil
        }
    }

    /// This value, a URL in JSON's shape (a string; or `{"relative": …}`, with a `"base"` in
    /// JSON's shape, for a URL with a base), in the shape a property list holds it:
    /// `{"relative": …}`, with the base in that shape too; `nil` for another value.
    ///
    /// A URL's string that reads from JSON as a non-finite double (`"NaN"`, `"Infinity"`,
    /// `"-Infinity"`, which JSON's readers take for one) is that string again: no URL is a number.
    ///
    /// - Complexity: O(depth of the bases).
    var jsonURLInPropertyListShape: SnapshotValue? {
        switch self {
        case .string, .double:
            return urlText.map { .object(["relative": .string($0)]) }
        case .object(let fields):
            guard let relative = fields["relative"]?.urlText else { return nil }
            switch fields.count {
            case 1:
                return .object(["relative": .string(relative)])
            case 2:
                guard let base = fields["base"]?.jsonURLInPropertyListShape else { return nil }
                return .object(["relative": .string(relative), "base": base])
            default:
                return nil
            }
        default:
            return nil
        }
    }

    /// A URL's string in JSON: a string, or the name of a non-finite double read from one.
    private var urlText: String? {
        switch self {
        case .string(let text): text
        case .double(let number) where !number.isFinite: Self.nonFiniteName(number)
        default: nil
        }
    }

    /// The URL this value, in JSON's shape, stands for, or `nil`.
    private var urlInJSONShape: URL? {
        switch self {
        case .string(let text):
            return URL(string: text)
        case .object(let fields):
            guard case .string(let relative)? = fields["relative"] else { return nil }
            guard let base = fields["base"] else { return fields.count == 1 ? URL(string: relative) : nil }
            guard fields.count == 2, let baseURL = base.urlInJSONShape else { return nil }
            return URL(string: relative, relativeTo: baseURL)
        default:
            return nil
        }
    }

    /// The decimal whose property-list parts this value is, or `nil` for another value (and
    /// for a NaN, which JSON cannot hold).
    var decimalInPropertyListShape: Decimal? {
        guard case .object(let fields) = self, fields.count == Self.decimalPartKeys.count, Set(fields.keys) == Self.decimalPartKeys,
              case .integer(let exponent)? = fields["exponent"], (-128...127).contains(exponent),
              case .integer(let length)? = fields["length"], (0...8).contains(length),
              case .bool(let negative)? = fields["isNegative"], case .bool? = fields["isCompact"],
              case .array(let words)? = fields["mantissa"], words.count == 8,
              // Length 0 is zero, or NaN when negative.
              length > 0 || !negative
        else { return nil }
        // The mantissa's 16-bit words, least significant first.
        var significand = Decimal(0)
        for word in words[..<Int(length)].reversed() {
            guard case .integer(let value) = word, (0...0xFFFF).contains(value) else { return nil }
            significand = significand * 65_536 + Decimal(value)
        }
        return Decimal(sign: negative ? .minus : .plus, exponent: Int(exponent), significand: significand)
    }

    /// The value with the URL or decimal in property-list shape at `path` (the components of a
    /// field-types path, ``pathComponents(_:)``) in its JSON shape; any other value there is
    /// left as it is.
    ///
    /// - Complexity: O(size of the values on the path).
    func jsonShaped(at path: ArraySlice<String>, numbers: inout ExactNumbers.Bag) -> SnapshotValue {
        replacing(at: path) { value in
            if let url = value.propertyListURLInJSONShape { return url }
            if let decimal = value.decimalInPropertyListShape { return Self.jsonNumber(decimal, numbers: &numbers) }
            return nil
        } ?? self
    }

    /// The property-list shape of `decimal`: its parts, as a property-list encoder writes them.
    static func propertyListShape(of decimal: Decimal) -> SnapshotValue? {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        guard let data = try? encoder.encode([decimal]), case .array(let values)? = try? readPropertyList(data), values.count == 1 else {
            return nil
        }
        return values[0]
    }

    /// A decimal as a JSON snapshot holds it: an integer when it is one that fits, otherwise a
    /// double, whose exact value goes into `numbers` when the double rounds it.
    static func jsonNumber(_ decimal: Decimal, numbers: inout ExactNumbers.Bag) -> SnapshotValue {
        let text = decimal.description
        if let integer = Int64(text) { return .integer(integer) }
        guard let double = Double(text) else { return .string(text) }
        numbers.record(Array(text.utf8), as: double)
        return .double(double)
    }

    /// The decimal a JSON number stands for, with the exact value `numbers` recorded for a
    /// rounded double.
    ///
    /// - Throws: `EncodingError.invalidValue` when two different numbers rounded to the double.
    func decimalInJSONShape(numbers: ExactNumbers.Bag?) throws -> Decimal? {
        let posix = Locale(identifier: "en_US_POSIX")
        switch self {
        case .integer(let value): return Decimal(value)
        case .unsigned(let value): return Decimal(value)
        case .double(let value):
            guard value.isFinite else { return nil }
            if let exact = try numbers?.exact(for: value, codingPath: []) { return exact }
            return Decimal(string: "\(value)", locale: posix)
        default: return nil
        }
    }
}
