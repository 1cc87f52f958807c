/// An encoder that accepts everything and keeps nothing: what a probe hands to a value that
/// turned out to need a container, and what the row encoder hands to code it refuses (after
/// recording why), since `Encoder`'s container methods cannot throw. It takes `Int128` and
/// `UInt128` too, whose default implementations throw.
struct DiscardingEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Keyed<Key>(codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        Unkeyed(codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        Single(codingPath: codingPath)
    }

    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws {}
        mutating func encode(_ value: Bool, forKey key: Key) throws {}
        mutating func encode(_ value: String, forKey key: Key) throws {}
        mutating func encode(_ value: Double, forKey key: Key) throws {}
        mutating func encode(_ value: Float, forKey key: Key) throws {}
        mutating func encode(_ value: Int, forKey key: Key) throws {}
        mutating func encode(_ value: Int8, forKey key: Key) throws {}
        mutating func encode(_ value: Int16, forKey key: Key) throws {}
        mutating func encode(_ value: Int32, forKey key: Key) throws {}
        mutating func encode(_ value: Int64, forKey key: Key) throws {}
        mutating func encode(_ value: UInt, forKey key: Key) throws {}
        mutating func encode(_ value: UInt8, forKey key: Key) throws {}
        mutating func encode(_ value: UInt16, forKey key: Key) throws {}
        mutating func encode(_ value: UInt32, forKey key: Key) throws {}
        mutating func encode(_ value: UInt64, forKey key: Key) throws {}
        mutating func encode(_ value: Int128, forKey key: Key) throws {}
        mutating func encode(_ value: UInt128, forKey key: Key) throws {}
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            DiscardingEncoder(codingPath: codingPath + [key]).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Unkeyed(codingPath: codingPath + [key])
        }

        mutating func superEncoder() -> any Encoder { DiscardingEncoder(codingPath: codingPath) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { DiscardingEncoder(codingPath: codingPath + [key]) }
    }

    private struct Unkeyed: UnkeyedEncodingContainer {
        let codingPath: [any CodingKey]
        private(set) var count = 0

        init(codingPath: [any CodingKey]) {
            self.codingPath = codingPath
        }

        mutating func encodeNil() throws { count += 1 }
        mutating func encode(_ value: Bool) throws { count += 1 }
        mutating func encode(_ value: String) throws { count += 1 }
        mutating func encode(_ value: Double) throws { count += 1 }
        mutating func encode(_ value: Float) throws { count += 1 }
        mutating func encode(_ value: Int) throws { count += 1 }
        mutating func encode(_ value: Int8) throws { count += 1 }
        mutating func encode(_ value: Int16) throws { count += 1 }
        mutating func encode(_ value: Int32) throws { count += 1 }
        mutating func encode(_ value: Int64) throws { count += 1 }
        mutating func encode(_ value: UInt) throws { count += 1 }
        mutating func encode(_ value: UInt8) throws { count += 1 }
        mutating func encode(_ value: UInt16) throws { count += 1 }
        mutating func encode(_ value: UInt32) throws { count += 1 }
        mutating func encode(_ value: UInt64) throws { count += 1 }
        mutating func encode(_ value: Int128) throws { count += 1 }
        mutating func encode(_ value: UInt128) throws { count += 1 }
        mutating func encode<T: Encodable>(_ value: T) throws { count += 1 }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            count += 1
            return DiscardingEncoder(codingPath: codingPath).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            count += 1
            return Unkeyed(codingPath: codingPath)
        }

        mutating func superEncoder() -> any Encoder { DiscardingEncoder(codingPath: codingPath) }
    }

    private struct Single: SingleValueEncodingContainer {
        let codingPath: [any CodingKey]

        mutating func encodeNil() throws {}
        mutating func encode(_ value: Bool) throws {}
        mutating func encode(_ value: String) throws {}
        mutating func encode(_ value: Double) throws {}
        mutating func encode(_ value: Float) throws {}
        mutating func encode(_ value: Int) throws {}
        mutating func encode(_ value: Int8) throws {}
        mutating func encode(_ value: Int16) throws {}
        mutating func encode(_ value: Int32) throws {}
        mutating func encode(_ value: Int64) throws {}
        mutating func encode(_ value: UInt) throws {}
        mutating func encode(_ value: UInt8) throws {}
        mutating func encode(_ value: UInt16) throws {}
        mutating func encode(_ value: UInt32) throws {}
        mutating func encode(_ value: UInt64) throws {}
        mutating func encode(_ value: Int128) throws {}
        mutating func encode(_ value: UInt128) throws {}
        mutating func encode<T: Encodable>(_ value: T) throws {}
    }
}
