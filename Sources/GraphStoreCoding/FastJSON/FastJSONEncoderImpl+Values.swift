import Foundation

/// Scalar values, the types `JSONEncoder` writes by itself, and the single-value container.
extension FastJSONEncoderImpl {
    // MARK: - Floating point

    /// A double or float as `JSONEncoder` writes it; non-finite ones as the strategy's strings.
    @inline(__always)
    func writeFloatingPoint<F: BinaryFloatingPoint & TextOutputStreamable>(_ value: F) {
        if _fastPath(value.isFinite) {
            out.appendFinite(value)
        } else {
            writeNonConforming(isNaN: value.isNaN, isNegative: value < 0)
        }
    }

    private func writeNonConforming(isNaN: Bool, isNegative: Bool) {
        out.appendString(isNaN ? floats.nan : isNegative ? floats.negativeInfinity : floats.positiveInfinity)
    }

    // MARK: - Types written directly

    /// Writes `value` directly if its type is one `JSONEncoder` writes by itself (`Date`,
    /// `Data`, `URL`, `Decimal`) or one whose `encode(to:)` only asks a single-value
    /// container for a primitive (`UUID`, `[UUID]` and the common primitives); `false` for
    /// every other type, which goes through its `encode(to:)`, and for a `URL` with a base
    /// (see ``FastJSONEncoder``).
    ///
    /// - Throws: `EncodingError.invalidValue` at `path` + `key` for a NaN `Decimal`, which
    ///   JSON cannot hold (`JSONEncoder` writes the invalid text `NaN`).
    @inline(__always)
    func writeSpecial<T: Encodable, Key: CodingKey>(_ value: T, path: CodingPath, key: Key) throws -> Bool {
        if T.self == Date.self {
            // `.deferredToDate`: `Date.encode(to:)`, a double of seconds since 2001.
            writeFloatingPoint(unsafeBitCast(value, to: Date.self).timeIntervalSinceReferenceDate)
        } else if T.self == UUID.self {
            out.appendUUID(unsafeBitCast(value, to: UUID.self))
        } else if T.self == String.self {
            out.appendString(unsafeBitCast(value, to: String.self))
        } else if T.self == [UUID].self {
            writeUUIDs(unsafeBitCast(value, to: [UUID].self))
        } else if T.self == Int.self {
            out.appendInteger(unsafeBitCast(value, to: Int.self))
        } else if T.self == Double.self {
            writeFloatingPoint(unsafeBitCast(value, to: Double.self))
        } else if T.self == Bool.self {
            out.appendBool(unsafeBitCast(value, to: Bool.self))
        } else if T.self == Int64.self {
            out.appendInteger(unsafeBitCast(value, to: Int64.self))
        } else if T.self == Data.self {
            out.appendBase64(unsafeBitCast(value, to: Data.self))
        } else if T.self == URL.self {
            // A relative URL goes through its own `encode(to:)`, `{"relative":…,"base":…}`:
            // its absolute string would read back without its base, not `==` to it.
            let url = unsafeBitCast(value, to: URL.self)
            guard url.baseURL == nil else { return false }
            out.appendString(url.absoluteString)
        } else if T.self == Decimal.self {
            try writeDecimal(unsafeBitCast(value, to: Decimal.self), path: path, key: key)
        } else {
            return false
        }
        return true
    }

    private func writeUUIDs(_ uuids: [UUID]) {
        out.append(UInt8(ascii: "["))
        for (index, uuid) in uuids.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.appendUUID(uuid)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// A `Decimal` as a JSON number, its `description` as `JSONEncoder` writes it.
    private func writeDecimal<Key: CodingKey>(_ value: Decimal, path: CodingPath, key: Key) throws {
        guard !value.isNaN else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: path.codingPath(appending: key), debugDescription: "Unable to encode Decimal.nan directly in JSON."))
        }
        out.appendASCII(value.description)
    }
}

// MARK: - SingleValueEncodingContainer

/// A single-value container writing into one value slot: the encoder itself (its current slot)
/// or the encoder `superEncoder()` returns (a slot of its own).
protocol FastJSONSlotEncoder: SingleValueEncodingContainer {
    var impl: FastJSONEncoderImpl { get }
    /// The slot written into.
    var slotID: FastJSONFrameID { get }
    /// The slot's coding path.
    var slotPath: CodingPath { get }
}

extension FastJSONEncoderImpl: FastJSONSlotEncoder {
    var impl: FastJSONEncoderImpl { self }
    var slotID: FastJSONFrameID { current }
    var slotPath: CodingPath { path }
}

extension FastJSONSlotEncoder {
    /// Readies the slot for a single value.
    @inline(__always)
    private func single(_ value: @autoclosure () -> Any) throws {
        guard impl.beginSingle(slotID) else { throw impl.outOfOrder(value(), at: slotPath.codingPath) }
    }

    func encodeNil() throws { try single(Optional<Any>.none as Any); impl.out.append("null") }
    func encode(_ value: Bool) throws { try single(value); impl.out.appendBool(value) }
    func encode(_ value: String) throws { try single(value); impl.out.appendString(value) }
    func encode(_ value: Double) throws { try single(value); impl.writeFloatingPoint(value) }
    func encode(_ value: Float) throws { try single(value); impl.writeFloatingPoint(value) }
    func encode(_ value: Int) throws { try encodeInteger(value) }
    func encode(_ value: Int8) throws { try encodeInteger(value) }
    func encode(_ value: Int16) throws { try encodeInteger(value) }
    func encode(_ value: Int32) throws { try encodeInteger(value) }
    func encode(_ value: Int64) throws { try encodeInteger(value) }
    func encode(_ value: Int128) throws { try encodeInteger(value) }
    func encode(_ value: UInt) throws { try encodeInteger(value) }
    func encode(_ value: UInt8) throws { try encodeInteger(value) }
    func encode(_ value: UInt16) throws { try encodeInteger(value) }
    func encode(_ value: UInt32) throws { try encodeInteger(value) }
    func encode(_ value: UInt64) throws { try encodeInteger(value) }
    func encode(_ value: UInt128) throws { try encodeInteger(value) }

    @inline(__always)
    private func encodeInteger<T: FixedWidthInteger>(_ value: T) throws {
        try single(value)
        impl.out.appendInteger(value)
    }

    func encode<T: Encodable>(_ value: T) throws {
        try impl.encodeSingle(value, at: slotID, path: slotPath)
    }
}
