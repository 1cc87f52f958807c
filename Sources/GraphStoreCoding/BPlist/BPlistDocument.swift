import Foundation

/// Why bytes are not a readable binary property list, and where: the byte offset in the
/// (uncompressed) document.
package typealias BPlistSyntaxError = DocumentSyntaxError<BPlistSyntax>

/// The binary property list, as ``BPlistSyntaxError`` names it.
package enum BPlistSyntax: DocumentSyntax {
    package static var documentName: String { "binary property list" }
}

/// The kinds of object a binary property list (format `bplist00`) holds.
package enum BPlistKind: Equatable {
    case null, `false`, `true`, integer, real, date, data, asciiString, utf16String, uid, array, set, dictionary

    /// As the decoding errors name them.
    package var debugDescription: String {
        switch self {
        case .null: "null"
        case .false, .true: "a boolean"
        case .integer, .real: "a number"
        case .date: "a date"
        case .data: "data"
        case .asciiString, .utf16String: "a string"
        case .uid: "a UID"
        case .array, .set: "an array"
        case .dictionary: "a dictionary"
        }
    }
}

/// One object of the table: its kind, where its payload starts, and its size (bytes for
/// numbers, dates and data; characters or UTF-16 units for strings; elements for containers,
/// members for a dictionary).
package struct BPlistObject {
    package let kind: BPlistKind
    package let payload: Int
    package let count: Int
}

/// A binary property list's object table, read in place: the trailer and offset table are
/// checked when it is made, each object when it is first looked at, so a damaged file is an
/// error naming a byte, never a crash or a read outside the bytes.
///
/// Immutable once made; the bytes are its own copy, so decoders on several threads may read
/// it at once.
package final class BPlistDocument: Sendable {
    // Owned, never written after `init`; freed in `deinit`.
    nonisolated(unsafe) private let bytes: UnsafeMutablePointer<UInt8>
    let byteCount: Int
    private let offsetSize: Int
    let referenceSize: Int
    package let objectCount: Int
    package let topObject: Int
    /// Where the offset table starts: every object lies before it.
    private let tableOffset: Int

    /// Reads the header and trailer of `data` and checks the offset table's bounds.
    ///
    /// - Throws: ``BPlistSyntaxError``.
    /// - Complexity: O(size of `data`) for the copy.
    package init(_ data: Data) throws {
        let count = data.count
        guard count >= 8 + 1 + 32, data.starts(with: Array("bplist00".utf8)) else {
            throw BPlistSyntaxError(offset: 0, reason: count < 41 ? "the file is too short (\(count) bytes) to hold a header and trailer" : "no bplist00 header")
        }
        let trailerBytes = Array(data.suffix(32))
        let trailer = count - 32
        func readTrailer(_ offset: Int, size: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in 0..<size { value = value << 8 | UInt64(trailerBytes[offset + index]) }
            return value
        }
        let offsetSize = Int(trailerBytes[6]), referenceSize = Int(trailerBytes[7])
        let objects = readTrailer(8, size: 8), top = readTrailer(16, size: 8), table = readTrailer(24, size: 8)
        guard (1...8).contains(offsetSize) else {
            throw BPlistSyntaxError(offset: trailer + 6, reason: "offset size \(offsetSize) is not 1 to 8")
        }
        guard (1...8).contains(referenceSize) else {
            throw BPlistSyntaxError(offset: trailer + 7, reason: "object reference size \(referenceSize) is not 1 to 8")
        }
        guard objects >= 1, objects < UInt64(count) else {
            throw BPlistSyntaxError(offset: trailer + 8, reason: "object count \(objects) does not fit a \(count)-byte file")
        }
        guard top < objects else {
            throw BPlistSyntaxError(offset: trailer + 16, reason: "top object \(top) is not among the \(objects) objects")
        }
        let (tableBytes, overflow) = Int(objects).multipliedReportingOverflow(by: offsetSize)
        guard table >= 9, table < UInt64(trailer), !overflow, Int(table) + tableBytes <= trailer else {
            throw BPlistSyntaxError(offset: trailer + 24, reason: "the offset table (at \(table), \(objects) entries of \(offsetSize) bytes) does not lie between the header and the trailer")
        }
        self.offsetSize = offsetSize
        self.referenceSize = referenceSize
        objectCount = Int(objects)
        topObject = Int(top)
        tableOffset = Int(table)
        byteCount = count
        bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
        _ = UnsafeMutableBufferPointer(start: bytes, count: count).initialize(from: data)
    }

    deinit {
        bytes.deallocate()
    }

    // MARK: - Reading

    /// A big-endian unsigned integer of `size` (≤ 8) bytes at `offset`, in bounds.
    @inline(__always) private func unsigned(at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<size { value = value << 8 | UInt64(bytes[offset + index]) }
        return value
    }

    /// The object `reference` names.
    ///
    /// - Throws: ``BPlistSyntaxError`` for a reference out of the table, an offset outside the
    ///   objects, an unknown marker, or a payload that runs past the objects.
    package func object(_ reference: Int) throws -> BPlistObject {
        guard reference >= 0, reference < objectCount else {
            throw BPlistSyntaxError(offset: tableOffset, reason: "object reference \(reference) is not among the \(objectCount) objects")
        }
        let entry = tableOffset + reference * offsetSize
        let rawOffset = unsigned(at: entry, size: offsetSize)
        guard rawOffset >= 8, rawOffset < UInt64(tableOffset) else {
            throw BPlistSyntaxError(offset: entry, reason: "object \(reference) has offset \(rawOffset), outside the objects")
        }
        let offset = Int(rawOffset)
        let marker = bytes[offset]
        let info = Int(marker & 0x0F)
        let kind: BPlistKind
        var length: Int
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x00: return BPlistObject(kind: .null, payload: offset + 1, count: 0)
            case 0x08: return BPlistObject(kind: .false, payload: offset + 1, count: 0)
            case 0x09: return BPlistObject(kind: .true, payload: offset + 1, count: 0)
            default: throw BPlistSyntaxError(offset: offset, reason: "unknown object marker 0x\(String(marker, radix: 16))")
            }
        case 0x1:
            guard info <= 4 else { throw BPlistSyntaxError(offset: offset, reason: "an integer of 2^\(info) bytes") }
            return try checked(BPlistObject(kind: .integer, payload: offset + 1, count: 1 << info), bytes: 1 << info, at: offset)
        case 0x2:
            guard info == 2 || info == 3 else { throw BPlistSyntaxError(offset: offset, reason: "a real of 2^\(info) bytes") }
            return try checked(BPlistObject(kind: .real, payload: offset + 1, count: 1 << info), bytes: 1 << info, at: offset)
        case 0x3:
            guard marker == 0x33 else { throw BPlistSyntaxError(offset: offset, reason: "unknown object marker 0x\(String(marker, radix: 16))") }
            return try checked(BPlistObject(kind: .date, payload: offset + 1, count: 8), bytes: 8, at: offset)
        case 0x4: kind = .data; length = info
        case 0x5: kind = .asciiString; length = info
        case 0x6: kind = .utf16String; length = info
        case 0x8:
            return try checked(BPlistObject(kind: .uid, payload: offset + 1, count: info + 1), bytes: info + 1, at: offset)
        case 0xA: kind = .array; length = info
        case 0xC: kind = .set; length = info
        case 0xD: kind = .dictionary; length = info
        default: throw BPlistSyntaxError(offset: offset, reason: "unknown object marker 0x\(String(marker, radix: 16))")
        }
        var payload = offset + 1
        if info == 0x0F {
            // The length follows as an integer object.
            guard payload < tableOffset else { throw BPlistSyntaxError(offset: payload, reason: "the length of the object at \(offset) is missing") }
            let lengthMarker = bytes[payload]
            let size = 1 << Int(lengthMarker & 0x0F)
            guard lengthMarker >> 4 == 0x1, size <= 8 else {
                throw BPlistSyntaxError(offset: payload, reason: "the length of the object at \(offset) is not an integer of 1 to 8 bytes")
            }
            guard payload + 1 + size <= tableOffset else {
                throw BPlistSyntaxError(offset: payload, reason: "the length of the object at \(offset) runs past the end of the objects")
            }
            let value = unsigned(at: payload + 1, size: size)
            guard value < UInt64(byteCount) else {
                throw BPlistSyntaxError(offset: payload, reason: "length \(value) of the object at \(offset) exceeds the file")
            }
            length = Int(value)
            payload += 1 + size
        }
        let unit: Int
        switch kind {
        case .utf16String: unit = 2
        case .array, .set: unit = referenceSize
        case .dictionary: unit = 2 * referenceSize
        default: unit = 1
        }
        return try checked(BPlistObject(kind: kind, payload: payload, count: length), bytes: length * unit, at: offset)
    }

    @inline(__always) private func checked(_ object: BPlistObject, bytes size: Int, at offset: Int) throws -> BPlistObject {
        guard object.payload + size <= tableOffset else {
            throw BPlistSyntaxError(offset: offset, reason: "the object at \(offset) runs past the end of the objects")
        }
        return object
    }

    /// The reference at element `index` of an array, set or dictionary's reference list
    /// starting at `payload` (a dictionary's values start `count` references in).
    @inline(__always) package func reference(at payload: Int, index: Int) -> Int {
        Int(truncatingIfNeeded: unsigned(at: payload + index * referenceSize, size: referenceSize))
    }

    /// The raw bytes of an object's payload.
    @inline(__always) package func span(_ object: BPlistObject, byteCount: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: bytes + object.payload, count: byteCount)
    }

    /// An integer object's value: `Int64`, or `UInt64` above `Int64.max` (16-byte integers).
    ///
    /// - Throws: ``BPlistSyntaxError`` for a 16-byte integer beyond 64 bits: read it with
    ///   ``integer128(_:)``.
    package func integer(_ object: BPlistObject) throws -> (signed: Int64?, unsigned: UInt64?) {
        switch object.count {
        case 1, 2, 4:
            let value = unsigned(at: object.payload, size: object.count)
            return (Int64(value), value)
        case 8:
            let value = Int64(bitPattern: unsigned(at: object.payload, size: 8))
            return (value, value >= 0 ? UInt64(value) : nil)
        default:
            let value = integer128(object)
            if let unsigned = UInt64(exactly: value) { return (Int64(exactly: unsigned), unsigned) }
            if let signed = Int64(exactly: value) { return (signed, nil) }
            throw BPlistSyntaxError(offset: object.payload - 1, reason: "a 128-bit integer beyond 64 bits")
        }
    }

    /// An integer object's value, whatever its size: 1-, 2- and 4-byte integers are unsigned,
    /// 8- and 16-byte ones two's complement, as CoreFoundation and Python's `plistlib` read them.
    package func integer128(_ object: BPlistObject) -> Int128 {
        switch object.count {
        case 1, 2, 4: return Int128(unsigned(at: object.payload, size: object.count))
        case 8: return Int128(Int64(bitPattern: unsigned(at: object.payload, size: 8)))
        default:
            let high = unsigned(at: object.payload, size: 8), low = unsigned(at: object.payload + 8, size: 8)
            return Int128(truncatingIfNeeded: UInt128(high) << 64 | UInt128(low))
        }
    }

    /// A real or date object's value.
    package func real(_ object: BPlistObject) -> Double {
        if object.count == 4 { return Double(Float(bitPattern: UInt32(unsigned(at: object.payload, size: 4)))) }
        return Double(bitPattern: unsigned(at: object.payload, size: 8))
    }

    /// A string object's text; UTF-16 that is not well formed is refused.
    package func string(_ object: BPlistObject) throws -> String {
        if object.kind == .asciiString {
            let raw = span(object, byteCount: object.count)
            if !raw.contains(where: { $0 >= 0x80 }) { return String(decoding: raw, as: UTF8.self) }
            // Bytes above ASCII: read as Latin-1, as CoreFoundation does for this marker.
            return String(String.UnicodeScalarView(raw.map { Unicode.Scalar($0) }))
        }
        var units: [UInt16] = []
        units.reserveCapacity(object.count)
        for index in 0..<object.count { units.append(UInt16(unsigned(at: object.payload + 2 * index, size: 2))) }
        var text = ""
        var iterator = units.makeIterator()
        var decoder = UTF16()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): text.unicodeScalars.append(scalar)
            case .emptyInput: break loop
            case .error: throw BPlistSyntaxError(offset: object.payload, reason: "the string at \(object.payload - 1) is not valid UTF-16")
            }
        }
        return text
    }

    /// Whether a string object holds exactly `key` (compared without making a `String` for
    /// ASCII strings).
    @inline(__always) func stringEquals(_ object: BPlistObject, _ key: String) -> Bool {
        if object.kind == .asciiString {
            let raw = span(object, byteCount: object.count)
            var key = key
            return key.withUTF8 { $0.count == raw.count && (raw.isEmpty || memcmp($0.baseAddress!, raw.baseAddress!, raw.count) == 0) }
        }
        return (try? string(object)) == key
    }

    /// Whether `object` stands for `nil`: a null object, or the ASCII string `"$null"` that
    /// `PropertyListEncoder` writes for it.
    @inline(__always) package func isNull(_ object: BPlistObject) -> Bool {
        object.kind == .null || (object.kind == .asciiString && object.count == 5 && stringEquals(object, "$null"))
    }
}
