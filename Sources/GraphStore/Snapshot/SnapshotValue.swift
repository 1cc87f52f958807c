import Foundation
internal import GraphStoreCoding

/// A value in a snapshot document, read without the app's Swift types: what migration and
/// inspection tools work with.
///
/// JSON cannot tell a date or `Data` from a number or a string, so a JSON snapshot reads dates
/// as ``double(_:)`` (seconds since 2001) and data as ``string(_:)`` (Base64); a property-list
/// snapshot reads them as ``date(_:)`` and ``data(_:)``. Writing a value back in the same
/// format gives the same document: a JSON number a `Double` holds only rounded (a long
/// `Decimal`, a 128-bit integer) reads as a rounded ``double(_:)``, and ``GenericSnapshot`` and
/// migrations write the exact number back in its place.
public enum SnapshotValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// An unsigned integer above `Int64.max`.
    case unsigned(UInt64)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case array([SnapshotValue])
    case object([String: SnapshotValue])

    /// The value under `key` of an object, or `nil`.
    public subscript(key: String) -> SnapshotValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }

    /// The value as JSON-compatible Foundation objects (for `JSONSerialization`): dates become
    /// seconds since 2001, data Base64, non-finite doubles the strings the snapshot uses.
    public var jsonObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .integer(let value): value
        case .unsigned(let value): value
        case .double(let value): value.isFinite ? value : Self.nonFiniteName(value) as Any
        case .string(let value): value
        case .data(let value): value.base64EncodedString()
        case .date(let value): value.timeIntervalSinceReferenceDate
        case .array(let values): values.map(\.jsonObject)
        case .object(let fields): fields.mapValues(\.jsonObject)
        }
    }
}

extension SnapshotValue {
    /// The string a JSON snapshot writes for a non-finite double: `"NaN"`, `"Infinity"` or
    /// `"-Infinity"`, as `JSONEncoder`'s non-conforming float strategy of the snapshot codec.
    package static func nonFiniteName(_ number: Double) -> String {
        FastJSONDecoder.NonConformingFloatStrings.snapshot.name(of: number)
    }

    /// The paths `fieldTypes` (an entity's) names strings, each split into its components
    /// (``pathComponents(_:)``), for ``withNonFiniteStringsRestored(at:)``.
    package static func stringPaths(of fieldTypes: [String: String]) -> [ArraySlice<String>] {
        fieldTypes.compactMap { $0.value == "string" ? pathComponents($0.key) : nil }
    }

    /// The object with each non-finite double at one of `paths` (the fields, nested fields and
    /// array elements an entity's type hints name `String`: ``stringPaths(of:)``) turned back
    /// into the string it was read from; the object itself when none holds one.
    ///
    /// A JSON snapshot writes a non-finite `Double` as the string `"NaN"`, `"Infinity"` or
    /// `"-Infinity"`, so generic reading takes those strings for doubles wherever they are. The
    /// type hints (``SnapshotHeaderV1/fieldTypesVersion`` 3 for top-level fields, 4 for nested
    /// ones and array elements) name each place declared `String` (`"string"`, even one `nil`
    /// in the objects they sample): there the value was the string (a tag named "Infinity").
    /// Any other value keeps the reading as a double, so nothing is turned into a string that
    /// was not declared one.
    ///
    /// - Complexity: O(the values on the paths); an object without a non-finite double on them
    ///   is not copied.
    package func withNonFiniteStringsRestored(at paths: [ArraySlice<String>]) -> SnapshotValue {
        var value = self
        for path in paths {
            if let restored = value.restoringNonFiniteStrings(at: path) { value = restored }
        }
        return value
    }

    /// The value, a non-finite double made the string JSON writes for it (a string id read
    /// from a journal record's deletions).
    func withNonFiniteNameRestored() -> SnapshotValue {
        guard case .double(let number) = self, !number.isFinite else { return self }
        return .string(Self.nonFiniteName(number))
    }

    /// The fields of an object with the non-finite doubles at `paths` made strings again, or
    /// `nil` when there are none.
    static func restoringNonFiniteStrings(_ fields: [String: SnapshotValue], at paths: [ArraySlice<String>]) -> [String: SnapshotValue]? {
        var value = SnapshotValue.object(fields)
        var changed = false
        for path in paths {
            guard let restored = value.restoringNonFiniteStrings(at: path) else { continue }
            value = restored
            changed = true
        }
        guard changed, case .object(let restored) = value else { return nil }
        return restored
    }

    /// This value with the non-finite doubles at `path` (components as
    /// ``pathComponents(_:)`` makes them; empty for this value itself) made strings, or `nil`
    /// when there are none there.
    private func restoringNonFiniteStrings(at path: ArraySlice<String>) -> SnapshotValue? {
        replacing(at: path) { value in
            guard case .double(let number) = value, !number.isFinite else { return nil }
            return .string(Self.nonFiniteName(number))
        }
    }
}

extension SnapshotValue: Codable {
    /// Set in a decoder's `userInfo` when the document is a property list, whose dates and data
    /// are native values.
    static let propertyListKey = CodingUserInfoKey(rawValue: "GraphStore.SnapshotValue.propertyList")!

    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var values: [SnapshotValue] = []
            values.reserveCapacity(array.count ?? 0)
            while !array.isAtEnd { values.append(try array.decode(SnapshotValue.self)) }
            self = .array(values)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var fields: [String: SnapshotValue] = [:]
            for key in object.allKeys { fields[key.stringValue] = try object.decode(SnapshotValue.self, forKey: key) }
            self = .object(fields)
            return
        }
        let single = try decoder.singleValueContainer()
        let isPropertyList = decoder.userInfo[Self.propertyListKey] as? Bool ?? false
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int64.self) {
            // A zero may be -0.0, which JSON writes as `-0` and a property list as a real: the
            // sign is kept, as the typed decoders keep it.
            if value == 0, let double = try? single.decode(Double.self), double.sign == .minus {
                self = .double(double)
            } else {
                self = .integer(value)
            }
        } else if let value = try? single.decode(UInt64.self) {
            self = .unsigned(value)
        } else if isPropertyList, let value = try? single.decode(Date.self) {
            self = .date(value)
        } else if isPropertyList, let value = try? single.decode(Data.self) {
            self = .data(value)
        } else if let value = try? single.decode(Double.self) {
            self = .double(value)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .array(let values):
            var container = encoder.unkeyedContainer()
            // Scalars through the container's own methods: the same text, without a nested
            // encoder per element.
            for value in values {
                switch value {
                case .null: try container.encodeNil()
                case .bool(let value): try container.encode(value)
                case .integer(let value): try container.encode(value)
                case .unsigned(let value): try container.encode(value)
                case .double(let value): try container.encode(value)
                case .string(let value): try container.encode(value)
                case .data, .date, .array, .object: try container.encode(value)
                }
            }
        case .object(let fields):
            var container = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in fields {
                let key = AnyKey(key)
                switch value {
                case .null: try container.encodeNil(forKey: key)
                case .bool(let value): try container.encode(value, forKey: key)
                case .integer(let value): try container.encode(value, forKey: key)
                case .unsigned(let value): try container.encode(value, forKey: key)
                case .double(let value): try container.encode(value, forKey: key)
                case .string(let value): try container.encode(value, forKey: key)
                case .data, .date, .array, .object: try container.encode(value, forKey: key)
                }
            }
        default:
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            case .unsigned(let value): try container.encode(value)
            case .double(let value): try container.encode(value)
            case .string(let value): try container.encode(value)
            case .data(let value): try container.encode(value)
            case .date(let value): try container.encode(value)
            case .array, .object: break
            }
        }
    }
}

/// Any string key.
struct AnyKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { stringValue = String(intValue) }
}

extension SnapshotValue {
    /// The value as a JSON snapshot holds it: dates as seconds since 2001 (``double(_:)``),
    /// data as Base64 (``string(_:)``); what migration steps see whatever the store's format
    /// (a property list's URLs and decimals are put in their JSON shapes first, by
    /// ``GenericSnapshot/withURLsAndDecimalsInJSONShape()``).
    ///
    /// - Complexity: O(size of the value).
    var jsonConventional: SnapshotValue {
        switch self {
        case .date(let date): .double(date.timeIntervalSinceReferenceDate)
        case .data(let data): .string(data.base64EncodedString())
        case .array(let values): .array(values.map(\.jsonConventional))
        case .object(let fields): .object(fields.mapValues(\.jsonConventional))
        default: self
        }
    }

    /// URLs and decimals in their property-list shapes as JSON holds them (a string, or for a
    /// URL with a base `{"relative": …, "base": …}`, and a number, the exact values of decimals a
    /// double rounds added to `numbers`), and dates and data too unless `keepingDatesAndData`.
    ///
    /// - Complexity: O(size of the value).
    package func jsonShaped(numbers: inout ExactNumbers.Bag, keepingDatesAndData: Bool, convertingURLs: Bool = true) -> SnapshotValue {
        switch self {
        case .date(let date): return keepingDatesAndData ? self : .double(date.timeIntervalSinceReferenceDate)
        case .data(let data): return keepingDatesAndData ? self : .string(data.base64EncodedString())
        case .array(let values):
            return .array(values.map { $0.jsonShaped(numbers: &numbers, keepingDatesAndData: keepingDatesAndData, convertingURLs: convertingURLs) })
        case .object(let fields):
            if convertingURLs, let url = propertyListURLInJSONShape { return url }
            if let decimal = decimalInPropertyListShape { return Self.jsonNumber(decimal, numbers: &numbers) }
            return .object(fields.mapValues { $0.jsonShaped(numbers: &numbers, keepingDatesAndData: keepingDatesAndData, convertingURLs: convertingURLs) })
        default: return self
        }
    }
}
