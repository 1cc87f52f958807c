/// What a keyed container works on: one object of a ``FastJSONDocument``, its coding path,
/// and for objects whose keys cannot be matched byte for byte, an index by key.
///
/// A class, so that the container, which `KeyedDecodingContainer` copies for every call, is a
/// single reference. A decoder that recycles them (``FastJSONDecoderImpl/recyclesObjects``)
/// moves one that no container holds any more to its next object instead of allocating
/// another: only ``FastJSONDecoderImpl/keyedContainer(keyedBy:at:path:)`` changes it, and only
/// while the decoder holds the sole reference.
final class FastJSONObject {
    let impl: FastJSONDecoderImpl
    /// The object's token.
    @exclusivity(unchecked) private(set) var object: Int
    /// The object's coding path (at most one inline component, so members extend it freely).
    @exclusivity(unchecked) private(set) var path: CodingPath
    /// Set for objects whose keys need matching as strings.
    @exclusivity(unchecked) private(set) var index: FastJSONKeyIndex?

    init(impl: FastJSONDecoderImpl, object: Int, path: CodingPath, index: FastJSONKeyIndex?) {
        self.impl = impl
        self.object = object
        self.path = path
        self.index = index
    }

    /// Moves this state to the object `impl` stands at, an object with plain keys (no
    /// ``FastJSONKeyIndex``) whose path has at most one inline component; only while no
    /// container holds it.
    @inline(__always) func resetToCurrent(of impl: FastJSONDecoderImpl) {
        object = impl.current
        path = impl.path
        index = nil
    }

    /// Moves this state to another object; only while no container holds it.
    @inline(__always) func reset(object: Int, path: CodingPath, index: FastJSONKeyIndex?) {
        self.object = object
        self.path = path
        self.index = index
    }
}

/// A keyed container over one object of a ``FastJSONDocument``.
struct FastJSONKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let state: FastJSONObject

    @inline(__always) var impl: FastJSONDecoderImpl { state.impl }
    @inline(__always) var object: Int { state.object }
    @inline(__always) var index: FastJSONKeyIndex? { state.index }

    var codingPath: [any CodingKey] { state.path.codingPath }

    var allKeys: [Key] {
        if let index { return index.keys.compactMap { Key(stringValue: $0) } }
        var keys: [Key] = []
        let end = impl.tokens[object].end
        var member = object + 1
        while member < end {
            if let key = Key(stringValue: impl.string(at: member)) { keys.append(key) }
            member = impl.document.skip(member + 1)
        }
        return keys
    }

    /// The value token for `key`, or `nil` when the object has no such member.
    @inline(__always) func valueIfPresent(_ key: Key) -> Int? {
        if let index { return index.values[key.stringValue] }
        return impl.member(of: object, named: key.stringValue)
    }

    @inline(__always) func value(_ key: Key) throws -> Int {
        guard let value = valueIfPresent(key) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(
                codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return value
    }

    /// The value token for `key`, or `nil` when it is missing or `null`.
    @inline(__always) func nonNullValue(_ key: Key) -> Int? {
        guard let value = valueIfPresent(key), impl.tokens[value].tag != FastJSONKind.null.rawValue else { return nil }
        return value
    }

    func contains(_ key: Key) -> Bool {
        valueIfPresent(key) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        impl.kind(try value(key)) == .null
    }

    // MARK: Scalars

    // The common values are read without the path (``FastJSONDecoderImpl/unwrapWithoutPath(_:as:)``):
    // passing the path, a `var` of the state object, copies it on every call.

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let value = try value(key)
        if let bool = impl.unwrapWithoutPath(value, as: Bool.self) { return bool }
        return try impl.unwrapBool(value, path: state.path, key: key)
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let value = try value(key)
        if let string = impl.unwrapWithoutPath(value, as: String.self) { return string }
        return try impl.unwrapString(value, path: state.path, key: key)
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let value = try value(key)
        if let double = impl.unwrapWithoutPath(value, as: Double.self) { return double }
        return try impl.unwrapDouble(value, path: state.path, key: key)
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try impl.unwrapFloat(try value(key), path: state.path, key: key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try integer(key) }

    @inline(__always) private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        let value = try value(key)
        if let integer = impl.unwrapWithoutPath(value, as: T.self) { return integer }
        return try impl.unwrapInteger(value, as: T.self, path: state.path, key: key)
    }

    // Generic over `T`, these run unspecialized: asking ``FastJSONDecoderImpl/unwrapWithoutPath(_:as:)``
    // first would look up the metadata of `T?` on every call, which costs more than the path.
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try impl.unwrapValue(try value(key), as: T.self, path: state.path, key: key, nestedPath: state.path.appending(.key(key)))
    }

    // MARK: Optionals: a missing key or null is nil

    /// `unwrap` of the value token for `key`, or `nil` when it is missing or `null`.
    @inline(__always) private func scalarIfPresent<T>(_ key: Key, _ unwrap: (Int) throws -> T) rethrows -> T? {
        guard let value = nonNullValue(key) else { return nil }
        return try unwrap(value)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try scalarIfPresent(key) { try impl.unwrapWithoutPath($0, as: Bool.self) ?? impl.unwrapBool($0, path: state.path, key: key) }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try scalarIfPresent(key) { try impl.unwrapWithoutPath($0, as: String.self) ?? impl.unwrapString($0, path: state.path, key: key) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try scalarIfPresent(key) { try impl.unwrapWithoutPath($0, as: Double.self) ?? impl.unwrapDouble($0, path: state.path, key: key) }
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try scalarIfPresent(key) { try impl.unwrapFloat($0, path: state.path, key: key) } }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int128.Type, forKey key: Key) throws -> Int128? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt128.Type, forKey key: Key) throws -> UInt128? { try integerIfPresent(key) }

    @inline(__always) private func integerIfPresent<T: FixedWidthInteger>(_ key: Key) throws -> T? {
        try scalarIfPresent(key) { try impl.unwrapWithoutPath($0, as: T.self) ?? impl.unwrapInteger($0, as: T.self, path: state.path, key: key) }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try scalarIfPresent(key) { try impl.unwrapValue($0, as: T.self, path: state.path, key: key, nestedPath: state.path.appending(.key(key))) }
    }

    // MARK: Nesting

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let value = try value(key)
        return KeyedDecodingContainer(try impl.keyedContainer(keyedBy: type, at: value, path: state.path.appending(.key(key))))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let value = try value(key)
        return try impl.unkeyedContainer(at: value, path: state.path.appending(.key(key)))
    }

    func superDecoder() throws -> any Decoder {
        decoder(for: StringCodingKey.super, value: valueIfPresent(named: StringCodingKey.super.stringValue))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        decoder(for: key, value: valueIfPresent(key))
    }

    private func valueIfPresent(named name: String) -> Int? {
        if let index { return index.values[name] }
        return impl.member(of: object, named: name)
    }

    /// A separate decoder for a member, over `null` when the member is missing.
    private func decoder(for key: some CodingKey, value: Int?) -> FastJSONDecoderImpl {
        FastJSONDecoderImpl(
            document: impl.document, userInfo: impl.userInfo, floats: impl.floats,
            current: value ?? impl.document.missing, path: state.path.appending(.key(key)))
    }
}
