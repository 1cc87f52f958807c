import Foundation

/// Decodes `Decodable` values from JSON as `JSONDecoder` does with the snapshot's strategies
/// (`.deferredToDate`, `.base64` data, non-finite doubles from strings), through a parsed
/// token tape instead of Foundation's decoder.
///
/// Same results and the same `DecodingError`s (case, coding path, message) as `JSONDecoder`,
/// except where `JSONDecoder` is lax or loses information:
/// - A document that is not valid JSON is refused while parsing, with the byte offset in the
///   `dataCorrupted` error's underlying ``FastJSONSyntaxError``: unpaired `\u` surrogates and
///   invalid UTF-8 included, also in values nobody decodes.
/// - A number read as an integer must denote an integer exactly (`1.0` and `1e3` do;
///   `1.0000000000000001` does not), and one that does not fit its type is a
///   `dataCorrupted` error at its coding path rather than "not valid JSON".
package enum FastJSONDecoder {
    /// The strings that stand for non-finite floating-point values.
    package struct NonConformingFloatStrings: Sendable {
        package var positiveInfinity: String
        package var negativeInfinity: String
        package var nan: String

        package init(positiveInfinity: String, negativeInfinity: String, nan: String) {
            self.positiveInfinity = positiveInfinity
            self.negativeInfinity = negativeInfinity
            self.nan = nan
        }

        /// The snapshot's convention.
        package static let snapshot = NonConformingFloatStrings(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    }

    /// Decodes a `T` from the JSON document in `data` (UTF-8, or UTF-16/32 as `JSONDecoder`
    /// detects them; a byte order mark is skipped).
    ///
    /// - Throws: `DecodingError` (`dataCorrupted` with a ``FastJSONSyntaxError`` as the
    ///   underlying error for a document that is not JSON), or whatever `T.init(from:)` throws.
    /// - Complexity: O(size of the document) for the parse, plus the decoding.
    /// - Parameter parallel: Whether large arrays of objects (2,048 elements or more) may be
    ///   decoded half on another thread (see ``ArraySpeculation``), for types whose
    ///   `init(from:)` can run on two threads at once. Results and errors are the same.
    package static func decode<T: Decodable>(
        _ type: T.Type, from data: Data, userInfo: [CodingUserInfoKey: any Sendable] = [:],
        nonConformingFloats: NonConformingFloatStrings = .snapshot, maxDepth: Int = FastJSONParser.defaultMaxDepth,
        parallel: Bool = false
    ) throws -> T {
        try withUTF8Representation(of: data) { bytes in
            var document: FastJSONDocument
            do {
                document = try FastJSONParser.parse(bytes, maxDepth: maxDepth)
            } catch {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: [], debugDescription: "The given data was not valid JSON.", underlyingError: error))
            }
            // A decoder or container the decoded value kept still needs the bytes.
            defer { if !isKnownUniquelyReferenced(&document) { document.takeOwnershipOfBytes() } }
            return try decode(type, in: document, userInfo: userInfo, nonConformingFloats: nonConformingFloats, parallel: parallel)
        }
    }

    /// Decodes a `T` from a parsed document; no decoder, container or worker of this call
    /// holds the document when it returns, unless the decoded value kept one.
    private static func decode<T: Decodable>(
        _ type: T.Type, in document: FastJSONDocument, userInfo: [CodingUserInfoKey: any Sendable],
        nonConformingFloats: NonConformingFloatStrings, parallel: Bool
    ) throws -> T {
        let impl = FastJSONDecoderImpl(document: document, userInfo: userInfo, floats: nonConformingFloats, current: 0, path: .root)
        impl.parallel = parallel && ProcessInfo.processInfo.activeProcessorCount > 1
        defer {
            // No worker may read the bytes once the caller gets them back.
            for speculation in impl.speculations { speculation.cancel() }
            impl.speculations = []
        }
        return try impl.decodeRoot(type)
    }

    /// Calls `body` with the document as UTF-8 bytes, as `JSONDecoder` reads it: UTF-32 and
    /// UTF-16 (with a byte order mark, or told by the zero bytes among the first four)
    /// converted, a UTF-8 byte order mark skipped.
    package static func withUTF8Representation<R>(of data: Data, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) throws -> R {
        let first = Array(data.prefix(4))
        let b0 = first.count > 0 ? first[0] : nil, b1 = first.count > 1 ? first[1] : nil
        let b2 = first.count > 2 ? first[2] : nil, b3 = first.count > 3 ? first[3] : nil
        let encoding: String.Encoding
        let bomLength: Int
        switch (b0, b1, b2, b3) {
        case (0, 0, 0xFE, 0xFF): (encoding, bomLength) = (.utf32BigEndian, 4)
        case (0xFE, 0xFF, 0, 0): (encoding, bomLength) = (.utf32LittleEndian, 4)
        case (0xFE, 0xFF, _, _): (encoding, bomLength) = (.utf16BigEndian, 2)
        case (0xFF, 0xFE, _, _): (encoding, bomLength) = (.utf16LittleEndian, 2)
        case (0xEF, 0xBB, 0xBF, _): (encoding, bomLength) = (.utf8, 3)
        case let (0, 0, 0, .some(nz)) where nz != 0: (encoding, bomLength) = (.utf32BigEndian, 0)
        case let (0, .some(nz1), 0, .some(nz2)) where nz1 != 0 && nz2 != 0: (encoding, bomLength) = (.utf16BigEndian, 0)
        case let (.some(nz), 0, 0, 0) where nz != 0: (encoding, bomLength) = (.utf32LittleEndian, 0)
        case let (.some(nz1), 0, .some(nz2), 0) where nz1 != 0 && nz2 != 0: (encoding, bomLength) = (.utf16LittleEndian, 0)
        case let (0, .some(nz), nil, nil) where nz != 0: (encoding, bomLength) = (.utf16BigEndian, 0)
        case let (.some(nz), 0, nil, nil) where nz != 0: (encoding, bomLength) = (.utf16LittleEndian, 0)
        default: (encoding, bomLength) = (.utf8, 0)
        }
        if encoding == .utf8 {
            return try data.withUnsafeBytes { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                return try body(UnsafeBufferPointer(rebasing: bytes[min(bomLength, bytes.count)...]))
            }
        }
        guard var string = String(bytes: data.dropFirst(bomLength), encoding: encoding) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: [], debugDescription: "The given data was not valid JSON.",
                underlyingError: FastJSONSyntaxError(offset: 0, reason: "the document is not valid \(encoding)")))
        }
        return try string.withUTF8 { try body($0) }
    }
}

// MARK: - The decoder

/// The decoder, its single-value container, and the conversions the containers share. One
/// instance serves a whole document: decoding a nested value moves it to that value and back.
final class FastJSONDecoderImpl: Decoder, SingleValueDecodingContainer {
    let document: FastJSONDocument
    let tokens: UnsafeMutablePointer<FastJSONToken>
    let userInfo: [CodingUserInfoKey: Any]
    let floats: FastJSONDecoder.NonConformingFloatStrings
    /// The token of the value being decoded.
    @exclusivity(unchecked) var current: Int
    /// Its coding path.
    @exclusivity(unchecked) var path: CodingPath
    /// Whether large arrays may be decoded half on another thread (the top-level decoder only).
    var parallel = false
    /// The workers started, to wait for before the decoding returns.
    var speculations: [ArraySpeculation] = []

    init(document: FastJSONDocument, userInfo: [CodingUserInfoKey: Any], floats: FastJSONDecoder.NonConformingFloatStrings, current: Int, path: CodingPath) {
        self.document = document
        tokens = document.tokens
        self.userInfo = userInfo
        self.floats = floats
        self.current = current
        self.path = path
    }

    var codingPath: [any CodingKey] { path.codingPath }

    func decodeRoot<T: Decodable>(_ type: T.Type) throws -> T {
        if isSpecial(T.self) { return try unwrapSpecial(current, as: T.self, path: path, key: NoCodingKey()) }
        return try T(from: self)
    }

    // MARK: Containers

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(try keyedContainer(keyedBy: type, at: current, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try unkeyedContainer(at: current, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        self
    }

    func keyedContainer<Key: CodingKey>(keyedBy type: Key.Type, at value: Int, path: CodingPath) throws -> FastJSONKeyedContainer<Key> {
        let token = tokens[value]
        guard token.kind == .object else {
            if token.kind == .null {
                throw DecodingError.valueNotFound([String: Any].self, DecodingError.Context(
                    codingPath: path.codingPath, debugDescription: "Cannot get keyed decoding container -- found null value instead"))
            }
            throw DecodingError.typeMismatch([String: Any].self, DecodingError.Context(
                codingPath: path.codingPath,
                debugDescription: "Expected to decode \([String: Any].self) but found \(token.kind.debugDescription) instead."))
        }
        let index = token.tag & FastJSONFlag.slowKeys != 0 ? FastJSONKeyIndex(object: value, in: self) : nil
        return FastJSONKeyedContainer(state: FastJSONObject(impl: self, object: value, path: path.compacted, index: index))
    }

    func unkeyedContainer(at value: Int, path: CodingPath) throws -> FastJSONUnkeyedContainer {
        let token = tokens[value]
        guard token.kind == .array else {
            if token.kind == .null {
                throw DecodingError.valueNotFound([Any].self, DecodingError.Context(
                    codingPath: path.codingPath, debugDescription: "Cannot get unkeyed decoding container -- found null value instead"))
            }
            throw DecodingError.typeMismatch([Any].self, DecodingError.Context(
                codingPath: path.codingPath,
                debugDescription: "Expected to decode \([Any].self) but found \(token.kind.debugDescription) instead."))
        }
        return FastJSONUnkeyedContainer(impl: self, array: value, count: token.count, path: path)
    }

    // MARK: Nested values

    /// Decodes a `T` from the value at `value` through its `init(from:)`, with this decoder
    /// moved to that value and path.
    @inline(__always)
    func decodeNested<T: Decodable>(_ type: T.Type, at value: Int, path nestedPath: CodingPath) throws -> T {
        let outerCurrent = current
        var outerPath = nestedPath
        swap(&outerPath, &path)
        current = value
        defer {
            current = outerCurrent
            swap(&outerPath, &path)
        }
        return try T(from: self)
    }

    /// Whether `T` is read here directly rather than through its `init(from:)`: the types
    /// `JSONDecoder` decodes by itself (`Date`, `Data`, `URL`, `Decimal`), `UUID` and `[UUID]`
    /// (read without making `String`s), and the common primitives (whose `init(from:)` only
    /// asks a single-value container for themselves). For ``unwrapSpecial(_:as:path:key:)``.
    @inline(__always)
    func isSpecial<T>(_ type: T.Type) -> Bool {
        T.self == String.self || T.self == Date.self || T.self == UUID.self || T.self == [UUID].self
            || T.self == Int.self || T.self == Int64.self || T.self == Double.self || T.self == Bool.self
            || T.self == Data.self || T.self == URL.self || T.self == Decimal.self
    }

    /// A value of a type for which ``isSpecial(_:)`` is true, at `key` of `path`.
    @inline(__always)
    func unwrapSpecial<T: Decodable, Key: CodingKey>(_ value: Int, as type: T.Type, path: CodingPath, key: Key) throws -> T {
        if T.self == String.self {
            return unsafeBitCast(try unwrapString(value, path: path, key: key), to: T.self)
        }
        if T.self == Date.self {
            return unsafeBitCast(try unwrapDate(value, path: path, key: key), to: T.self)
        }
        if T.self == UUID.self {
            return unsafeBitCast(try unwrapUUID(value, path: path, key: key), to: T.self)
        }
        if T.self == [UUID].self {
            return unsafeBitCast(try unwrapUUIDArray(value, path: path, key: key), to: T.self)
        }
        if T.self == Int.self {
            return unsafeBitCast(try unwrapInteger(value, as: Int.self, path: path, key: key), to: T.self)
        }
        if T.self == Int64.self {
            return unsafeBitCast(try unwrapInteger(value, as: Int64.self, path: path, key: key), to: T.self)
        }
        if T.self == Double.self {
            return unsafeBitCast(try unwrapDouble(value, path: path, key: key), to: T.self)
        }
        if T.self == Bool.self {
            return unsafeBitCast(try unwrapBool(value, path: path, key: key), to: T.self)
        }
        if T.self == Data.self {
            return unsafeBitCast(try unwrapData(value, path: path, key: key), to: T.self)
        }
        if T.self == URL.self {
            return unsafeBitCast(try unwrapURL(value, path: path, key: key), to: T.self)
        }
        return unsafeBitCast(try unwrapDecimal(value, path: path, key: key), to: T.self)
    }

    // MARK: Scalars

    @inline(__always) func kind(_ value: Int) -> FastJSONKind { tokens[value].kind }

    func typeMismatch<Key: CodingKey>(_ type: Any.Type, _ value: Int, path: CodingPath, key: Key) -> DecodingError {
        DecodingError.typeMismatch(type, DecodingError.Context(
            codingPath: path.codingPath(appending: key),
            debugDescription: "Expected to decode \(type) but found \(kind(value).debugDescription) instead."))
    }

    @inline(__always)
    func checkNotNull<Key: CodingKey>(_ value: Int, _ type: Any.Type, path: CodingPath, key: Key) throws {
        if tokens[value].tag == FastJSONKind.null.rawValue {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: path.codingPath(appending: key),
                debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        }
    }

    func notRepresentable<Key: CodingKey>(_ type: Any.Type, _ value: Int, path: CodingPath, key: Key) -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(
            codingPath: path.codingPath(appending: key),
            debugDescription: "Parsed JSON number <\(String(decoding: document.span(value), as: UTF8.self))> does not fit in \(type)."))
    }

    @inline(__always)
    func unwrapBool<Key: CodingKey>(_ value: Int, path: CodingPath, key: Key) throws -> Bool {
        switch kind(value) {
        case .true: return true
        case .false: return false
        default: throw typeMismatch(Bool.self, value, path: path, key: key)
        }
    }

    @inline(__always)
    func unwrapString<Key: CodingKey>(_ value: Int, path: CodingPath, key: Key) throws -> String {
        let token = tokens[value]
        guard token.kind == .string else {
            try checkNotNull(value, String.self, path: path, key: key)
            throw typeMismatch(String.self, value, path: path, key: key)
        }
        return string(at: value)
    }

    @inline(__always)
    func unwrapInteger<T: FixedWidthInteger, Key: CodingKey>(_ value: Int, as type: T.Type, path: CodingPath, key: Key) throws -> T {
        let token = tokens[value]
        guard token.kind == .number else {
            try checkNotNull(value, T.self, path: path, key: key)
            throw typeMismatch(T.self, value, path: path, key: key)
        }
        guard let integer = FastJSONNumbers.integer(document.span(value), tag: token.tag, as: T.self) else {
            throw notRepresentable(T.self, value, path: path, key: key)
        }
        return integer
    }

    @inline(__always)
    func unwrapDouble<Key: CodingKey>(_ value: Int, path: CodingPath, key: Key) throws -> Double {
        let token = tokens[value]
        if token.kind == .number {
            guard let double = FastJSONNumbers.double(document.span(value), tag: token.tag) else {
                throw notRepresentable(Double.self, value, path: path, key: key)
            }
            return double
        }
        return try nonConformingFloat(value, as: Double.self, path: path, key: key)
    }

    func unwrapFloat<Key: CodingKey>(_ value: Int, path: CodingPath, key: Key) throws -> Float {
        if kind(value) == .number {
            guard let float = FastJSONNumbers.float(document.span(value)) else {
                throw notRepresentable(Float.self, value, path: path, key: key)
            }
            return float
        }
        return try nonConformingFloat(value, as: Float.self, path: path, key: key)
    }

    /// A non-number read as a float: one of the non-conforming strings (without escapes, as
    /// `JSONDecoder` reads them), or an error.
    func nonConformingFloat<F: BinaryFloatingPoint, Key: CodingKey>(_ value: Int, as type: F.Type, path: CodingPath, key: Key) throws -> F {
        try checkNotNull(value, F.self, path: path, key: key)
        let token = tokens[value]
        if token.kind == .string && token.tag & FastJSONFlag.escaped == 0 {
            let span = document.span(value)
            if span.elementsEqual(floats.positiveInfinity.utf8) { return F.infinity }
            if span.elementsEqual(floats.negativeInfinity.utf8) { return -F.infinity }
            if span.elementsEqual(floats.nan.utf8) { return F.nan }
        }
        throw typeMismatch(F.self, value, path: path, key: key)
    }

    /// `.deferredToDate`: `Date(from:)`, which reads a `Double` of seconds since 2001.
    @inline(__always)
    func unwrapDate<Key: CodingKey>(_ value: Int, path: CodingPath, key: Key) throws -> Date {
        try checkNotNull(value, Date.self, path: path, key: key)
        return Date(timeIntervalSinceReferenceDate: try unwrapDouble(value, path: path, key: key))
    }

    /// `UUID(from:)`: a string `UUID(uuidString:)` accepts.
    @inline(__always)
    func unwrapUUID<Key: CodingKey>(_ value: Int, path: CodingPath, key: Key) throws -> UUID {
        let token = tokens[value]
        if token.tag == FastJSONKind.string.rawValue, let uuid = UUIDParsing.canonicalUUID(document.span(value)) {
            return uuid
        }
        let text = try unwrapString(value, path: path, key: key)
        guard let uuid = UUID(uuidString: text) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: path.codingPath(appending: key), debugDescription: "Attempted to decode UUID from invalid UUID string."))
        }
        return uuid
    }

    /// `[UUID]`, as `Array.init(from:)` reads it through an unkeyed container.
    func unwrapUUIDArray<Key: CodingKey>(_ value: Int, path: CodingPath, key: Key) throws -> [UUID] {
        let token = tokens[value]
        guard token.kind == .array else {
            _ = try unkeyedContainer(at: value, path: path.appending(codingKey: key))
            preconditionFailure("unreachable: not an array")
        }
        var uuids: [UUID] = []
        uuids.reserveCapacity(token.count)
        var element = value + 1
        for index in 0..<token.count {
            let elementToken = tokens[element]
            if elementToken.tag == FastJSONKind.string.rawValue, let uuid = UUIDParsing.canonicalUUID(document.span(element)) {
                uuids.append(uuid)
            } else {
                uuids.append(try unwrapUUID(element, path: path.appending(codingKey: key), key: IndexCodingKey(index)))
            }
            element = document.skip(element)
        }
        return uuids
    }

    /// `.base64`.
    func unwrapData<Key: CodingKey>(_ value: Int, path: CodingPath, key: Key) throws -> Data {
        try checkNotNull(value, Data.self, path: path, key: key)
        guard kind(value) == .string else { throw typeMismatch(String.self, value, path: path, key: key) }
        guard let data = Data(base64Encoded: string(at: value)) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: path.codingPath(appending: key), debugDescription: "Encountered Data is not valid Base64."))
        }
        return data
    }

    func unwrapURL<Key: CodingKey>(_ value: Int, path: CodingPath, key: Key) throws -> URL {
        try checkNotNull(value, URL.self, path: path, key: key)
        let text = try unwrapString(value, path: path, key: key)
        guard let url = URL(string: text) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: path.codingPath(appending: key), debugDescription: "Invalid URL string."))
        }
        return url
    }

    func unwrapDecimal<Key: CodingKey>(_ value: Int, path: CodingPath, key: Key) throws -> Decimal {
        try checkNotNull(value, Decimal.self, path: path, key: key)
        guard kind(value) == .number else {
            throw DecodingError.typeMismatch(Decimal.self, DecodingError.Context(codingPath: path.codingPath(appending: key), debugDescription: ""))
        }
        guard let decimal = Decimal(string: String(decoding: document.span(value), as: UTF8.self), locale: Locale(identifier: "en_US_POSIX")) else {
            throw notRepresentable(Decimal.self, value, path: path, key: key)
        }
        return decimal
    }

    // MARK: Strings

    /// The string token at `value` (or a key), escapes resolved.
    @inline(__always)
    func string(at value: Int) -> String {
        let span = document.span(value)
        if tokens[value].tag & FastJSONFlag.escaped == 0 {
            return String(decoding: span, as: UTF8.self)
        }
        return FastJSONStrings.unescape(span)
    }

    // MARK: Object members

    /// The value token of the member named `name` in the object at `object`, or `nil`.
    ///
    /// Objects are read mostly in the order their keys were written, so the key after the
    /// last one found is tried first (a cursor kept in the object's token), then all keys.
    /// Only for objects whose keys are distinct ASCII without escapes (the parser checks);
    /// others go through a ``FastJSONKeyIndex``.
    @inline(__always)
    func member(of object: Int, named name: String) -> Int? {
        var name = name
        if let found = name.withUTF8({ member(of: object, utf8: $0) }) { return found }
        // An ASCII key can still equal a non-ASCII name as Swift compares strings (U+212A
        // KELVIN SIGN is "K").
        guard !name.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let end = tokens[object].end
        var key = object + 1
        while key < end {
            if string(at: key) == name { return key + 1 }
            key = document.skip(key + 1)
        }
        return nil
    }

    @inline(__always)
    func member(of object: Int, utf8 name: UnsafeBufferPointer<UInt8>) -> Int? {
        let objectToken = tokens[object]
        let end = objectToken.end
        let bytes = document.bytes
        let length = UInt64(name.count)
        @inline(__always) func matches(_ key: Int) -> Bool {
            let token = tokens[key]
            return token.payload == length && (length == 0 || memcmp(bytes + token.offset, name.baseAddress!, name.count) == 0)
        }
        @inline(__always) func found(_ key: Int) -> Int {
            let value = key + 1
            tokens[object].word = objectToken.word & ~FastJSONToken.offsetMask | UInt64(document.skip(value))
            return value
        }
        let cursor = objectToken.offset
        if cursor < end && matches(cursor) { return found(cursor) }
        var key = object + 1
        while key < end {
            if matches(key) { return found(key) }
            key = document.skip(key + 1)
        }
        return nil
    }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool {
        kind(current) == .null
    }

    func decode(_ type: Bool.Type) throws -> Bool { try unwrapBool(current, path: path, key: NoCodingKey()) }
    func decode(_ type: String.Type) throws -> String { try unwrapString(current, path: path, key: NoCodingKey()) }
    func decode(_ type: Double.Type) throws -> Double { try unwrapDouble(current, path: path, key: NoCodingKey()) }
    func decode(_ type: Float.Type) throws -> Float { try unwrapFloat(current, path: path, key: NoCodingKey()) }
    func decode(_ type: Int.Type) throws -> Int { try unwrapInteger(current, as: type, path: path, key: NoCodingKey()) }
    func decode(_ type: Int8.Type) throws -> Int8 { try unwrapInteger(current, as: type, path: path, key: NoCodingKey()) }
    func decode(_ type: Int16.Type) throws -> Int16 { try unwrapInteger(current, as: type, path: path, key: NoCodingKey()) }
    func decode(_ type: Int32.Type) throws -> Int32 { try unwrapInteger(current, as: type, path: path, key: NoCodingKey()) }
    func decode(_ type: Int64.Type) throws -> Int64 { try unwrapInteger(current, as: type, path: path, key: NoCodingKey()) }
    func decode(_ type: Int128.Type) throws -> Int128 { try unwrapInteger(current, as: type, path: path, key: NoCodingKey()) }
    func decode(_ type: UInt.Type) throws -> UInt { try unwrapInteger(current, as: type, path: path, key: NoCodingKey()) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unwrapInteger(current, as: type, path: path, key: NoCodingKey()) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try unwrapInteger(current, as: type, path: path, key: NoCodingKey()) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try unwrapInteger(current, as: type, path: path, key: NoCodingKey()) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try unwrapInteger(current, as: type, path: path, key: NoCodingKey()) }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try unwrapInteger(current, as: type, path: path, key: NoCodingKey()) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if isSpecial(T.self) { return try unwrapSpecial(current, as: T.self, path: path, key: NoCodingKey()) }
        return try T(from: self)
    }
}

// MARK: - Key index

/// The members of an object whose keys cannot be matched byte for byte in order (escaped or
/// non-ASCII keys, duplicates, many keys): by key as Swift compares strings, the first
/// occurrence winning, as in `JSONDecoder`.
final class FastJSONKeyIndex {
    /// The distinct keys in document order.
    private(set) var keys: [String] = []
    private(set) var values: [String: Int] = [:]

    init(object: Int, in impl: FastJSONDecoderImpl) {
        let token = impl.tokens[object]
        keys.reserveCapacity(token.count)
        values.reserveCapacity(token.count)
        var key = object + 1
        while key < token.end {
            let name = impl.string(at: key)
            if values[name] == nil {
                values[name] = key + 1
                keys.append(name)
            }
            key = impl.document.skip(key + 1)
        }
    }
}
