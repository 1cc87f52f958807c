/// What a keyed container works on: one dictionary, its path, and where the last key was
/// found (members are usually asked for in the order they were written).
///
/// A decoder that recycles them (``BPlistDecoderImpl/recyclesDictionaries``) moves one that no
/// container holds any more to its next dictionary instead of allocating another: only
/// ``BPlistDecoderImpl/keyedContainer(keyedBy:at:path:)`` changes it, and only while the
/// decoder holds the sole reference.
final class BPlistDictionary {
    let impl: BPlistDecoderImpl
    @exclusivity(unchecked) private(set) var object: BPlistObject
    @exclusivity(unchecked) private(set) var path: CodingPath
    @exclusivity(unchecked) var cursor = 0

    init(impl: BPlistDecoderImpl, object: BPlistObject, path: CodingPath) {
        self.impl = impl
        self.object = object
        self.path = path
    }

    /// Moves this state to another dictionary; only while no container holds it.
    @inline(__always) func reset(object: BPlistObject, path: CodingPath) {
        self.object = object
        self.path = path
        cursor = 0
    }

    /// The reference of the value for `name`, or `nil`.
    ///
    /// The key tried first, at the cursor, is compared by reference when the decoder has seen
    /// `name` matched there before (``BPlistDecoderImpl/knownKeys``): a writer stores each
    /// distinct key string once, so the dictionaries of one entity share their key objects.
    func value(named name: String) -> Int? {
        let document = impl.document, count = object.count
        var index = cursor
        if index == count { index = 0 }
        if index < count && index < impl.knownKeys.count {
            let known = impl.knownKeys[index]
            // An ASCII key matched `name` byte for byte, another key as Swift compares strings.
            // A string Swift finds equal to an ASCII one has its bytes unless it is longer: only
            // a singleton decomposition (KELVIN SIGN to "K") turns a non-ASCII scalar into ASCII.
            // `==` on the same literal is one comparison of the strings' raw bits.
            if known.reference == document.reference(at: object.payload, index: index),
               known.name == name, !known.ascii || known.name.utf8.count == name.utf8.count {
                cursor = index + 1
                return document.reference(at: object.payload, index: count + index)
            }
        }
        for _ in 0..<count {
            if index == count { index = 0 }
            let reference = document.reference(at: object.payload, index: index)
            // A UTF-16 key is made into a string to compare: counted (past the budget, no key
            // matches, and the decoding is refused for the limit).
            if let key = try? document.object(reference),
               key.kind == .asciiString || (key.kind == .utf16String && impl.expansion.spend(key)), document.stringEquals(key, name) {
                cursor = index + 1
                impl.remember(key: name, ascii: key.kind == .asciiString, reference: reference, at: index)
                return document.reference(at: object.payload, index: count + index)
            }
            index += 1
        }
        return nil
    }
}

/// A keyed container over one dictionary of a ``BPlistDocument``.
struct BPlistKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let state: BPlistDictionary

    var impl: BPlistDecoderImpl { state.impl }
    var codingPath: [any CodingKey] { state.path.codingPath }

    var allKeys: [Key] {
        let document = impl.document
        return (0..<state.object.count).compactMap { index in
            // Counted as read: past the limit the keys stop, and the decoding is refused for the
            // limit (``BPlistExpansion/isExhausted``).
            guard let key = try? document.object(document.reference(at: state.object.payload, index: index)),
                  impl.expansion.spend(key), let name = try? document.string(key) else { return nil }
            return Key(stringValue: name)
        }
    }

    func contains(_ key: Key) -> Bool { state.value(named: key.stringValue) != nil }

    private func value<K: CodingKey>(_ key: K) throws -> Int {
        guard let value = state.value(named: key.stringValue) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(
                codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        let object = try impl.object(try value(key), path: state.path, key: key)
        return impl.document.isNull(object)
    }

    // The common values are read without the path (``BPlistDecoderImpl/stringWithoutPath(_:)``
    // and its kin), which is passed only to read again what they do not read, for the error.

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let reference = try value(key)
        if let bool = impl.boolWithoutPath(reference) { return bool }
        return try impl.bool(try impl.object(reference, path: state.path, key: key), path: state.path, key: key)
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let reference = try value(key)
        if let string = impl.stringWithoutPath(reference) { return string }
        return try impl.string(try impl.object(reference, path: state.path, key: key), path: state.path, key: key)
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let reference = try value(key)
        if let double = impl.doubleWithoutPath(reference) { return double }
        return try impl.double(try impl.object(reference, path: state.path, key: key), path: state.path, key: key)
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try impl.float(try object(key), path: state.path, key: key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try integer(key) }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try integer(key) }

    private func object(_ key: Key) throws -> BPlistObject {
        try impl.object(try value(key), path: state.path, key: key)
    }

    @inline(__always) private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        let reference = try value(key)
        if let integer = impl.integerWithoutPath(reference, as: T.self) { return integer }
        return try impl.integer(try impl.object(reference, path: state.path, key: key), as: T.self, path: state.path, key: key)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try impl.decodeValue(T.self, at: try value(key), path: state.path, key: key)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let reference = state.value(named: key.stringValue) else { return nil }
        if let string = impl.stringOrNullWithoutPath(reference) { return string }
        let object = try impl.object(reference, path: state.path, key: key)
        if impl.document.isNull(object) { return nil }
        return try impl.string(object, path: state.path, key: key)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let reference = state.value(named: key.stringValue) else { return nil }
        let object = try impl.object(reference, path: state.path, key: key)
        if impl.document.isNull(object) { return nil }
        return try impl.decodeValue(T.self, at: reference, path: state.path, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(try impl.keyedContainer(keyedBy: type, at: try value(key), path: state.path.appending(codingKey: key)))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try impl.unkeyedContainer(at: try value(key), path: state.path.appending(codingKey: key))
    }

    func superDecoder() throws -> any Decoder {
        try decoder(at: StringCodingKey.super)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try decoder(at: key)
    }

    private func decoder<K: CodingKey>(at key: K) throws -> any Decoder {
        BPlistDecoderImpl(
            document: impl.document, userInfo: impl.userInfo, current: try value(key), path: state.path.appending(codingKey: key), expansion: impl.expansion)
    }
}
