import Foundation

/// Scalars and the types `JSONDecoder` reads by itself, at a token of the document, with
/// `JSONDecoder`'s errors at `key` of `path`.
extension FastJSONDecoderImpl {
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

    // MARK: Values read without their coding path

    /// The value at `value` as `T` when it is one of the common cases that cannot fail
    /// (a string as `String`, an `Int`, `Int64` or `Int32` that fits, a number as `Double`, a
    /// true or false), else `nil`: the caller then reads it the full way, which makes the same
    /// value or the error with its coding path. Callers whose path is costly to pass (a keyed
    /// container's, held in a class) try this first, so that the path is touched only for the
    /// rare value that needs it. For concrete `T` only: unspecialized, the optional result's
    /// metadata is looked up on every call.
    @inline(__always)
    func unwrapWithoutPath<T>(_ value: Int, as type: T.Type) -> T? {
        let token = tokens[value]
        if T.self == String.self {
            guard token.kind == .string else { return nil }
            return unsafeBitCast(string(at: value), to: T.self)
        }
        if T.self == Int.self { return integerWithoutPath(token, value, as: Int.self).map { unsafeBitCast($0, to: T.self) } }
        if T.self == Int64.self { return integerWithoutPath(token, value, as: Int64.self).map { unsafeBitCast($0, to: T.self) } }
        if T.self == Int32.self { return integerWithoutPath(token, value, as: Int32.self).map { unsafeBitCast($0, to: T.self) } }
        if T.self == Double.self {
            guard token.kind == .number, let double = FastJSONNumbers.double(document.span(value), tag: token.tag) else { return nil }
            return unsafeBitCast(double, to: T.self)
        }
        if T.self == Bool.self {
            switch token.kind {
            case .true: return unsafeBitCast(true, to: T.self)
            case .false: return unsafeBitCast(false, to: T.self)
            default: return nil
            }
        }
        return nil
    }

    @inline(__always)
    private func integerWithoutPath<T: FixedWidthInteger>(_ token: FastJSONToken, _ value: Int, as type: T.Type) -> T? {
        guard token.kind == .number else { return nil }
        return FastJSONNumbers.integer(document.span(value), tag: token.tag, as: T.self)
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

    /// A string `URL(string:)` accepts (the absolute string `JSONEncoder` writes), or an object:
    /// the URL's own `Codable` form, `{"relative": …, "base": …}`, in which ``FastJSONEncoder``
    /// writes a URL with a base (the base a string or that form again), read by `URL(from:)`.
    func unwrapURL<Key: CodingKey>(_ value: Int, path: CodingPath, key: Key) throws -> URL {
        try checkNotNull(value, URL.self, path: path, key: key)
        if kind(value) == .object {
            return try decodeNested(URL.self, at: value, path: path.appending(codingKey: key))
        }
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
}
