import Foundation

/// The decoder and its single-value container (conversions in `+Scalars`, strings and object
/// members in `+Members`). One instance serves a whole document: decoding a nested value
/// moves it to that value and back.
final class FastJSONDecoderImpl: Decoder, SingleValueDecodingContainer, MovingCoder {
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
    /// Whether keyed containers' states are recycled (see ``FastJSONObject``): set by an owner
    /// that calls ``endRecycling()`` when its decoding ends, since the spare state refers back
    /// to this decoder.
    var recyclesObjects = false
    /// The state of the last keyed container made, reused for the next object once no
    /// container holds it.
    @exclusivity(unchecked) private var spareObject: FastJSONObject?

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
        // The usual case, an object with plain keys at a path of at most one inline component
        // and a free spare state: the path is copied once, straight into the state.
        if recyclesObjects, tokens[current].tag == FastJSONKind.object.rawValue, path.inline < 2,
           isKnownUniquelyReferenced(&spareObject), let spare = spareObject {
            spare.resetToCurrent(of: self)
            return KeyedDecodingContainer(FastJSONKeyedContainer<Key>(state: spare))
        }
        return KeyedDecodingContainer(try keyedContainer(keyedBy: type, at: current, path: path))
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
        guard recyclesObjects else {
            return FastJSONKeyedContainer(state: FastJSONObject(impl: self, object: value, path: path.compacted, index: index))
        }
        // The objects of an array are decoded one after the other, each container gone before
        // the next object's is made: one state serves them all, allocated once.
        if isKnownUniquelyReferenced(&spareObject), let spare = spareObject {
            spare.reset(object: value, path: path.compacted, index: index)
            return FastJSONKeyedContainer(state: spare)
        }
        // The spare is held (a container of an enclosing object, or one a value kept).
        let state = FastJSONObject(impl: self, object: value, path: path.compacted, index: index)
        spareObject = state
        return FastJSONKeyedContainer(state: state)
    }

    /// Stops recycling keyed containers' states and lets the spare one go.
    func endRecycling() {
        recyclesObjects = false
        spareObject = nil
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
        try moved(to: value, path: nestedPath) { try T(from: self) }
    }

    /// A `T` from the value at `value`, the member or element `key` of `path`: read directly
    /// when ``isSpecial(_:)`` says so, otherwise through its `init(from:)` at `nestedPath`.
    @inline(__always)
    func unwrapValue<T: Decodable, Key: CodingKey>(
        _ value: Int, as type: T.Type, path: CodingPath, key: Key, nestedPath: @autoclosure () -> CodingPath
    ) throws -> T {
        if isSpecial(T.self) { return try unwrapSpecial(value, as: T.self, path: path, key: key) }
        return try decodeNested(T.self, at: value, path: nestedPath())
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
