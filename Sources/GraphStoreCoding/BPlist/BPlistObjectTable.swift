import Foundation

/// The objects of a binary property list (format `bplist00`) being written, numbered in the
/// order they are added, and laid out as a file by ``serialized(top:)``.
///
/// Containers are added after their elements, so every reference is known when its container
/// is added; the reference size is chosen at the end, from the number of objects.
///
/// Lossless where Foundation's `PropertyListEncoder` is not: equal objects are shared only when
/// they are the same to the bit (doubles by bit pattern, so `0.0` and `-0.0` stay two; strings
/// by their UTF-8 bytes, so canonically equivalent strings stay two), and a string whose text
/// is `$null` is written as UTF-16, so that it does not read back as `nil` (the ASCII `$null`
/// that ``null`` writes, as `PropertyListEncoder` does).
///
/// Not thread-safe: one table per thread; ``append(_:)`` joins tables made on several threads.
package final class BPlistObjectTable {
    /// A key's text, its bits, and its string object.
    private struct KnownKey {
        let bits: (UInt64, UInt64)
        /// Kept so that the storage the bits name lives as long as the entry.
        let text: String
        let reference: UInt32
    }

    /// One object: scalar bytes `start..<start + count` of ``bytes``, or a container whose
    /// references are `start..<start + count` of ``references`` (a dictionary's keys, then its
    /// values: `2 * members` references).
    private struct Entry {
        /// `0` for a scalar; `0xA0` for an array, `0xD0` for a dictionary.
        var marker: UInt8
        var start: Int
        var count: Int
    }

    @exclusivity(unchecked) private var bytes: [UInt8] = []
    @exclusivity(unchecked) private var references: [UInt32] = []
    @exclusivity(unchecked) private var entries: [Entry] = []
    /// The shared strings, by open addressing: 1 + the reference of a string object, or 0 for an
    /// empty slot; `stringHashes` holds the hash of each occupant's bytes.
    @exclusivity(unchecked) private var stringSlots: [UInt32]
    @exclusivity(unchecked) private var stringHashes: [UInt32]
    @exclusivity(unchecked) private var sharedStrings = 0
    /// Per table, so that which texts collide cannot be chosen ahead.
    private let stringSeed = UInt64.random(in: .min ... .max)
    /// The string objects of the keys seen last, by the identity of the key's text (see
    /// ``key(_:)``), 64 of them direct-mapped.
    @exclusivity(unchecked) private var keys = [KnownKey?](repeating: nil, count: 64)
    @exclusivity(unchecked) private var integers: [Int64: UInt32] = [:]
    @exclusivity(unchecked) private var reals: [UInt64: UInt32] = [:]
    @exclusivity(unchecked) private var nullReference: UInt32?
    @exclusivity(unchecked) private var trueReference: UInt32?
    @exclusivity(unchecked) private var falseReference: UInt32?

    package init(expectedObjects: Int = 0) {
        // A power of two at least twice the strings expected (at most 4,096 of them up front).
        let slots = 1 << max(6, Int.bitWidth - (min(expectedObjects, 4_096) * 2).leadingZeroBitCount)
        stringSlots = [UInt32](repeating: 0, count: slots)
        stringHashes = [UInt32](repeating: 0, count: slots)
        entries.reserveCapacity(expectedObjects)
        references.reserveCapacity(expectedObjects)
        bytes.reserveCapacity(expectedObjects * 12)
    }

    /// Strings up to this many UTF-8 bytes are shared (keys, names, tags); longer ones are
    /// written each time they occur.
    static let longestSharedString = 64

    /// The number of objects added.
    package var count: Int { entries.count }

    // MARK: - Scalars

    /// `nil`, as `PropertyListEncoder` writes it: the ASCII string `$null`.
    package var null: UInt32 {
        if let nullReference { return nullReference }
        let reference = startScalar()
        bytes.append(0x55)
        bytes.append(contentsOf: "$null".utf8)
        endScalar(reference)
        nullReference = reference
        return reference
    }

    package func bool(_ value: Bool) -> UInt32 {
        if let known = value ? trueReference : falseReference { return known }
        let reference = startScalar()
        bytes.append(value ? 0x09 : 0x08)
        endScalar(reference)
        if value { trueReference = reference } else { falseReference = reference }
        return reference
    }

    package func integer(_ value: Int64) -> UInt32 {
        if let known = integers[value] { return known }
        let reference = startScalar()
        appendInteger(value)
        endScalar(reference)
        integers[value] = reference
        return reference
    }

    /// An unsigned integer; above `Int64.max`, a 16-byte integer, as CoreFoundation writes it.
    package func unsigned(_ value: UInt64) -> UInt32 {
        if value <= UInt64(Int64.max) { return integer(Int64(value)) }
        return sixteenByteInteger(UInt128(value))
    }

    /// A 128-bit integer: within 64 bits as ``integer(_:)`` writes it, beyond as a 16-byte
    /// integer object holding its two's complement, which CoreFoundation's reader and Python's
    /// `plistlib` take as a signed number (Python reads the value exactly; CoreFoundation keeps
    /// only its low 64 bits, as it does for any 16-byte integer).
    package func integer128(_ value: Int128) -> UInt32 {
        if let small = Int64(exactly: value) { return integer(small) }
        return sixteenByteInteger(UInt128(truncatingIfNeeded: value))
    }

    /// An unsigned 128-bit integer: within 64 bits as ``unsigned(_:)`` writes it, beyond as a
    /// 16-byte integer object. Up to `Int128.max` that is the value's two's complement, read
    /// exactly by every reader that reads 16-byte integers as signed (Python's `plistlib`); above,
    /// the 16 bytes are the value's bits, which only a reader that asks for a `UInt128`
    /// (``BPlistDecoder``) takes as this value: a signed reader sees `value - 2^128`.
    package func unsigned128(_ value: UInt128) -> UInt32 {
        if let small = UInt64(exactly: value) { return unsigned(small) }
        return sixteenByteInteger(value)
    }

    package func double(_ value: Double) -> UInt32 {
        let bits = value.bitPattern
        if let known = reals[bits] { return known }
        let reference = startScalar()
        bytes.append(0x23)
        appendBigEndian(bits, size: 8)
        endScalar(reference)
        reals[bits] = reference
        return reference
    }

    /// A 4-byte real, so the value (sign of zero and NaN payload included) reads back exactly.
    package func float(_ value: Float) -> UInt32 {
        let reference = startScalar()
        bytes.append(0x22)
        appendBigEndian(UInt64(value.bitPattern), size: 4)
        endScalar(reference)
        return reference
    }

    package func date(_ value: Date) -> UInt32 {
        let reference = startScalar()
        bytes.append(0x33)
        appendBigEndian(value.timeIntervalSinceReferenceDate.bitPattern, size: 8)
        endScalar(reference)
        return reference
    }

    package func data(_ value: Data) -> UInt32 {
        let reference = startScalar()
        appendHeader(0x40, count: value.count)
        bytes.append(contentsOf: value)
        endScalar(reference)
        return reference
    }

    /// A string: ASCII as one byte a character, anything else (and the text `$null`) as
    /// UTF-16, big-endian. Strings with the same UTF-8 bytes are one object.
    package func string(_ value: String) -> UInt32 {
        value.withUTF8Bytes { utf8 in
            let reference = startScalar()
            if Self.isASCII(utf8) && !Self.isDollarNull(utf8) {
                appendHeader(0x50, count: utf8.count)
                bytes.append(contentsOf: utf8)
            } else {
                appendHeader(0x60, count: value.utf16.count)
                for unit in value.utf16 {
                    bytes.append(UInt8(truncatingIfNeeded: unit >> 8))
                    bytes.append(UInt8(truncatingIfNeeded: unit))
                }
            }
            endScalar(reference)
            // Long texts rarely repeat: sharing them costs a hash of every byte for little.
            return utf8.count <= Self.longestSharedString ? shared(reference) : reference
        }
    }

    /// A dictionary key: the same object as ``string(_:)`` gives, found without reading the
    /// text when the same `String` (not merely an equal one) was given before, as a type's
    /// coding keys give the same literal for every value.
    ///
    /// Two `String`s with the same bits hold the same bytes: a small string's bits are its
    /// text, and a large one's name its storage, which the cache keeps alive (and which is
    /// never changed in place while shared).
    package func key(_ text: String) -> UInt32 {
        // A `String` is two words only where pointers are 64 bits; a long key is not shared
        // (``longestSharedString``), so neither is it cached.
        guard MemoryLayout<String>.size == 16, text.utf8.count <= Self.longestSharedString else { return string(text) }
        let bits = unsafeBitCast(text, to: (UInt64, UInt64).self)
        let slot = Int(truncatingIfNeeded: ((bits.0 ^ bits.1 >> 7) &* 0x9E37_79B9_7F4A_7C15) >> 58)
        if let known = keys[slot], known.bits == bits { return known.reference }
        let reference = string(text)
        keys[slot] = KnownKey(bits: bits, text: text, reference: reference)
        return reference
    }

    /// A UUID as its `uuidString` (as `UUID.encode(to:)` writes it), the same object as that
    /// string everywhere in the table.
    package func uuid(_ value: UUID) -> UInt32 {
        let reference = startScalar()
        appendHeader(0x50, count: 36)
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: 36))
        bytes.withUnsafeMutableBufferPointer { UUIDParsing.writeCanonical(value, at: $0.baseAddress! + start) }
        endScalar(reference)
        return shared(reference)
    }

    // MARK: - Containers

    /// An array of the objects `elements`. (An array, not any collection: a lazy one could call
    /// back into the table while its references are being appended.)
    package func array(_ elements: [UInt32]) -> UInt32 {
        let reference = UInt32(entries.count)
        entries.append(Entry(marker: 0xA0, start: references.count, count: elements.count))
        references.append(contentsOf: elements)
        return reference
    }

    /// A dictionary of `keys[i]` to `values[i]`.
    package func dictionary(keys: [UInt32], values: [UInt32]) -> UInt32 {
        precondition(keys.count == values.count, "GraphStore: a dictionary needs a value per key")
        let reference = UInt32(entries.count)
        entries.append(Entry(marker: 0xD0, start: references.count, count: keys.count))
        references.append(contentsOf: keys)
        references.append(contentsOf: values)
        return reference
    }

    /// Adds the objects of `other` after this table's, and returns the number `other`'s
    /// first object has here (add it to any reference into `other`).
    ///
    /// - Complexity: O(size of `other`).
    package func append(_ other: BPlistObjectTable) -> UInt32 {
        let base = UInt32(entries.count), byteBase = bytes.count, referenceBase = references.count
        precondition(entries.count + other.entries.count < Int(UInt32.max), "GraphStore: too many property-list objects")
        bytes.append(contentsOf: other.bytes)
        // Filled in place: a plain loop over both buffers, which the compiler vectorises.
        references.append(contentsOf: other.references)
        references.withUnsafeMutableBufferPointer { all in
            for index in referenceBase..<all.count { all[index] &+= base }
        }
        entries.append(contentsOf: other.entries)
        entries.withUnsafeMutableBufferPointer { all in
            for index in Int(base)..<all.count { all[index].start += all[index].marker == 0 ? byteBase : referenceBase }
        }
        return base
    }

    // MARK: - Layout

    /// The file: header, objects, offset table and trailer naming `top` as the root.
    ///
    /// - Complexity: O(objects + bytes).
    package func serialized(top: UInt32) -> Data {
        let objectCount = entries.count
        precondition(Int(top) < objectCount, "GraphStore: the top object is not in the table")
        let referenceSize = Self.byteSize(for: UInt64(objectCount))
        var offsets = [Int](repeating: 0, count: objectCount)
        var position = 8
        for (index, entry) in entries.enumerated() {
            offsets[index] = position
            if entry.marker == 0 {
                position += entry.count
            } else {
                let units = entry.marker == 0xD0 ? 2 * entry.count : entry.count
                position += Self.headerSize(count: entry.count) + units * referenceSize
            }
        }
        let tableOffset = position
        let offsetSize = Self.byteSize(for: UInt64(tableOffset))
        let total = tableOffset + objectCount * offsetSize + 32
        var data = Data(count: total)
        data.withUnsafeMutableBytes { raw in
            let out = raw.bindMemory(to: UInt8.self).baseAddress!
            // Big-endian, in one store of the size's width (every size is 1, 2, 4 or 8).
            @inline(__always) func put(_ value: UInt64, size: Int, at offset: Int) {
                let target = UnsafeMutableRawPointer(out + offset)
                switch size {
                case 1: target.storeBytes(of: UInt8(truncatingIfNeeded: value), as: UInt8.self)
                case 2: target.storeBytes(of: UInt16(truncatingIfNeeded: value).bigEndian, as: UInt16.self)
                case 4: target.storeBytes(of: UInt32(truncatingIfNeeded: value).bigEndian, as: UInt32.self)
                case 8: target.storeBytes(of: value.bigEndian, as: UInt64.self)
                default: preconditionFailure("GraphStore: a property-list field is 1, 2, 4 or 8 bytes")
                }
            }
            for (index, byte) in "bplist00".utf8.enumerated() { out[index] = byte }
            bytes.withUnsafeBufferPointer { scalars in
                references.withUnsafeBufferPointer { refs in
                    for (index, entry) in entries.enumerated() {
                        var at = offsets[index]
                        if entry.marker == 0 {
                            (out + at).update(from: scalars.baseAddress! + entry.start, count: entry.count)
                            continue
                        }
                        if entry.count < 15 {
                            out[at] = entry.marker | UInt8(entry.count)
                            at += 1
                        } else {
                            out[at] = entry.marker | 0x0F
                            let size = Self.byteSize(for: UInt64(entry.count))
                            out[at + 1] = 0x10 | UInt8(size.trailingZeroBitCount)
                            put(UInt64(entry.count), size: size, at: at + 2)
                            at += 2 + size
                        }
                        let units = entry.marker == 0xD0 ? 2 * entry.count : entry.count
                        for unit in 0..<units {
                            put(UInt64(refs[entry.start + unit]), size: referenceSize, at: at)
                            at += referenceSize
                        }
                    }
                }
            }
            for index in 0..<objectCount { put(UInt64(offsets[index]), size: offsetSize, at: tableOffset + index * offsetSize) }
            let trailer = tableOffset + objectCount * offsetSize
            out[trailer + 6] = UInt8(offsetSize)
            out[trailer + 7] = UInt8(referenceSize)
            put(UInt64(objectCount), size: 8, at: trailer + 8)
            put(UInt64(top), size: 8, at: trailer + 16)
            put(UInt64(tableOffset), size: 8, at: trailer + 24)
        }
        return data
    }

    // MARK: - Private

    @inline(__always) private func startScalar() -> UInt32 {
        precondition(entries.count < Int(UInt32.max), "GraphStore: too many property-list objects")
        let reference = UInt32(entries.count)
        entries.append(Entry(marker: 0, start: bytes.count, count: 0))
        return reference
    }

    @inline(__always) private func endScalar(_ reference: UInt32) {
        entries[Int(reference)].count = bytes.count - entries[Int(reference)].start
    }

    /// The string object just added as `reference`, or the one added before with the same
    /// bytes (a string's bytes as written here determine its UTF-8 bytes, and the reverse), in
    /// which case the new one is taken back off the end of the table.
    private func shared(_ reference: UInt32) -> UInt32 {
        let entry = entries[Int(reference)]
        let known: UInt32? = bytes.withUnsafeBufferPointer { all in
            let base = all.baseAddress! + entry.start
            let hash = Self.hash(base, count: entry.count, seed: stringSeed)
            let mask = stringSlots.count - 1
            var slot = Int(hash) & mask
            while true {
                let occupant = stringSlots[slot]
                if occupant == 0 {
                    stringSlots[slot] = reference + 1
                    stringHashes[slot] = hash
                    return nil
                }
                if stringHashes[slot] == hash {
                    let other = entries[Int(occupant - 1)]
                    if other.count == entry.count && memcmp(all.baseAddress! + other.start, base, entry.count) == 0 { return occupant - 1 }
                }
                slot = (slot + 1) & mask
            }
        }
        if let known {
            bytes.removeLast(entry.count)
            entries.removeLast()
            return known
        }
        sharedStrings += 1
        if sharedStrings * 2 > stringSlots.count { growStringSlots() }
        return reference
    }

    /// Twice the slots, every shared string placed again by its kept hash.
    private func growStringSlots() {
        let oldSlots = stringSlots, oldHashes = stringHashes
        stringSlots = [UInt32](repeating: 0, count: oldSlots.count * 2)
        stringHashes = [UInt32](repeating: 0, count: oldSlots.count * 2)
        let mask = stringSlots.count - 1
        for (occupant, hash) in zip(oldSlots, oldHashes) where occupant != 0 {
            var slot = Int(hash) & mask
            while stringSlots[slot] != 0 { slot = (slot + 1) & mask }
            stringSlots[slot] = occupant
            stringHashes[slot] = hash
        }
    }

    /// A seeded hash of `count` bytes, eight at a time, each word folded in by a full-width
    /// multiply.
    @inline(__always)
    private static func hash(_ base: UnsafePointer<UInt8>, count: Int, seed: UInt64) -> UInt32 {
        @inline(__always) func mix(_ value: UInt64) -> UInt64 {
            let product = value.multipliedFullWidth(by: 0xBF58_476D_1CE4_E5B9)
            return product.high ^ product.low
        }
        let raw = UnsafeRawPointer(base)
        var hash = mix(seed ^ UInt64(count))
        var index = 0
        while index + 8 <= count {
            hash = mix(hash ^ raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            index += 8
        }
        if index < count {
            var tail: UInt64 = 0
            for offset in 0..<(count - index) { tail |= UInt64(base[index + offset]) << (8 * UInt64(offset)) }
            hash = mix(hash ^ tail ^ 0xFF)
        }
        return UInt32(truncatingIfNeeded: hash ^ hash >> 32)
    }

    /// Whether the bytes are the ASCII text `$null`, which ``null`` writes for `nil`.
    private static func isDollarNull(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count == 5 && bytes.elementsEqual("$null".utf8)
    }

    /// Whether every byte is below 0x80, checked eight bytes at a time.
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var index = 0, high: UInt64 = 0
        while index + 8 <= count {
            high |= UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            index += 8
        }
        while index < count {
            high |= UInt64(base[index])
            index += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// 1, 2, 4 or 8: the fewest bytes (of the sizes every reader takes) that hold `value`.
    static func byteSize(for value: UInt64) -> Int {
        value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
    }

    /// The marker byte and, from 15 on, the integer object that follow it.
    private static func headerSize(count: Int) -> Int {
        count < 15 ? 1 : 2 + byteSize(for: UInt64(count))
    }

    /// A marker with `count` in its low nibble, or followed by `count` as an integer object.
    private func appendHeader(_ marker: UInt8, count: Int) {
        if count < 15 {
            bytes.append(marker | UInt8(count))
        } else {
            bytes.append(marker | 0x0F)
            appendInteger(Int64(count))
        }
    }

    /// An integer object: non-negative values in 1, 2, 4 or 8 bytes, negative ones in 8 (as
    /// every writer does; readers take the smaller sizes as unsigned).
    private func appendInteger(_ value: Int64) {
        let size = value < 0 ? 8 : Self.byteSize(for: UInt64(value))
        bytes.append(0x10 | UInt8(size.trailingZeroBitCount))
        appendBigEndian(UInt64(bitPattern: value), size: size)
    }

    /// A 16-byte integer object holding `bits`, big-endian.
    private func sixteenByteInteger(_ bits: UInt128) -> UInt32 {
        let reference = startScalar()
        bytes.append(0x14)
        appendBigEndian(UInt64(truncatingIfNeeded: bits >> 64), size: 8)
        appendBigEndian(UInt64(truncatingIfNeeded: bits), size: 8)
        endScalar(reference)
        return reference
    }

    @inline(__always) private func appendBigEndian(_ value: UInt64, size: Int) {
        for index in stride(from: size - 1, through: 0, by: -1) {
            bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))))
        }
    }
}
