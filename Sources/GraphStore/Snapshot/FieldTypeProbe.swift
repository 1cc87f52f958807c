import Foundation

/// Finds where an entity's values hold `Date` and `Data`, so tools without the app's types can
/// tell a JSON number that is a date, or a JSON string that is Base64 data, from the others.
///
/// Paths are keys joined by `.`, with `[]` for array elements: `createdAt`, `attachments[].bytes`.
/// A top-level `Double` or `Float` (or a single-value wrapper of one) is recorded as `real`, since
/// JSON writes `3.0` as `3`: tools give it a floating-point column. A `URL` is recorded as `url`
/// and a `Decimal` as `decimal`: JSON writes them as a string and a number, a property list as
/// dictionaries (`{"relative": …}`, and the decimal's parts), so a conversion between the two
/// formats needs to know them. (A URL with a base is `{"relative": …, "base": …}` in both, its
/// base a string in JSON: the path names the URL, never its members, so neither `relative`
/// nor `base` is taken for a field of its own.) An optional field that is `nil` is recorded by its declared type
/// when the type's encoding names it (`encodeIfPresent`, as synthesized `Codable` does), so a
/// field that is rarely set is found too (an optional encoded as a value, `nil` included, counts
/// by its wrapped type), and an array or set names its elements' declared type even when it is
/// empty in every sampled object (`dates[]`). A dictionary with `String`, `Int` or
/// `CodingKeyRepresentable` keys names its values' declared type at one path for all its keys
/// (`prices{}`), since its keys differ from object to object: an empty dictionary, or one
/// whose keys no sampled object holds, is found too. A field declared `String`, at the top level, in a
/// nested value, as an array's elements or a dictionary's values (`address.city`, `labels[]`,
/// `attributes{}`), is recorded as `string`,
/// since JSON writes a non-finite double as the string `"NaN"`: only the declared type tells
/// which of the two such a string is. Not recorded: a custom type that encodes a string, whatever
/// it holds; a nested place where any sampled object holds a floating-point number instead (a
/// custom encoding that writes either); and what a dictionary with other keys holds (it is
/// written as an array of keys and values, whose keys share the path with its values: a
/// conversion leaves them in their JSON shapes, which the app reads in a property list marked
/// ``SnapshotHeaderV1/jsonShapedValues``).
/// The result goes into ``SnapshotHeaderV1/fieldTypes``.
package enum FieldTypeProbe {
    /// `path → "date" | "data" | "url" | "decimal" | "real" | "string"` found in `objects` (at
    /// most `limit` of them are probed).
    ///
    /// - Complexity: O(size of the probed objects).
    static func fieldTypes(of objects: some Sequence<any Entity>, limit: Int = 64) -> [String: String] {
        let recorder = Recorder()
        for object in objects.prefix(limit) {
            try? object.encode(to: ProbeEncoder(recorder: recorder, path: ""))
        }
        return recorder.types
    }

    /// `recorded` (an entity's field types found before, as a SQLite store keeps them) with
    /// those found in `objects` (at most `limit` of them) added: a path found now takes the
    /// type found now, a path found before and not now keeps its type, except that a nested
    /// place found to hold a floating-point number is no longer named `string`. Probing
    /// objects one write at a time so gathers what probing them all at once would find.
    ///
    /// - Complexity: O(size of the probed objects + recorded paths).
    package static func merged(_ recorded: [String: String], probing objects: some Sequence<any Entity>, limit: Int = 64) -> [String: String] {
        let recorder = Recorder()
        for object in objects.prefix(limit) {
            try? object.encode(to: ProbeEncoder(recorder: recorder, path: ""))
        }
        var merged = recorded
        for path in recorder.numberPaths where merged[path] == "string" { merged[path] = nil }
        merged.merge(recorder.types) { _, found in found }
        return merged
    }

    /// Collects paths while one probe runs; used on one thread only.
    final class Recorder {
        var types: [String: String] = [:]
        /// Nested places where a sampled object held a floating-point number: never named
        /// `string`, so that no double is taken for a string there.
        var numberPaths: Set<String> = []
        /// How many dictionaries written as arrays of keys and values the probe is inside:
        /// nothing in them is named, since keys and values share the path.
        var dictionaryDepth = 0

        /// Names the place `path` declared `String`, unless another type's hint is there, a
        /// sampled object held a number there, or it is inside a dictionary written as an array.
        func recordString(at path: String) {
            guard dictionaryDepth == 0, types[path] == nil, !numberPaths.contains(path) else { return }
            types[path] = "string"
        }

        /// Names the place `path` as holding `type`, unless it is inside a dictionary written as
        /// an array, whose keys share the path with its values: a hint there would turn the
        /// keys into the values' type in a conversion.
        func record(_ type: String, at path: String) {
            guard dictionaryDepth == 0 else { return }
            types[path] = type
        }

        /// Whether `type` is `String` or `String?`, the declared types named `string`.
        static func isString<T>(_ type: T.Type) -> Bool {
            type == String.self || type == String?.self
        }

        /// Notes a floating-point number at the nested place `path`.
        func recordNumber(at path: String) {
            guard dictionaryDepth == 0 else { return }
            numberPaths.insert(path)
            if types[path] == "string" { types[path] = nil }
        }
    }

    /// Records the declared type `type` of the nested place `path` (an array's elements, a
    /// dictionary's values), which holds no value in the sampled objects or many: `string` for
    /// a `String`, else as ``ProbeEncoder/record(_:recorder:path:isTopLevel:)`` does.
    static func recordDeclared<T>(_ type: T.Type, recorder: Recorder, at path: String) {
        if Recorder.isString(T.self) {
            recorder.recordString(at: path)
        } else {
            _ = ProbeEncoder.record(T.self, recorder: recorder, path: path, isTopLevel: false)
        }
    }

    /// The types every encoder handles itself.
    static let primitives: Set<ObjectIdentifier> = [
        ObjectIdentifier(String.self), ObjectIdentifier(Bool.self), ObjectIdentifier(Double.self), ObjectIdentifier(Float.self),
        ObjectIdentifier(Int.self), ObjectIdentifier(Int8.self), ObjectIdentifier(Int16.self), ObjectIdentifier(Int32.self),
        ObjectIdentifier(Int64.self), ObjectIdentifier(UInt.self), ObjectIdentifier(UInt8.self), ObjectIdentifier(UInt16.self),
        ObjectIdentifier(UInt32.self), ObjectIdentifier(UInt64.self),
    ]

    struct ProbeEncoder: Encoder {
        let recorder: Recorder
        let path: String
        /// Whether `path` is a top-level key (or a single-value wrapper at one).
        var isTopLevel = false
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Keyed<Key>(recorder: recorder, path: path))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer { Unkeyed(recorder: recorder, path: path + "[]") }
        func singleValueContainer() -> any SingleValueEncodingContainer { Single(recorder: recorder, path: path, isTopLevel: isTopLevel) }

        /// Records the type `type` at `path` when it is one a tool must know (a date, data, a
        /// URL, a decimal, a top-level double); `false` for any other type.
        static func record<T>(_ type: T.Type, recorder: Recorder, path: String, isTopLevel: Bool) -> Bool {
            if let optional = T.self as? any ProbedOptional.Type {
                // A `nil` encoded as a value (a custom `encode(to:)`): its wrapped type.
                return optional.recordWrapped(recorder: recorder, path: path, isTopLevel: isTopLevel)
            }
            if let array = T.self as? any ProbedArray.Type {
                // Its elements' type, which an array empty (or `nil`) in every sampled object
                // tells no other way; then the elements themselves, if any, are probed.
                array.recordElements(recorder: recorder, path: path)
                return false
            }
            if let dictionary = T.self as? any ProbedDictionary.Type {
                // Likewise its values' type, at one path for all its keys (`prices{}`), which
                // a dictionary empty in every sampled object, or holding other keys, tells no
                // other way; then its values, if any, are probed.
                dictionary.recordValues(recorder: recorder, path: path)
                return false
            }
            if T.self == Date.self {
                recorder.record("date", at: path)
            } else if T.self == Data.self {
                recorder.record("data", at: path)
            } else if T.self == URL.self {
                recorder.record("url", at: path)
            } else if T.self == Decimal.self {
                recorder.record("decimal", at: path)
            } else if T.self is any BinaryFloatingPoint.Type {
                if isTopLevel { recorder.record("real", at: path) } else { recorder.recordNumber(at: path) }
            } else {
                return false
            }
            return true
        }

        /// Records `value` at `path` when it is a date or data (or a top-level double); otherwise
        /// probes inside it.
        static func probe<T: Encodable>(_ value: T, recorder: Recorder, path: String, isTopLevel: Bool = false) throws {
            if record(T.self, recorder: recorder, path: path, isTopLevel: isTopLevel) {
                return
            } else if primitives.contains(ObjectIdentifier(T.self)) {
                // Leaves: encoding them again would only call back here.
                return
            } else if let dictionary = value as? any ProbedDictionary {
                if try dictionary.probeValues(recorder: recorder, path: path) { return }
                // Written as an array of keys and values: what it holds is not named.
                recorder.dictionaryDepth += 1
                defer { recorder.dictionaryDepth -= 1 }
                try value.encode(to: ProbeEncoder(recorder: recorder, path: path, isTopLevel: isTopLevel))
            } else {
                try value.encode(to: ProbeEncoder(recorder: recorder, path: path, isTopLevel: isTopLevel))
            }
        }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let recorder: Recorder
        let path: String
        var codingPath: [any CodingKey] { [] }

        private func child(_ key: Key) -> String { path.isEmpty ? key.stringValue : path + "." + key.stringValue }

        mutating func encodeNil(forKey key: Key) throws {}
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            if Recorder.isString(T.self) {
                // JSON writes a non-finite double as the string `"NaN"`, so only a field
                // declared `String` tells that such a string is one.
                recorder.recordString(at: child(key))
                return
            }
            try ProbeEncoder.probe(value, recorder: recorder, path: child(key), isTopLevel: path.isEmpty)
        }
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            if let value {
                try encode(value, forKey: key)
            } else {
                // A `nil` still tells its declared type.
                _ = ProbeEncoder.record(T.self, recorder: recorder, path: child(key), isTopLevel: path.isEmpty)
            }
        }
        // The protocol's overloads for the standard types do not call the generic one: a
        // `Double?` or `Float?` that is `nil` would tell nothing.
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
            recorder.recordString(at: child(key))
        }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
            _ = ProbeEncoder.record(Double.self, recorder: recorder, path: child(key), isTopLevel: path.isEmpty)
        }
        mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
            _ = ProbeEncoder.record(Float.self, recorder: recorder, path: child(key), isTopLevel: path.isEmpty)
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>(recorder: recorder, path: child(key)))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Unkeyed(recorder: recorder, path: child(key) + "[]")
        }
        mutating func superEncoder() -> any Encoder { ProbeEncoder(recorder: recorder, path: path) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { ProbeEncoder(recorder: recorder, path: child(key), isTopLevel: path.isEmpty) }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let recorder: Recorder
        let path: String
        var codingPath: [any CodingKey] { [] }
        var count = 0

        mutating func encodeNil() throws { count += 1 }
        mutating func encode<T: Encodable>(_ value: T) throws {
            count += 1
            if Recorder.isString(T.self) {
                recorder.recordString(at: path)
                return
            }
            try ProbeEncoder.probe(value, recorder: recorder, path: path)
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            count += 1
            return KeyedEncodingContainer(Keyed<NestedKey>(recorder: recorder, path: path))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            count += 1
            return Unkeyed(recorder: recorder, path: path + "[]")
        }
        mutating func superEncoder() -> any Encoder { ProbeEncoder(recorder: recorder, path: path) }
    }

    struct Single: SingleValueEncodingContainer {
        let recorder: Recorder
        let path: String
        var isTopLevel = false
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil() throws {}
        mutating func encode<T: Encodable>(_ value: T) throws {
            try ProbeEncoder.probe(value, recorder: recorder, path: path, isTopLevel: isTopLevel)
        }
    }
}

extension SnapshotValue {
    /// The value with the numbers at `date` paths turned into dates, the Base64 strings at
    /// `data` paths into data, and the URLs at `url` paths (strings, or for a URL with a base
    /// `{"relative": …, "base": …}`) and numbers at `decimal` paths into their property-list
    /// shapes, following ``SnapshotHeaderV1/fieldTypes`` (a decimal a double rounds takes its
    /// exact value from `numbers`). Used when a JSON document becomes a property list.
    ///
    /// - Parameter paths: An entity's field types as ``typedPaths(_:)`` prepares them, once for
    ///   all its objects.
    /// - Throws: `EncodingError.invalidValue` for a decimal whose double two different numbers
    ///   of the file round to.
    func typed(by paths: [TypedPath], numbers: ExactNumbers.Bag? = nil) throws -> SnapshotValue {
        try paths.reduce(self) { value, path in try value.converting(at: path.components, to: path.type, numbers: numbers) }
    }

    /// A field-types entry with its path split into components (``pathComponents(_:)``).
    struct TypedPath {
        let components: ArraySlice<String>
        let type: String
    }

    /// The entries of an entity's field types that convert a value on the way to a property
    /// list (not `string`, which converts none), each path split once.
    static func typedPaths(_ fieldTypes: [String: String]) -> [TypedPath] {
        fieldTypes.compactMap { $0.value == "string" ? nil : TypedPath(components: pathComponents($0.key), type: $0.value) }
    }

    private func converting(at path: ArraySlice<String>, to type: String, numbers: ExactNumbers.Bag?) throws -> SnapshotValue {
        try replacing(at: path) { value in
            switch (value, type) {
            case (.double(let seconds), "date"): return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case (.integer(let seconds), "date"): return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
            case (.string(let text), "data"): return Data(base64Encoded: text).map(SnapshotValue.data)
            case (.integer(let number), "real"): return .double(Double(number))
            case (.unsigned(let number), "real"): return .double(Double(number))
            case (.string, "url"), (.object, "url"), (.double, "url"): return value.jsonURLInPropertyListShape
            case (.integer, "decimal"), (.unsigned, "decimal"), (.double, "decimal"):
                return try value.decimalInJSONShape(numbers: numbers).flatMap(Self.propertyListShape(of:))
            default: return nil
            }
        } ?? self
    }
}

/// An array or set, for the probe to name its elements' declared type (`dates[]`: `date`).
protocol ProbedArray: Sequence {
    static func recordElements(recorder: FieldTypeProbe.Recorder, path: String)
}

extension ProbedArray {
    static func recordElements(recorder: FieldTypeProbe.Recorder, path: String) {
        FieldTypeProbe.recordDeclared(Element.self, recorder: recorder, at: path + "[]")
    }
}

extension Array: ProbedArray {}
extension Set: ProbedArray {}
extension ContiguousArray: ProbedArray {}

/// A dictionary, whose keys the probe does not take for fields: the values of one with
/// `String`, `Int` or `CodingKeyRepresentable` keys, which every encoder writes as a keyed
/// container, are named at one path for all keys (`prices{}`); one with other keys is written
/// as an array of keys and values, and what it holds is not named.
protocol ProbedDictionary {
    /// Records the values' declared type at `path{}`, for a dictionary written keyed.
    static func recordValues(recorder: FieldTypeProbe.Recorder, path: String)
    /// Probes each value at `path{}`; `false`, probing nothing, for a dictionary written as an
    /// array.
    func probeValues(recorder: FieldTypeProbe.Recorder, path: String) throws -> Bool
}

extension Dictionary: ProbedDictionary {
    /// Whether the standard library encodes the dictionary as a keyed container.
    private static var isKeyed: Bool {
        Key.self == String.self || Key.self == Int.self || Key.self is any CodingKeyRepresentable.Type
    }

    static func recordValues(recorder: FieldTypeProbe.Recorder, path: String) {
        guard isKeyed else { return }
        FieldTypeProbe.recordDeclared(Value.self, recorder: recorder, at: path + "{}")
    }

    func probeValues(recorder: FieldTypeProbe.Recorder, path: String) throws -> Bool {
        guard Self.isKeyed else { return false }
        guard !FieldTypeProbe.Recorder.isString(Value.self) else { return true }
        for case let value as any Encodable in values {
            try FieldTypeProbe.ProbeEncoder.probe(value, recorder: recorder, path: path + "{}")
        }
        return true
    }
}

/// An `Optional`, for the probe to name the declared type of a `nil` encoded as a value.
protocol ProbedOptional {
    /// Records the wrapped type as ``FieldTypeProbe/ProbeEncoder/record(_:recorder:path:isTopLevel:)`` does.
    static func recordWrapped(recorder: FieldTypeProbe.Recorder, path: String, isTopLevel: Bool) -> Bool
}

extension Optional: ProbedOptional {
    static func recordWrapped(recorder: FieldTypeProbe.Recorder, path: String, isTopLevel: Bool) -> Bool {
        FieldTypeProbe.ProbeEncoder.record(Wrapped.self, recorder: recorder, path: path, isTopLevel: isTopLevel)
    }
}
