/// An unkeyed container writing the elements of one JSON array.
package struct FastJSONUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let impl: FastJSONEncoderImpl
    /// The array's frame.
    let frame: FastJSONFrameID
    /// The array's coding path.
    let path: CodingPath

    package var codingPath: [any CodingKey] { path.codingPath }

    /// The elements written so far, by this container or another one of the same value.
    package var count: Int { impl.frames.isOpen(frame) ? impl.frames[frame.level].count : 0 }

    // MARK: - Scalars

    @inline(__always)
    private func begin(_ value: @autoclosure () -> Any) throws {
        _ = try impl.beginElement(frame, path: path, value: value())
    }

    package mutating func encodeNil() throws { try begin(Optional<Any>.none as Any); impl.out.append("null") }
    package mutating func encode(_ value: Bool) throws { try begin(value); impl.out.appendBool(value) }
    package mutating func encode(_ value: String) throws { try begin(value); impl.out.appendString(value) }
    package mutating func encode(_ value: Double) throws { try begin(value); impl.writeFloatingPoint(value) }
    package mutating func encode(_ value: Float) throws { try begin(value); impl.writeFloatingPoint(value) }
    package mutating func encode(_ value: Int) throws { try encodeInteger(value) }
    package mutating func encode(_ value: Int8) throws { try encodeInteger(value) }
    package mutating func encode(_ value: Int16) throws { try encodeInteger(value) }
    package mutating func encode(_ value: Int32) throws { try encodeInteger(value) }
    package mutating func encode(_ value: Int64) throws { try encodeInteger(value) }
    package mutating func encode(_ value: Int128) throws { try encodeInteger(value) }
    package mutating func encode(_ value: UInt) throws { try encodeInteger(value) }
    package mutating func encode(_ value: UInt8) throws { try encodeInteger(value) }
    package mutating func encode(_ value: UInt16) throws { try encodeInteger(value) }
    package mutating func encode(_ value: UInt32) throws { try encodeInteger(value) }
    package mutating func encode(_ value: UInt64) throws { try encodeInteger(value) }
    package mutating func encode(_ value: UInt128) throws { try encodeInteger(value) }

    @inline(__always)
    private func encodeInteger<T: FixedWidthInteger>(_ value: T) throws {
        try begin(value)
        impl.out.appendInteger(value)
    }

    // MARK: - Any value

    package mutating func encode<T: Encodable>(_ value: T) throws {
        let (mark, index) = try impl.beginElement(frame, path: path, value: value)
        do {
            if try impl.writeSpecial(value, path: path, key: IndexCodingKey(index)) { return }
            try impl.encodeNested(value, path: path.appending(.index(index)))
        } catch {
            impl.rollBack(to: mark, in: frame)
            throw error
        }
    }

    // MARK: - Nesting

    package mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let (frame, nestedPath) = nest(.object)
        return KeyedEncodingContainer(FastJSONKeyedEncodingContainer<NestedKey>(impl: impl, frame: frame, path: nestedPath))
    }

    package mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let (frame, nestedPath) = nest(.array)
        return FastJSONUnkeyedEncodingContainer(impl: impl, frame: frame, path: nestedPath)
    }

    package mutating func superEncoder() -> any Encoder {
        guard let (_, index) = try? impl.beginElement(frame, path: path, value: ()) else {
            let nestedPath = path.appending(.index(count))
            if impl.deferredError == nil { impl.deferredError = impl.outOfOrder((), at: nestedPath.codingPath) }
            return FastJSONReferencingEncoder(impl: impl, frame: .closed, path: nestedPath)
        }
        return FastJSONReferencingEncoder(impl: impl, frame: impl.frames.push(.pending), path: path.appending(.index(index)))
    }

    /// Opens an object or array as the next element; `.closed` if this container is.
    private func nest(_ kind: FastJSONFrame.Kind) -> (FastJSONFrameID, CodingPath) {
        guard let (_, index) = try? impl.beginElement(frame, path: path, value: ()) else {
            let nestedPath = path.appending(.index(count))
            if impl.deferredError == nil { impl.deferredError = impl.outOfOrder((), at: nestedPath.codingPath) }
            return (.closed, nestedPath)
        }
        let nestedPath = path.appending(.index(index))
        guard impl.admitsContainer(at: nestedPath) else { return (.closed, nestedPath) }
        impl.out.append(kind == .object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        return (impl.frames.push(kind), nestedPath)
    }
}
