import Foundation

/// Decodes `Decodable` values from a binary property list as `PropertyListDecoder` does, read
/// in place from the object table instead of through Foundation's decoder.
///
/// The same values and `DecodingError` cases and coding paths as `PropertyListDecoder` for
/// what `PropertyListEncoder` writes: `Date` from a plist date only, `Data` from plist data,
/// `nil` from the string `"$null"` (the encoder's nil), integers that must fit their type.
/// Differences, where Foundation loses information: a non-optional `String` reads `"$null"` as
/// that string rather than failing, an integer may come from a real that holds it exactly, and
/// a damaged table is refused with the byte where it goes wrong (``BPlistSyntaxError`` as the
/// `dataCorrupted` error's underlying error).
package enum BPlistDecoder {
    /// Deeper nesting is refused: a property list can hold cycles, which a recursive
    /// `Decodable` type would follow for ever.
    package static let maximumDepth = 512

    /// Decodes a `T` from the binary property list in `data`.
    ///
    /// - Throws: `DecodingError` (`dataCorrupted` with a ``BPlistSyntaxError`` for a damaged
    ///   table), or whatever `T.init(from:)` throws.
    /// - Complexity: O(objects decoded); the bytes are copied once.
    /// - Parameter parallel: Whether large arrays of dictionaries may be decoded half on
    ///   another thread (see ``ArraySpeculation``), for types whose `init(from:)` can run on
    ///   two threads at once. Results and errors are the same.
    package static func decode<T: Decodable>(
        _ type: T.Type, from data: Data, userInfo: [CodingUserInfoKey: any Sendable] = [:], parallel: Bool = false
    ) throws -> T {
        let document: BPlistDocument
        do {
            document = try BPlistDocument(data)
        } catch {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: [], debugDescription: "The given data was not a valid property list.", underlyingError: error))
        }
        let impl = BPlistDecoderImpl(document: document, userInfo: userInfo, current: document.topObject, path: .root)
        impl.parallel = parallel && ProcessInfo.processInfo.activeProcessorCount > 1
        defer {
            for speculation in impl.speculations { speculation.cancel() }
            impl.speculations = []
        }
        return try impl.decodeValue(T.self, at: document.topObject, path: .root, key: NoCodingKey())
    }
}

/// The decoder and its single-value container. One instance serves a whole document:
/// decoding a nested value moves it to that value and back.
final class BPlistDecoderImpl: Decoder, SingleValueDecodingContainer {
    let document: BPlistDocument
    let userInfo: [CodingUserInfoKey: Any]
    /// The object being decoded.
    var current: Int
    var path: CodingPath
    private var depth = 0
    var parallel = false
    var speculations: [ArraySpeculation] = []

    init(document: BPlistDocument, userInfo: [CodingUserInfoKey: Any], current: Int, path: CodingPath) {
        self.document = document
        self.userInfo = userInfo
        self.current = current
        self.path = path
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
        if T.self == Date.self {
            guard object.kind == .date else { throw typeMismatch(Date.self, object, path: path, key: key) }
            return unsafeBitCast(Date(timeIntervalSinceReferenceDate: document.real(object)), to: T.self)
        }
        if T.self == Data.self {
            guard object.kind == .data else { throw typeMismatch(Data.self, object, path: path, key: key) }
            return Data(document.span(object, byteCount: object.count)) as! T
        }
        if T.self == UUID.self, object.kind == .asciiString, let uuid = UUIDParsing.canonicalUUID(document.span(object, byteCount: object.count)) {
            return unsafeBitCast(uuid, to: T.self)
        }
        if T.self == [UUID].self, object.kind == .array, let uuids = canonicalUUIDs(object) {
            return unsafeBitCast(uuids, to: T.self)
        }
        return try decodeNested(T.self, at: reference, path: path.appending(codingKey: key))
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

    /// Decodes `T` through its `init(from:)` with this decoder moved to `reference`.
    func decodeNested<T: Decodable>(_ type: T.Type, at reference: Int, path nestedPath: CodingPath) throws -> T {
        guard depth < BPlistDecoder.maximumDepth else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: nestedPath.codingPath, debugDescription: "The property list nests deeper than \(BPlistDecoder.maximumDepth) levels (a cycle?)."))
        }
        let outerCurrent = current
        var outerPath = nestedPath
        swap(&outerPath, &path)
        current = reference
        depth += 1
        defer {
            depth -= 1
            current = outerCurrent
            swap(&outerPath, &path)
        }
        return try T(from: self)
    }

    func string<Key: CodingKey>(_ object: BPlistObject, path: CodingPath, key: Key) throws -> String {
        guard object.kind == .asciiString || object.kind == .utf16String else { throw typeMismatch(String.self, object, path: path, key: key) }
        return try reading(path: path, key: key) { try document.string(object) }
    }

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

    func integer<T: FixedWidthInteger, Key: CodingKey>(_ object: BPlistObject, as type: T.Type, path: CodingPath, key: Key) throws -> T {
        var result: T?
        switch object.kind {
        case .integer:
            let value = try integerParts(object, path: path, key: key)
            if let signed = value.signed { result = T(exactly: signed) } else if let unsigned = value.unsigned { result = T(exactly: unsigned) }
        case .real:
            let value = document.real(object)
            result = T(exactly: value)
        default:
            throw typeMismatch(T.self, object, path: path, key: key)
        }
        guard let result else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: path.codingPath(appending: key), debugDescription: "Parsed property list number does not fit in \(T.self)."))
        }
        return result
    }

    // MARK: Containers

    func keyedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, at reference: Int, path: CodingPath) throws -> BPlistKeyedContainer<NestedKey> {
        let object = try object(reference, path: path, key: NoCodingKey())
        guard object.kind == .dictionary else {
            throw typeMismatch([String: Any].self, object, path: path, key: NoCodingKey())
        }
        return BPlistKeyedContainer(state: BPlistDictionary(impl: self, object: object, path: path.compacted))
    }

    func unkeyedContainer(at reference: Int, path: CodingPath) throws -> BPlistUnkeyedContainer {
        let object = try object(reference, path: path, key: NoCodingKey())
        guard object.kind == .array || object.kind == .set else {
            throw typeMismatch([Any].self, object, path: path, key: NoCodingKey())
        }
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

    private func singleInteger<T: FixedWidthInteger>() throws -> T {
        try integer(try currentObject, as: T.self, path: path, key: NoCodingKey())
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decodeValue(T.self, at: current, path: path, key: NoCodingKey())
    }
}

// MARK: - Keyed

/// What a keyed container works on: one dictionary, its path, and where the last key was
/// found (members are usually asked for in the order they were written).
final class BPlistDictionary {
    let impl: BPlistDecoderImpl
    let object: BPlistObject
    let path: CodingPath
    var cursor = 0

    init(impl: BPlistDecoderImpl, object: BPlistObject, path: CodingPath) {
        self.impl = impl
        self.object = object
        self.path = path
    }

    /// The reference of the value for `name`, or `nil`.
    func value(named name: String) -> Int? {
        let document = impl.document, count = object.count
        var index = cursor
        for _ in 0..<count {
            if index == count { index = 0 }
            if let key = try? document.object(document.reference(at: object.payload, index: index)),
               key.kind == .asciiString || key.kind == .utf16String, document.stringEquals(key, name) {
                cursor = index + 1
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
            guard let key = try? document.object(document.reference(at: state.object.payload, index: index)),
                  let name = try? document.string(key) else { return nil }
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

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try impl.bool(try object(key), path: state.path, key: key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try impl.string(try object(key), path: state.path, key: key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try impl.double(try object(key), path: state.path, key: key) }
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

    private func object(_ key: Key) throws -> BPlistObject {
        try impl.object(try value(key), path: state.path, key: key)
    }

    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        try impl.integer(try object(key), as: T.self, path: state.path, key: key)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try impl.decodeValue(T.self, at: try value(key), path: state.path, key: key)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let reference = state.value(named: key.stringValue) else { return nil }
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
        BPlistDecoderImpl(document: impl.document, userInfo: impl.userInfo, current: try value(key), path: state.path.appending(codingKey: key))
    }
}

// MARK: - Unkeyed

/// An unkeyed container over one array of a ``BPlistDocument``.
final class BPlistUnkeyedContainer: UnkeyedDecodingContainer {
    let impl: BPlistDecoderImpl
    private let object: BPlistObject
    private let path: CodingPath
    let count: Int?
    private(set) var currentIndex = 0
    private var speculation: ArraySpeculation?

    init(impl: BPlistDecoderImpl, object: BPlistObject, path: CodingPath) {
        self.impl = impl
        self.object = object
        self.path = path
        count = object.count
    }

    var codingPath: [any CodingKey] { path.codingPath }
    var isAtEnd: Bool { currentIndex >= object.count }

    private var indexKey: IndexCodingKey { IndexCodingKey(currentIndex) }

    /// The current element's reference; an error at the end.
    private func next(_ type: Any.Type) throws -> Int {
        guard currentIndex < object.count else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: path.codingPath(appending: indexKey), debugDescription: "Unkeyed container is at end."))
        }
        return impl.document.reference(at: object.payload, index: currentIndex)
    }

    /// Before anything but taking a speculated result: past the speculation's start, drops it.
    private func settle() {
        if let speculation, currentIndex >= speculation.start {
            speculation.cancel()
            self.speculation = nil
        }
    }

    func decodeNil() throws -> Bool {
        settle()
        let element = try impl.object(try next(Never.self), path: path, key: indexKey)
        guard impl.document.isNull(element) else { return false }
        currentIndex += 1
        return true
    }

    private func element<T>(_ type: T.Type, _ read: (BPlistObject) throws -> T) throws -> T {
        settle()
        let result = try read(try impl.object(try next(type), path: path, key: indexKey))
        currentIndex += 1
        return result
    }

    func decode(_ type: Bool.Type) throws -> Bool { try element(type) { try impl.bool($0, path: path, key: indexKey) } }
    func decode(_ type: String.Type) throws -> String { try element(type) { try impl.string($0, path: path, key: indexKey) } }
    func decode(_ type: Double.Type) throws -> Double { try element(type) { try impl.double($0, path: path, key: indexKey) } }
    func decode(_ type: Float.Type) throws -> Float { try element(type) { try impl.float($0, path: path, key: indexKey) } }
    func decode(_ type: Int.Type) throws -> Int { try integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    private func integer<T: FixedWidthInteger>() throws -> T {
        try element(T.self) { try impl.integer($0, as: T.self, path: path, key: indexKey) }
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let speculation, currentIndex >= speculation.start {
            if ObjectIdentifier(T.self) == speculation.elementType && speculation.hasResult(at: currentIndex) {
                let result = speculation.take(T.self)
                currentIndex += 1
                return result
            }
            settle()
        } else if speculation == nil && currentIndex == 0 {
            speculate(T.self)
        }
        let result = try impl.decodeValue(T.self, at: try next(type), path: path, key: indexKey)
        currentIndex += 1
        return result
    }

    /// Has the second half of a large array of dictionaries decoded as `T` on another thread.
    private func speculate<T: Decodable>(_ type: T.Type) {
        guard impl.parallel, object.count >= ArraySpeculation.minimumElements,
              (try? impl.document.object(impl.document.reference(at: object.payload, index: 0)))?.kind == .dictionary else { return }
        let worker = BPlistArrayWorker(impl: impl, array: object, path: path)
        let speculation = ArraySpeculation.start(T.self, worker: worker, start: object.count / 2, total: object.count)
        impl.speculations.append(speculation)
        self.speculation = speculation
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        settle()
        let container = try impl.keyedContainer(keyedBy: type, at: try next(KeyedDecodingContainer<NestedKey>.self), path: path.appending(.index(currentIndex)))
        currentIndex += 1
        return KeyedDecodingContainer(container)
    }

    func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        settle()
        let container = try impl.unkeyedContainer(at: try next((any UnkeyedDecodingContainer).self), path: path.appending(.index(currentIndex)))
        currentIndex += 1
        return container
    }

    func superDecoder() throws -> any Decoder {
        settle()
        let reference = try next((any Decoder).self)
        let decoder = BPlistDecoderImpl(document: impl.document, userInfo: impl.userInfo, current: reference, path: path.appending(.index(currentIndex)))
        currentIndex += 1
        return decoder
    }
}

/// Decodes elements of one array on a decoder of its own, for a speculation.
final class BPlistArrayWorker: SpeculativeArrayWorker {
    private let impl: BPlistDecoderImpl
    private let array: BPlistObject
    private let path: CodingPath

    init(impl: BPlistDecoderImpl, array: BPlistObject, path: CodingPath) {
        self.impl = BPlistDecoderImpl(document: impl.document, userInfo: impl.userInfo, current: impl.current, path: .root)
        self.array = array
        // Its own node, so the two threads do not share one reference count.
        self.path = CodingPath(node: path.materialized.map { CodingPathNode(parent: $0.parent, first: $0.first, second: $0.second) })
    }

    func decodeElement<T: Decodable>(_ type: T.Type, index: Int) -> T? {
        try? impl.decodeValue(T.self, at: impl.document.reference(at: array.payload, index: index), path: path, key: IndexCodingKey(index))
    }
}
