/// Conversions of validated JSON number text (RFC 8259 grammar, checked by the parser) to
/// Swift numbers.
package enum FastJSONNumbers {
    // MARK: Integers

    /// The integer the number denotes, or `nil` when it is not an integer or does not fit in
    /// `T`. Exact: `1.0`, `1e3` and `-0` are integers; `1.5`, `1e-1` and `1.0000000000000001`
    /// are not.
    /// ``integer(_:tag:as:)`` as `Int64`, compiled in this module so that callers in other
    /// modules run the specialized code, not the generic one.
    package static func int64(_ text: UnsafeBufferPointer<UInt8>, tag: UInt8) -> Int64? {
        integer(text, tag: tag, as: Int64.self)
    }

    /// ``integer(_:tag:as:)`` as `UInt64`, specialized here (see ``int64(_:tag:)``).
    package static func uint64(_ text: UnsafeBufferPointer<UInt8>, tag: UInt8) -> UInt64? {
        integer(text, tag: tag, as: UInt64.self)
    }

    @inline(__always)
    static func integer<T: FixedWidthInteger>(_ text: UnsafeBufferPointer<UInt8>, tag: UInt8, as: T.Type) -> T? {
        if tag & FastJSONFlag.nonInteger == 0 && text.count <= 19 && T.bitWidth <= 64 {
            // At most 18 digits (and a sign): no overflow in UInt64.
            let negative = tag & FastJSONFlag.negative != 0
            var magnitude: UInt64 = 0
            for index in (negative ? 1 : 0)..<text.count {
                magnitude = magnitude &* 10 &+ UInt64(text[index] &- 0x30)
            }
            return fitting(magnitude: magnitude, negative: negative, as: T.self)
        }
        return slowInteger(text, as: T.self)
    }

    @inline(__always)
    static func fitting<T: FixedWidthInteger>(magnitude: UInt64, negative: Bool, as: T.Type) -> T? {
        if !negative { return T(exactly: magnitude) }
        if magnitude == 0 { return 0 }  // -0 is 0, also for unsigned types, as in JSONDecoder
        guard T.isSigned else { return nil }
        if magnitude <= UInt64(Int64.max) { return T(exactly: -Int64(magnitude)) }
        return magnitude == UInt64(Int64.max) + 1 ? T(exactly: Int64.min) : nil
    }

    /// The general case: any digit count, a fraction, an exponent; 128-bit types.
    static func slowInteger<T: FixedWidthInteger>(_ text: UnsafeBufferPointer<UInt8>, as: T.Type) -> T? {
        var index = 0
        let negative = text[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        // The significant digits (leading zeros dropped) and the power of ten they are scaled by.
        var digits: [UInt8] = []
        var scale = 0
        var inFraction = false
        while index < text.count {
            let c = text[index]
            if c == UInt8(ascii: ".") {
                inFraction = true
            } else if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
                break
            } else {
                if !(digits.isEmpty && c == UInt8(ascii: "0")) { digits.append(c &- 0x30) }
                if inFraction { scale -= 1 }
            }
            index += 1
        }
        if digits.isEmpty { return 0 }  // zero, whatever its sign and exponent
        if index < text.count {
            index += 1
            var exponentNegative = false
            if text[index] == UInt8(ascii: "+") {
                index += 1
            } else if text[index] == UInt8(ascii: "-") {
                exponentNegative = true
                index += 1
            }
            var exponent = 0
            while index < text.count {
                // Beyond 10,000 the value is either not an integer or far too large.
                if exponent < 10_000 { exponent = exponent * 10 + Int(text[index] &- 0x30) }
                index += 1
            }
            scale += exponentNegative ? -exponent : exponent
        }
        // Trailing zeros raise the scale.
        while let last = digits.last, last == 0 {
            digits.removeLast()
            scale += 1
        }
        guard scale >= 0, digits.count + scale <= 40 else { return nil }
        var magnitude: UInt128 = 0
        for digit in digits {
            let (product, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            magnitude = product + UInt128(digit)
        }
        for _ in 0..<scale {
            let (product, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            magnitude = product
        }
        if !negative { return T(exactly: magnitude) }
        guard T.isSigned else { return nil }
        guard magnitude <= UInt128(Int128.max) + 1 else { return nil }
        if magnitude == UInt128(Int128.max) + 1 { return T(exactly: Int128.min) }
        return T(exactly: -Int128(magnitude))
    }

    // MARK: Floating point

    /// Powers of ten that are exact doubles.
    private static let exactPowers: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// The nearest double, or `nil` when the number is out of `Double`'s range (it would round
    /// to infinity, or to zero although it is not zero), as `JSONDecoder` refuses them.
    @inline(__always)
    package static func double(_ text: UnsafeBufferPointer<UInt8>, tag: UInt8) -> Double? {
        // Clinger's fast path: at most 15 significant digits scaled by at most 10^22 is one
        // correctly rounded operation on exact operands.
        var index = 0
        let negative = tag & FastJSONFlag.negative != 0
        if negative { index = 1 }
        var mantissa: UInt64 = 0
        var digitCount = 0
        var scale = 0
        var inFraction = false
        while index < text.count {
            let c = text[index]
            let digit = c &- 0x30
            if digit < 10 {
                if mantissa != 0 || digit != 0 { digitCount += 1 }
                mantissa = mantissa &* 10 &+ UInt64(digit)
                if inFraction { scale -= 1 }
            } else if c == UInt8(ascii: ".") {
                inFraction = true
            } else {
                break  // an exponent: the slow path
            }
            index += 1
        }
        if index == text.count && digitCount <= 15 && scale >= -22 {
            let value = scale == 0 ? Double(mantissa) : Double(mantissa) / exactPowers[-scale]
            return negative ? -value : value
        }
        return slowDouble(text)
    }

    static func slowDouble(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        guard let value = Double(String(decoding: text, as: UTF8.self)) else { return nil }
        return representable(value, text)
    }

    static func float(_ text: UnsafeBufferPointer<UInt8>) -> Float? {
        guard let value = Float(String(decoding: text, as: UTF8.self)) else { return nil }
        return representable(value, text)
    }

    /// `value` unless it overflowed to infinity or underflowed to zero from non-zero digits.
    private static func representable<F: BinaryFloatingPoint>(_ value: F, _ text: UnsafeBufferPointer<UInt8>) -> F? {
        guard value.isFinite else { return nil }
        if value == 0 {
            for c in text {
                if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { break }
                if c >= UInt8(ascii: "1") && c <= UInt8(ascii: "9") { return nil }
            }
        }
        return value
    }
}
