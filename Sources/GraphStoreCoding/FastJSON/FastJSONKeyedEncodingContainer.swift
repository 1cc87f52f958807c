/// A keyed container writing the members of one JSON object, in the order they are encoded.
struct FastJSONKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let impl: FastJSONEncoderImpl
    /// The object's frame.
    let frame: FastJSONFrameID
    /// The object's coding path.
    let path: CodingPath

    var codingPath: [any CodingKey] { path.codingPath }

    // MARK: - Scalars

    @inline(__always)
    private func begin(_ key: Key, _ value: @autoclosure () -> Any) throws {
        _ = try impl.beginMember(frame, key: key, path: path, value: value())
    }

    mutating func encodeNil(forKey key: Key) throws { try begin(key, Optional<Any>.none as Any); impl.out.append("null") }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try begin(key, value); impl.out.appendBool(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { try begin(key, value); impl.out.appendString(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try begin(key, value); impl.writeFloatingPoint(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try begin(key, value); impl.writeFloatingPoint(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: Int128, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt128, forKey key: Key) throws { try encodeInteger(value, forKey: key) }

    @inline(__always)
    private func encodeInteger<T: FixedWidthInteger>(_ value: T, forKey key: Key) throws {
        try begin(key, value)
        impl.out.appendInteger(value)
    }

    // MARK: - Any value

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let mark = try impl.beginMember(frame, key: key, path: path, value: value)
        do {
            if try impl.writeSpecial(value, path: path, key: key) { return }
            try impl.encodeNested(value, path: path.appending(.key(key)))
        } catch {
            impl.rollBack(to: mark, in: frame)
            throw error
        }
    }

    // MARK: - Nesting

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(FastJSONKeyedEncodingContainer<NestedKey>(impl: impl, frame: nest(.object, key), path: path.appending(.key(key))))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        FastJSONUnkeyedEncodingContainer(impl: impl, frame: nest(.array, key), path: path.appending(.key(key)))
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(key: StringCodingKey.super)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(key: key)
    }

    private func superEncoder<K: CodingKey>(key: K) -> any Encoder {
        let nestedPath = path.appending(.key(key))
        guard (try? impl.beginMember(frame, key: key, path: path, value: ())) != nil else {
            if impl.deferredError == nil { impl.deferredError = impl.outOfOrder((), at: nestedPath.codingPath) }
            return FastJSONReferencingEncoder(impl: impl, frame: .closed, path: nestedPath)
        }
        return FastJSONReferencingEncoder(impl: impl, frame: impl.frames.push(.pending), path: nestedPath)
    }

    /// Writes `key` and opens an object or array as its value; `.closed` if this container is.
    private func nest(_ kind: FastJSONFrame.Kind, _ key: Key) -> FastJSONFrameID {
        guard (try? impl.beginMember(frame, key: key, path: path, value: ())) != nil else {
            if impl.deferredError == nil { impl.deferredError = impl.outOfOrder((), at: path.codingPath(appending: key)) }
            return .closed
        }
        guard impl.admitsContainer(at: path.appending(.key(key))) else { return .closed }
        impl.out.append(kind == .object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        return impl.frames.push(kind)
    }
}

/// The encoder `superEncoder()` returns: a value slot of its own, written when it is used (or
/// as `{}` if it is not, as `JSONEncoder` does).
final class FastJSONReferencingEncoder: Encoder, FastJSONSlotEncoder {
    let impl: FastJSONEncoderImpl
    let frame: FastJSONFrameID
    let path: CodingPath

    init(impl: FastJSONEncoderImpl, frame: FastJSONFrameID, path: CodingPath) {
        self.impl = impl
        self.frame = frame
        self.path = path
    }

    var codingPath: [any CodingKey] { path.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { impl.userInfo }
    var slotID: FastJSONFrameID { frame }
    var slotPath: CodingPath { path }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        impl.keyedContainer(at: frame, path: path)
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        impl.unkeyedContainer(at: frame, path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }
}
