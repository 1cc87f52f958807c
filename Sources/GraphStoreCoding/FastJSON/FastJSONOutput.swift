import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes one encoding writes to: a `malloc`ed block, its filled length and its size.
///
/// A plain view, not an owner: ``FastJSONBuffer`` owns the block and lends it to an encoding
/// for its duration, taking back the (possibly moved) block when it ends. Writers first
/// ``reserve(_:)`` room, then store through the returned pointer and ``advance(by:)``.
struct FastJSONOutput {
    // MARK: - State

    private(set) var base: UnsafeMutablePointer<UInt8>?
    var count: Int
    private(set) var capacity: Int

    init(base: UnsafeMutablePointer<UInt8>?, count: Int, capacity: Int) {
        self.base = base
        self.count = count
        self.capacity = capacity
    }

    // MARK: - Room

    /// The address of the first unfilled byte, with at least `byteCount` bytes of room after it.
    ///
    /// - Complexity: O(1) amortised; growing doubles the block (`realloc` may copy it).
    @inline(__always)
    mutating func reserve(_ byteCount: Int) -> UnsafeMutablePointer<UInt8> {
        if _slowPath(capacity &- count < byteCount) { grow(byteCount) }
        return base.unsafelyUnwrapped + count
    }

    /// Marks `byteCount` reserved bytes as filled.
    @inline(__always)
    mutating func advance(by byteCount: Int) {
        count &+= byteCount
    }

    @inline(never)
    private mutating func grow(_ byteCount: Int) {
        let needed = count + byteCount
        let newCapacity = Swift.max(needed, capacity * 2, 256)
        guard let grown = realloc(base, newCapacity) else {
            // As `Array` does when it cannot grow.
            fatalError("GraphStore: out of memory growing a JSON buffer to \(newCapacity) bytes")
        }
        base = grown.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }

    // MARK: - Bytes

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1).pointee = byte
        count &+= 1
    }

    @inline(__always)
    mutating func append(_ first: UInt8, _ second: UInt8) {
        let at = reserve(2)
        at[0] = first
        at[1] = second
        count &+= 2
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        let at = reserve(bytes.count)
        UnsafeMutableRawPointer(at).copyMemory(from: source, byteCount: bytes.count)
        count &+= bytes.count
    }

    /// ASCII text known at compile time (`null`, `true`, `"Infinity"`…).
    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    mutating func appendBool(_ value: Bool) {
        value ? append("true") : append("false")
    }

    // MARK: - Integers

    /// Two ASCII digits for every number below 100, `00` to `99`.
    private static var digitPairs: StaticString { "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899" }

    /// An integer in decimal, as `description` writes it.
    @inline(__always)
    mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        if T.bitWidth <= 64 {
            if T.isSigned {
                let wide = Int64(truncatingIfNeeded: value)
                appendDecimal(wide.magnitude, negative: wide < 0)
            } else {
                appendDecimal(UInt64(truncatingIfNeeded: value), negative: false)
            }
        } else {
            appendASCII(value.description)
        }
    }

    /// `-` (when `negative`) and the digits of `magnitude`.
    mutating func appendDecimal(_ magnitude: UInt64, negative: Bool) {
        var digits = 1
        var bound: UInt64 = 10
        while digits < 20 && magnitude >= bound {
            digits += 1
            bound = bound &* 10
        }
        let length = digits + (negative ? 1 : 0)
        let at = reserve(length)
        if negative { at[0] = UInt8(ascii: "-") }
        var rest = magnitude
        var end = at + length
        let pairs = Self.digitPairs.utf8Start
        do {
            while rest >= 100 {
                let pair = Int(rest % 100) &* 2
                rest /= 100
                end -= 2
                end[0] = pairs[pair]
                end[1] = pairs[pair + 1]
            }
            if rest >= 10 {
                let pair = Int(rest) &* 2
                end -= 2
                end[0] = pairs[pair]
                end[1] = pairs[pair + 1]
            } else {
                end -= 1
                end[0] = UInt8(truncatingIfNeeded: rest) &+ 0x30
            }
        }
        count &+= length
    }

    /// Text known to be ASCII (number descriptions), unescaped.
    mutating func appendASCII(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    // MARK: - Floating point

    /// A finite double, in the shortest form that reads back to the same bits, as
    /// `JSONEncoder` writes it (`description` without a trailing `.0`: `3`, `-0`, `0.1`,
    /// `1e-07`, `1.7976931348623157e+308`).
    ///
    /// - Precondition: `value.isFinite`.
    @inline(__always)
    mutating func appendFinite<F: BinaryFloatingPoint & TextOutputStreamable>(_ value: F) {
        // The longest description of a double is 24 bytes (`-2.2250738585072014e-308`).
        var sink = FastJSONFloatSink(destination: reserve(FastJSONFloatSink.room))
        value.write(to: &sink)
        var length = sink.length
        if length >= 2 && sink.destination[length - 2] == UInt8(ascii: ".") && sink.destination[length - 1] == UInt8(ascii: "0") {
            length -= 2
        }
        count &+= length
    }
}

/// Receives a float's shortest description straight from the standard library's formatter,
/// which hands it over as ASCII bytes (no `String` is made), into reserved room.
struct FastJSONFloatSink: TextOutputStream {
    /// Room enough for any `Double`, `Float` or `Float16` description.
    static let room = 48

    let destination: UnsafeMutablePointer<UInt8>
    private(set) var length = 0

    init(destination: UnsafeMutablePointer<UInt8>) {
        self.destination = destination
    }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        store(buffer)
    }

    mutating func write(_ string: String) {
        var string = string
        string.withUTF8 { store($0) }
    }

    private mutating func store(_ bytes: UnsafeBufferPointer<UInt8>) {
        let taken = Swift.min(bytes.count, Self.room - length)
        guard taken > 0, let source = bytes.baseAddress else { return }
        (destination + length).update(from: source, count: taken)
        length += taken
    }
}
