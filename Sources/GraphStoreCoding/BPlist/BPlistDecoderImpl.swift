import Foundation

/// The decoder and its single-value container. One instance serves a whole document:
/// decoding a nested value moves it to that value and back.
final class BPlistDecoderImpl: Decoder, SingleValueDecodingContainer, MovingCoder {
    let document: BPlistDocument
    let userInfo: [CodingUserInfoKey: Any]
    /// The object being decoded.
    var current: Int
    var path: CodingPath
    private var depth = 0
    var parallel = false
    var speculations: [ArraySpeculation] = []
    /// Per position in a dictionary, the last name found there and the reference of the key
    /// string object that matched it: byte for byte when `ascii`, else as Swift compares strings
    /// (see ``BPlistDictionary/value(named:)``). Each decoder is used on one thread.
    @exclusivity(unchecked) private(set) var knownKeys: [(name: String, ascii: Bool, reference: Int)] = []
    /// Whether keyed containers' states are recycled (see ``BPlistDictionary``): set by an owner
    /// that calls ``endRecycling()`` when its decoding ends, since the spare state refers back
    /// to this decoder.
    var recyclesDictionaries = false
    /// The state of the last keyed container made, reused for the next dictionary once no
    /// container holds it.
    @exclusivity(unchecked) private var spareDictionary: BPlistDictionary?

    /// Notes that the key string object `reference`, at `position` in a dictionary, matched
    /// `name`; the first 64 positions only.
    func remember(key name: String, ascii: Bool, reference: Int, at position: Int) {
        guard position < 64 else { return }
        if position >= knownKeys.count {
            knownKeys.append(contentsOf: repeatElement((name: "", ascii: true, reference: -1), count: position + 1 - knownKeys.count))
        }
        knownKeys[position] = (name, ascii, reference)
    }

    /// What the values read on this decoder's thread take (see ``BPlistExpansion``); shared by
    /// the decoders of ``superDecoder()``, not by a speculation's (which counts its own, into
    /// the same total).
    let expansion: BPlistSpending

    /// Whether values may be read in their JSON shapes (see ``BPlistJSONShapes``), if the
    /// caller said where that is decided.
    private let jsonShapes: BPlistJSONShapes?

    init(document: BPlistDocument, userInfo: [CodingUserInfoKey: Any], current: Int, path: CodingPath, expansion: BPlistSpending) {
        self.document = document
        self.userInfo = userInfo
        jsonShapes = userInfo[BPlistDecoder.jsonShapesKey] as? BPlistJSONShapes
        self.current = current
        self.path = path
        self.expansion = expansion
    }

    /// Counts the string or data `object` read into a value (`elements`: the array or
    /// dictionary `object`'s elements) against ``expansion``.
    ///
    /// - Throws: `dataCorrupted` at `key` of `path`, with ``BPlistExpansionExceeded`` as the
    ///   underlying error, once the total has passed the limit.
    @inline(__always) func spend<Key: CodingKey>(_ object: BPlistObject, elements: Bool = false, path: CodingPath, key: Key) throws {
        do {
            try expansion.spend(object, elements: elements)
        } catch {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: path.codingPath(appending: key), debugDescription: "The property list's values expand past the limit.",
                underlyingError: error))
        }
    }

    var codingPath: [any CodingKey] { path.codingPath }

    // MARK: Objects

    /// The object `reference` names; a damaged table is a `dataCorrupted` error at the path.
    @inline(__always) func object<Key: CodingKey>(_ reference: Int, path: CodingPath, key: Key) throws -> BPlistObject {
        try reading(path: path, key: key) { try document.object(reference) }
    }

    /// `body`'s result, with a ``BPlistSyntaxError`` it throws made a `dataCorrupted` error at
    /// `key` of `path`.
    @inline(__always) private func reading<T, Key: CodingKey>(path: CodingPath, key: Key, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: path.codingPath(appending: key), debugDescription: "The given data was not a valid property list.", underlyingError: error))
        }
    }

    func typeMismatch<Key: CodingKey>(_ type: Any.Type, _ object: BPlistObject, path: CodingPath, key: Key) -> DecodingError {
        if document.isNull(object) {
            return .valueNotFound(type, DecodingError.Context(
                codingPath: path.codingPath(appending: key), debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        }
        return .typeMismatch(type, DecodingError.Context(
            codingPath: path.codingPath(appending: key), debugDescription: "Expected to decode \(type) but found \(object.kind.debugDescription) instead."))
    }

    // MARK: Values

    /// The value at `reference` (the member `key` of `path`) as `T`: property-list types and
    /// the common primitives directly, anything else through its `init(from:)`.
    func decodeValue<T: Decodable, Key: CodingKey>(_ type: T.Type, at reference: Int, path: CodingPath, key: Key) throws -> T {
        let object = try object(reference, path: path, key: key)
        if T.self == String.self { return unsafeBitCast(try string(object, path: path, key: key), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try integer(object, as: Int.self, path: path, key: key), to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try integer(object, as: Int64.self, path: path, key: key), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try double(object, path: path, key: key), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try bool(object, path: path, key: key), to: T.self) }
        // A date, data, a URL or a decimal also reads from the shape a JSON snapshot holds it in,
        // in a file that may hold them (see "JSON shapes" in `BPlistDecoder`).
        if T.self == Date.self {
            if object.kind == .date { return unsafeBitCast(Date(timeIntervalSinceReferenceDate: document.real(object)), to: T.self) }
            guard object.kind == .real || object.kind == .integer, acceptsJSONShapes else { throw typeMismatch(Date.self, object, path: path, key: key) }
            let seconds = try double(object, path: path, key: key)
            guard seconds.isFinite else {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: path.codingPath(appending: key), debugDescription: "\(seconds) is not a date."))
            }
            return unsafeBitCast(Date(timeIntervalSinceReferenceDate: seconds), to: T.self)
        }
        if T.self == Data.self {
            if object.kind == .asciiString || object.kind == .utf16String, acceptsJSONShapes {
                guard let data = Data(base64Encoded: try string(object, path: path, key: key)) else {
                    throw DecodingError.dataCorrupted(DecodingError.Context(
                        codingPath: path.codingPath(appending: key), debugDescription: "Encountered Data is not valid Base64."))
                }
                return data as! T
            }
            guard object.kind == .data else { throw typeMismatch(Data.self, object, path: path, key: key) }
            try spend(object, path: path, key: key)
            return Data(document.span(object, byteCount: object.count)) as! T
        }
        if T.self == UUID.self, object.kind == .asciiString, let uuid = UUIDParsing.canonicalUUID(document.span(object, byteCount: object.count)) {
            return unsafeBitCast(uuid, to: T.self)
        }
        if T.self == [UUID].self, object.kind == .array, expansion.spend(elements: object.count), let uuids = canonicalUUIDs(object) {
            return unsafeBitCast(uuids, to: T.self)
        }
        if acceptsJSONShapes {
            if T.self == URL.self, object.kind == .asciiString || object.kind == .utf16String {
                guard let url = URL(string: try string(object, path: path, key: key)) else {
                    throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: path.codingPath(appending: key), debugDescription: "Invalid URL string."))
                }
                return url as! T
            }
            if T.self == Decimal.self, object.kind == .real || object.kind == .integer {
                return try decimal(object, path: path, key: key) as! T
            }
        }
        return try decodeNested(T.self, at: reference, path: path.appending(codingKey: key), descends: Key.self != NoCodingKey.self)
    }

    /// An array of UUIDs all in canonical ASCII form, read without making strings; `nil` for
    /// anything else (left to the general path, which gives the same value or error).
    private func canonicalUUIDs(_ array: BPlistObject) -> [UUID]? {
        var uuids: [UUID] = []
        uuids.reserveCapacity(array.count)
        for index in 0..<array.count {
            guard let element = try? document.object(document.reference(at: array.payload, index: index)), element.kind == .asciiString,
                  let uuid = UUIDParsing.canonicalUUID(document.span(element, byteCount: element.count)) else { return nil }
            uuids.append(uuid)
        }
        return uuids
    }

    /// Decodes `T` through its `init(from:)` with this decoder moved to `reference`, a member
    /// or element of the current value when `descends`.
    ///
    /// Only members and elements count toward ``BPlistDecoder/maximumDepth``, as the document
    /// nests them: a value decoded through a single-value container (an `Optional`, a wrapper)
    /// stands where its container's value does, and a cycle is only followed by descending.
    /// So what the encoder writes (nested at most as deep as ``BPlistEncoderImpl/maximumDepth``
    /// allows) reads back whatever wrappers the types add.
    func decodeNested<T: Decodable>(_ type: T.Type, at reference: Int, path nestedPath: CodingPath, descends: Bool) throws -> T {
        guard descends else { return try moved(to: reference, path: nestedPath) { try T(from: self) } }
        guard depth < BPlistDecoder.maximumDepth else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: nestedPath.codingPath, debugDescription: "The property list nests deeper than \(BPlistDecoder.maximumDepth) levels (a cycle?)."))
        }
        depth += 1
        defer { depth -= 1 }
        return try moved(to: reference, path: nestedPath) { try T(from: self) }
    }

    func string<Key: CodingKey>(_ object: BPlistObject, path: CodingPath, key: Key) throws -> String {
        if object.kind == .real, case let number = document.real(object), !number.isFinite, acceptsJSONShapes {
            // The JSON shape of the string: a JSON snapshot writes a non-finite double as the
            // string `"NaN"`, so a string `"NaN"` reads, without the type, as a double.
            return FastJSONDecoder.NonConformingFloatStrings.snapshot.name(of: number)
        }
        guard object.kind == .asciiString || object.kind == .utf16String else { throw typeMismatch(String.self, object, path: path, key: key) }
        try spend(object, path: path, key: key)
        return try reading(path: path, key: key) { try document.string(object) }
    }

    /// A decimal from a number, the shape a JSON snapshot holds it in: an integer, or a
    /// double read as the shortest text that gives it back (`0.1`, not
    /// `0.1000000000000000055…`).
    private func decimal<Key: CodingKey>(_ object: BPlistObject, path: CodingPath, key: Key) throws -> Decimal {
        let text: String
        if object.kind == .integer, object.count == 16 {
            text = String(document.integer128(object))
        } else if object.kind == .integer {
            let value = try integerParts(object, path: path, key: key)
            text = value.signed.map { String($0) } ?? String(value.unsigned!)
        } else {
            let number = try double(object, path: path, key: key)
            guard number.isFinite else {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: path.codingPath(appending: key), debugDescription: "\(number) is not a Decimal."))
            }
            text = "\(number)"
        }
        guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: path.codingPath(appending: key), debugDescription: "\(text) is not a Decimal."))
        }
        return decimal
    }

    /// Whether this decoding reads values in their JSON shapes (see ``BPlistJSONShapes``); asked
    /// only where a value is not in its property-list shape.
    private var acceptsJSONShapes: Bool { jsonShapes?.isAccepted ?? false }

    func bool<Key: CodingKey>(_ object: BPlistObject, path: CodingPath, key: Key) throws -> Bool {
        switch object.kind {
        case .true: return true
        case .false: return false
        default: throw typeMismatch(Bool.self, object, path: path, key: key)
        }
    }

    func double<Key: CodingKey>(_ object: BPlistObject, path: CodingPath, key: Key) throws -> Double {
        switch object.kind {
        case .real: return document.real(object)
        case .integer where object.count == 16: return Double(document.integer128(object))
        case .integer:
            let value = try integerParts(object, path: path, key: key)
            if let signed = value.signed { return Double(signed) }
            return Double(value.unsigned!)
        default: throw typeMismatch(Double.self, object, path: path, key: key)
        }
    }

    func float<Key: CodingKey>(_ object: BPlistObject, path: CodingPath, key: Key) throws -> Float {
        let value = try double(object, path: path, key: key)
        guard !value.isFinite || abs(value) <= Double(Float.greatestFiniteMagnitude) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: path.codingPath(appending: key), debugDescription: "Parsed property list number <\(value)> does not fit in Float."))
        }
        return Float(value)
    }

    private func integerParts<Key: CodingKey>(_ object: BPlistObject, path: CodingPath, key: Key) throws -> (signed: Int64?, unsigned: UInt64?) {
        try reading(path: path, key: key) { try document.integer(object) }
    }

    /// The number `object` (the member `key` of `path`) as `T`, when `T` holds it exactly.
    ///
    /// Inlined, so that the conversion to `T` is made for the caller's concrete type: unspecialized,
    /// `T(exactly:)` goes through witness tables and metadata lookups on every call.
    @inline(__always)
    func integer<T: FixedWidthInteger, Key: CodingKey>(_ object: BPlistObject, as type: T.Type, path: CodingPath, key: Key) throws -> T {
        var result: T?
        switch object.kind {
        case .integer where object.count == 16:
            let value = document.integer128(object)
            // A `UInt128` above `Int128.max` is written as its bits (see
            // ``BPlistObjectTable/unsigned128(_:)``), which read as a negative `Int128`.
            result = T.self == UInt128.self ? T(truncatingIfNeeded: value) : T(exactly: value)
        case .integer:
            let value = try integerParts(object, path: path, key: key)
            if let signed = value.signed { result = T(exactly: signed) } else if let unsigned = value.unsigned { result = T(exactly: unsigned) }
        case .real:
            let value = document.real(object)
            result = T(exactly: value)
        default:
            throw typeMismatch(T.self, object, path: path, key: key)
        }
        guard let result else { throw numberDoesNotFit(T.self, path: path, key: key) }
        return result
    }

    // MARK: Values without the path

    // The common values of a keyed container's members are read without its path: passing the
    // path, a `var` of the container's state, copies it on every call. `nil` for anything these
    // do not read (a damaged object, another kind, a number that does not fit): the caller then
    // reads the value again with the path, which gives the error.

    /// The string at `reference`.
    @inline(__always) func stringWithoutPath(_ reference: Int) -> String? {
        guard let object = try? document.object(reference), object.kind == .asciiString || object.kind == .utf16String,
              expansion.spend(object) else { return nil }
        return try? document.string(object)
    }

    /// The string at `reference`, or `.some(nil)` for the null value (see ``BPlistDocument/isNull(_:)``).
    @inline(__always) func stringOrNullWithoutPath(_ reference: Int) -> String?? {
        guard let object = try? document.object(reference) else { return nil }
        if document.isNull(object) { return .some(nil) }
        guard object.kind == .asciiString || object.kind == .utf16String, expansion.spend(object),
              let string = try? document.string(object) else { return nil }
        return string
    }

    /// The Boolean at `reference`.
    @inline(__always) func boolWithoutPath(_ reference: Int) -> Bool? {
        guard let object = try? document.object(reference) else { return nil }
        switch object.kind {
        case .true: return true
        case .false: return false
        default: return nil
        }
    }

    /// The number at `reference` as a `Double`.
    @inline(__always) func doubleWithoutPath(_ reference: Int) -> Double? {
        guard let object = try? document.object(reference) else { return nil }
        switch object.kind {
        case .real: return document.real(object)
        case .integer:
            guard let value = try? document.integer(object) else { return nil }
            if let signed = value.signed { return Double(signed) }
            return value.unsigned.map { Double($0) }
        default: return nil
        }
    }

    /// The number at `reference` as `T`, when `T` holds it exactly. Inlined, for the caller's
    /// concrete `T` (see ``integer(_:as:path:key:)``).
    @inline(__always) func integerWithoutPath<T: FixedWidthInteger>(_ reference: Int, as type: T.Type) -> T? {
        guard let object = try? document.object(reference) else { return nil }
        switch object.kind {
        case .integer:
            guard let value = try? document.integer(object) else { return nil }
            if let signed = value.signed { return T(exactly: signed) }
            return value.unsigned.flatMap { T(exactly: $0) }
        case .real: return T(exactly: document.real(object))
        default: return nil
        }
    }

    /// The error for a number that `type` cannot hold exactly, at `key` of `path`.
    private func numberDoesNotFit<Key: CodingKey>(_ type: Any.Type, path: CodingPath, key: Key) -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(
            codingPath: path.codingPath(appending: key), debugDescription: "Parsed property list number does not fit in \(type)."))
    }

    // MARK: Containers

    func keyedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, at reference: Int, path: CodingPath) throws -> BPlistKeyedContainer<NestedKey> {
        let object = try object(reference, path: path, key: NoCodingKey())
        guard object.kind == .dictionary else {
            throw typeMismatch([String: Any].self, object, path: path, key: NoCodingKey())
        }
        try spend(object, elements: true, path: path, key: NoCodingKey())
        guard recyclesDictionaries else {
            return BPlistKeyedContainer(state: BPlistDictionary(impl: self, object: object, path: path.compacted))
        }
        // The dictionaries of an array are decoded one after the other, each container gone
        // before the next one's is made: one state serves them all, allocated once.
        if isKnownUniquelyReferenced(&spareDictionary), let spare = spareDictionary {
            spare.reset(object: object, path: path.compacted)
            return BPlistKeyedContainer(state: spare)
        }
        // The spare is held (a container of an enclosing dictionary, or one a value kept).
        let state = BPlistDictionary(impl: self, object: object, path: path.compacted)
        spareDictionary = state
        return BPlistKeyedContainer(state: state)
    }

    /// Stops recycling keyed containers' states and lets the spare one go.
    func endRecycling() {
        recyclesDictionaries = false
        spareDictionary = nil
    }

    func unkeyedContainer(at reference: Int, path: CodingPath) throws -> BPlistUnkeyedContainer {
        let object = try object(reference, path: path, key: NoCodingKey())
        guard object.kind == .array || object.kind == .set else {
            throw typeMismatch([Any].self, object, path: path, key: NoCodingKey())
        }
        try spend(object, elements: true, path: path, key: NoCodingKey())
        return BPlistUnkeyedContainer(impl: self, object: object, path: path.compacted)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(try keyedContainer(keyedBy: type, at: current, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try unkeyedContainer(at: current, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Single value

    private var currentObject: BPlistObject {
        get throws { try object(current, path: path, key: NoCodingKey()) }
    }

    func decodeNil() -> Bool {
        guard let object = try? currentObject else { return false }
        return document.isNull(object)
    }

    func decode(_ type: Bool.Type) throws -> Bool { try bool(try currentObject, path: path, key: NoCodingKey()) }
    func decode(_ type: String.Type) throws -> String { try string(try currentObject, path: path, key: NoCodingKey()) }
    func decode(_ type: Double.Type) throws -> Double { try double(try currentObject, path: path, key: NoCodingKey()) }
    func decode(_ type: Float.Type) throws -> Float { try float(try currentObject, path: path, key: NoCodingKey()) }
    func decode(_ type: Int.Type) throws -> Int { try singleInteger() }
    func decode(_ type: Int8.Type) throws -> Int8 { try singleInteger() }
    func decode(_ type: Int16.Type) throws -> Int16 { try singleInteger() }
    func decode(_ type: Int32.Type) throws -> Int32 { try singleInteger() }
    func decode(_ type: Int64.Type) throws -> Int64 { try singleInteger() }
    func decode(_ type: UInt.Type) throws -> UInt { try singleInteger() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try singleInteger() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try singleInteger() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try singleInteger() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try singleInteger() }
    func decode(_ type: Int128.Type) throws -> Int128 { try singleInteger() }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try singleInteger() }

    private func singleInteger<T: FixedWidthInteger>() throws -> T {
        try integer(try currentObject, as: T.self, path: path, key: NoCodingKey())
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decodeValue(T.self, at: current, path: path, key: NoCodingKey())
    }
}
