import Foundation

/// Encodes `Encodable` values as a binary property list, as `PropertyListEncoder` does
/// (`Date` and `Data` as native objects, `nil` as the string `"$null"`, an `Encodable` that
/// encodes nothing as an empty dictionary), but losslessly: see ``BPlistObjectTable``.
///
/// ```swift
/// let table = BPlistObjectTable()
/// let top = try BPlistEncoder.encode(value, into: table)
/// let data = table.serialized(top: top)
/// ```
package enum BPlistEncoder {
    /// Adds `value` (and everything it holds) to `table` and returns its reference.
    ///
    /// - Throws: What `value`'s `encode(to:)` throws.
    /// - Complexity: O(size of `value`).
    package static func encode<T: Encodable>(
        _ value: T, into table: BPlistObjectTable, userInfo: [CodingUserInfoKey: any Sendable] = [:], path: CodingPath = .root
    ) throws -> UInt32 {
        let encoder = BPlistEncoderImpl(table: table, userInfo: userInfo, path: path)
        return try encoder.encode(value, path: path)
    }

    /// The whole file for `value`.
    ///
    /// - Throws: What `value`'s `encode(to:)` throws.
    package static func encode<T: Encodable>(_ value: T, userInfo: [CodingUserInfoKey: any Sendable] = [:]) throws -> Data {
        let table = BPlistObjectTable()
        let top = try encode(value, into: table, userInfo: userInfo)
        return table.serialized(top: top)
    }
}

/// Adds many values to one table through one encoder, so that encoding the elements of a
/// large array does not make an encoder for each.
///
/// ```swift
/// let table = BPlistObjectTable()
/// let encoder = BPlistTableEncoder(table: table, path: arrayPath)
/// let elements = try objects.enumerated().map { try encoder.encode($1, path: arrayPath.appending(.index($0))) }
/// ```
package struct BPlistTableEncoder {
    private let impl: BPlistEncoderImpl

    package init(table: BPlistObjectTable, userInfo: [CodingUserInfoKey: any Sendable] = [:], path: CodingPath) {
        impl = BPlistEncoderImpl(table: table, userInfo: userInfo, path: path)
    }

    /// Adds `value` (and everything it holds), found at `path` of the document (for the
    /// coding paths in errors), and returns its reference.
    ///
    /// - Throws: What `value`'s `encode(to:)` throws.
    /// - Complexity: O(size of `value`).
    package func encode<T: Encodable>(_ value: T, path: CodingPath) throws -> UInt32 {
        try impl.encode(value, path: path)
    }
}

/// What a value's `encode(to:)` produced: nothing yet, an object, or a container (filled in
/// until the value's `encode(to:)` returns, then added to the table).
enum BPlistSlot {
    case none
    case reference(UInt32)
    case container(BPlistContainerBox)
    case encoder(BPlistEncoderImpl)
}

/// An array or dictionary being filled.
final class BPlistContainerBox {
    let isDictionary: Bool
    var keys: [UInt32] = []
    /// The elements' references; a placeholder where ``deferred`` has the element.
    var values: [UInt32] = []
    /// Nested containers and encoders, still being filled: their objects are added when this
    /// container is.
    var deferred: [(index: Int, slot: BPlistSlot)] = []

    init(isDictionary: Bool) {
        self.isDictionary = isDictionary
        if isDictionary { keys.reserveCapacity(12) }
        values.reserveCapacity(12)
    }

    var count: Int { values.count }

    func append(_ reference: UInt32) { values.append(reference) }

    func append(deferred slot: BPlistSlot) {
        deferred.append((values.count, slot))
        values.append(0)
    }
}

/// The first array or dictionary of an encoding that would nest deeper than the readers take
/// (see ``BPlistEncoderImpl/admitsContainer(at:)``), shared by the encoders of one encoding
/// (its `superEncoder()`s'), since containers are made where nothing can be thrown.
final class BPlistDepthFailure {
    var error: EncodingError?
}

/// The encoder and its single-value container. One instance serves a whole value: encoding a
/// nested value saves what the outer one produced so far and restores it.
final class BPlistEncoderImpl: Encoder, SingleValueEncodingContainer {
    let table: BPlistObjectTable
    let userInfo: [CodingUserInfoKey: Any]
    var path: CodingPath
    /// What the value being encoded has produced.
    var result: BPlistSlot = .none
    let depthFailure: BPlistDepthFailure

    /// The deepest nesting of arrays and dictionaries written, counted from the document's
    /// root: what the generic reader (``BPlistDecoder/maximumDepth``) and JSON's parser take,
    /// so that a value a property-list store holds is one its JSON journal holds too.
    static let maximumDepth = BPlistDecoder.maximumDepth

    init(table: BPlistObjectTable, userInfo: [CodingUserInfoKey: Any], path: CodingPath, depthFailure: BPlistDepthFailure = BPlistDepthFailure()) {
        self.table = table
        self.userInfo = userInfo
        self.path = path
        self.depthFailure = depthFailure
    }

    var codingPath: [any CodingKey] { path.codingPath }

    // MARK: Values

    /// `value`'s object: property-list types and common primitives directly, anything else
    /// through its `encode(to:)` at `valuePath`.
    ///
    /// - Throws: What `value`'s `encode(to:)` throws; `EncodingError.invalidValue` once a
    ///   container nests deeper than ``maximumDepth`` (also when that `encode(to:)` drops the
    ///   error).
    func encode<T: Encodable>(_ value: T, path valuePath: @autoclosure () -> CodingPath) throws -> UInt32 {
        if let reference = scalar(value) { return reference }
        // Nothing more is encoded past a container nested too deep: a recursive value stops there.
        if let error = depthFailure.error { throw error }
        let outerResult = result
        var outerPath = valuePath()
        swap(&outerPath, &path)
        result = .none
        defer {
            result = outerResult
            swap(&outerPath, &path)
        }
        try value.encode(to: self)
        if let error = depthFailure.error { throw error }
        return finish(result)
    }

    /// Whether an array or dictionary may be made at `containerPath` (from the document's
    /// root): nested at most ``maximumDepth`` deep. When it may not, the error is kept (the
    /// first one only), to be thrown by the encoding of any value from then on.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    func admitsContainer(at containerPath: CodingPath) -> Bool {
        guard let error = containerPath.nestingError(maximumDepth: Self.maximumDepth, containers: "dictionaries") else { return true }
        if depthFailure.error == nil { depthFailure.error = error }
        return false
    }

    /// The object of a value of a type the table holds natively, else `nil`.
    @inline(__always) private func scalar<T: Encodable>(_ value: T) -> UInt32? {
        if T.self == String.self { return table.string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return table.integer(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == Int64.self { return table.integer(unsafeBitCast(value, to: Int64.self)) }
        if T.self == Int32.self { return table.integer(Int64(unsafeBitCast(value, to: Int32.self))) }
        if T.self == Double.self { return table.double(unsafeBitCast(value, to: Double.self)) }
        if T.self == Bool.self { return table.bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Date.self { return table.date(unsafeBitCast(value, to: Date.self)) }
        if T.self == Data.self { return table.data(value as! Data) }
        if T.self == UUID.self { return table.uuid(unsafeBitCast(value, to: UUID.self)) }
        if T.self == Float.self { return table.float(unsafeBitCast(value, to: Float.self)) }
        if T.self == UInt64.self { return table.unsigned(unsafeBitCast(value, to: UInt64.self)) }
        return nil
    }

    /// The object for what a value produced; containers are added after their elements.
    func finish(_ slot: BPlistSlot) -> UInt32 {
        switch slot {
        case .none: return table.dictionary(keys: [], values: [])
        case .reference(let reference): return reference
        case .encoder(let encoder): return finish(encoder.result)
        case .container(let box):
            for (index, slot) in box.deferred { box.values[index] = finish(slot) }
            return box.isDictionary ? table.dictionary(keys: box.keys, values: box.values) : table.array(box.values)
        }
    }

    /// The container box of the current value, made on first use; asking for another kind
    /// than the value already has is a programming error, as in Foundation's encoders.
    private func box(isDictionary: Bool) -> BPlistContainerBox {
        if case .container(let box) = result {
            precondition(box.isDictionary == isDictionary, "GraphStore: a value asked for a keyed and an unkeyed container")
            return box
        }
        precondition(!isEncoded, "GraphStore: a value asked for a container after encoding a single value")
        // Made anyway (nothing can be thrown here): the encoding throws when this value's ends.
        _ = admitsContainer(at: path)
        let box = BPlistContainerBox(isDictionary: isDictionary)
        result = .container(box)
        return box
    }

    private var isEncoded: Bool {
        if case .none = result { return false }
        return true
    }

    // MARK: Encoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(BPlistKeyedEncodingContainer<Key>(encoder: self, box: box(isDictionary: true), path: path))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        BPlistUnkeyedEncodingContainer(encoder: self, box: box(isDictionary: false), path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: SingleValueEncodingContainer

    private func set(_ reference: UInt32) {
        precondition(!isEncoded, "GraphStore: a single value container encoded twice")
        result = .reference(reference)
    }

    func encodeNil() throws { set(table.null) }
    func encode(_ value: Bool) throws { set(table.bool(value)) }
    func encode(_ value: String) throws { set(table.string(value)) }
    func encode(_ value: Double) throws { set(table.double(value)) }
    func encode(_ value: Float) throws { set(table.float(value)) }
    func encode(_ value: Int) throws { set(table.integer(Int64(value))) }
    func encode(_ value: Int8) throws { set(table.integer(Int64(value))) }
    func encode(_ value: Int16) throws { set(table.integer(Int64(value))) }
    func encode(_ value: Int32) throws { set(table.integer(Int64(value))) }
    func encode(_ value: Int64) throws { set(table.integer(value)) }
    func encode(_ value: UInt) throws { set(table.unsigned(UInt64(value))) }
    func encode(_ value: UInt8) throws { set(table.integer(Int64(value))) }
    func encode(_ value: UInt16) throws { set(table.integer(Int64(value))) }
    func encode(_ value: UInt32) throws { set(table.integer(Int64(value))) }
    func encode(_ value: UInt64) throws { set(table.unsigned(value)) }
    func encode(_ value: Int128) throws { set(table.integer128(value)) }
    func encode(_ value: UInt128) throws { set(table.unsigned128(value)) }
    func encode<T: Encodable>(_ value: T) throws {
        precondition(!isEncoded, "GraphStore: a single value container encoded twice")
        let reference = try encode(value, path: path)
        result = .reference(reference)
    }
}

// MARK: - Containers

struct BPlistKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: BPlistEncoderImpl
    let box: BPlistContainerBox
    let path: CodingPath

    var codingPath: [any CodingKey] { path.codingPath }

    private func add(_ reference: UInt32, forKey key: Key) {
        box.keys.append(encoder.table.key(key.stringValue))
        box.append(reference)
    }

    mutating func encodeNil(forKey key: Key) throws { add(encoder.table.null, forKey: key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { add(encoder.table.bool(value), forKey: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { add(encoder.table.string(value), forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { add(encoder.table.double(value), forKey: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { add(encoder.table.float(value), forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { add(encoder.table.integer(Int64(value)), forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { add(encoder.table.integer(Int64(value)), forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { add(encoder.table.integer(Int64(value)), forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { add(encoder.table.integer(Int64(value)), forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { add(encoder.table.integer(value), forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { add(encoder.table.unsigned(UInt64(value)), forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { add(encoder.table.integer(Int64(value)), forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { add(encoder.table.integer(Int64(value)), forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { add(encoder.table.integer(Int64(value)), forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { add(encoder.table.unsigned(value), forKey: key) }
    mutating func encode(_ value: Int128, forKey key: Key) throws { add(encoder.table.integer128(value), forKey: key) }
    mutating func encode(_ value: UInt128, forKey key: Key) throws { add(encoder.table.unsigned128(value), forKey: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let path = self.path
        add(try encoder.encode(value, path: path.appending(codingKey: key)), forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = BPlistContainerBox(isDictionary: true), nestedPath = path.appending(codingKey: key)
        _ = encoder.admitsContainer(at: nestedPath)
        box.keys.append(encoder.table.key(key.stringValue))
        box.append(deferred: .container(nested))
        return KeyedEncodingContainer(BPlistKeyedEncodingContainer<NestedKey>(encoder: encoder, box: nested, path: nestedPath))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = BPlistContainerBox(isDictionary: false), nestedPath = path.appending(codingKey: key)
        _ = encoder.admitsContainer(at: nestedPath)
        box.keys.append(encoder.table.key(key.stringValue))
        box.append(deferred: .container(nested))
        return BPlistUnkeyedEncodingContainer(encoder: encoder, box: nested, path: nestedPath)
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: StringCodingKey.super) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key) }

    private func superEncoder<K: CodingKey>(named key: K) -> any Encoder {
        let nested = BPlistEncoderImpl(
            table: encoder.table, userInfo: encoder.userInfo, path: path.appending(codingKey: key), depthFailure: encoder.depthFailure)
        box.keys.append(encoder.table.key(key.stringValue))
        box.append(deferred: .encoder(nested))
        return nested
    }
}

struct BPlistUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: BPlistEncoderImpl
    let box: BPlistContainerBox
    let path: CodingPath

    var codingPath: [any CodingKey] { path.codingPath }
    var count: Int { box.count }

    private func add(_ reference: UInt32) { box.append(reference) }

    mutating func encodeNil() throws { add(encoder.table.null) }
    mutating func encode(_ value: Bool) throws { add(encoder.table.bool(value)) }
    mutating func encode(_ value: String) throws { add(encoder.table.string(value)) }
    mutating func encode(_ value: Double) throws { add(encoder.table.double(value)) }
    mutating func encode(_ value: Float) throws { add(encoder.table.float(value)) }
    mutating func encode(_ value: Int) throws { add(encoder.table.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { add(encoder.table.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { add(encoder.table.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { add(encoder.table.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { add(encoder.table.integer(value)) }
    mutating func encode(_ value: UInt) throws { add(encoder.table.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { add(encoder.table.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { add(encoder.table.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { add(encoder.table.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { add(encoder.table.unsigned(value)) }
    mutating func encode(_ value: Int128) throws { add(encoder.table.integer128(value)) }
    mutating func encode(_ value: UInt128) throws { add(encoder.table.unsigned128(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = self.path, index = box.count
        add(try encoder.encode(value, path: path.appending(.index(index))))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = BPlistContainerBox(isDictionary: true)
        let nestedPath = path.appending(.index(box.count))
        _ = encoder.admitsContainer(at: nestedPath)
        box.append(deferred: .container(nested))
        return KeyedEncodingContainer(BPlistKeyedEncodingContainer<NestedKey>(encoder: encoder, box: nested, path: nestedPath))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = BPlistContainerBox(isDictionary: false)
        let nestedPath = path.appending(.index(box.count))
        _ = encoder.admitsContainer(at: nestedPath)
        box.append(deferred: .container(nested))
        return BPlistUnkeyedEncodingContainer(encoder: encoder, box: nested, path: nestedPath)
    }

    mutating func superEncoder() -> any Encoder {
        let nested = BPlistEncoderImpl(
            table: encoder.table, userInfo: encoder.userInfo, path: path.appending(.index(box.count)), depthFailure: encoder.depthFailure)
        box.append(deferred: .encoder(nested))
        return nested
    }
}
