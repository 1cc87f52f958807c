import Foundation

/// Strings and numbers: validated and delimited, their tokens appended.
extension FastJSONScanner {
    // MARK: Strings

    /// Flags, in bit 7 of each byte, the bytes of `word` that end a run of plain characters:
    /// a quote, a backslash, a control character or a byte ≥ 0x80. The lowest flag is exact.
    @inline(__always) static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* UInt64(FastJSONByte.quote))
        let backslash = word ^ (ones &* UInt64(FastJSONByte.backslash))
        let quoteZero = (quote &- ones) & ~quote
        let backslashZero = (backslash &- ones) & ~backslash
        let control = (word &- ones &* 0x20) & ~word
        return (quoteZero | backslashZero | control | word) & high
    }

    /// Scans the string whose opening quote is at `i`, appends its token and returns the
    /// index after the closing quote.
    @inline(__always) mutating func scanString(_ i: Int) throws(FastJSONSyntaxError) -> Int {
        let start = i + 1
        var j = start
        var flags: UInt8 = 0
        while true {
            if j + 8 <= n {
                let word = UInt64(littleEndian: UnsafeRawPointer(bytes + j).loadUnaligned(as: UInt64.self))
                let special = Self.specialBytes(word)
                if special == 0 {
                    j += 8
                    continue
                }
                j += special.trailingZeroBitCount >> 3
            } else {
                while j < n {
                    let c = bytes[j]
                    if c == FastJSONByte.quote || c == FastJSONByte.backslash || c < 0x20 || c >= 0x80 { break }
                    j += 1
                }
                guard j < n else { throw unexpectedEnd("a string") }
            }
            let c = bytes[j]
            if c == FastJSONByte.quote {
                append(FastJSONKind.string.rawValue | flags, start, UInt64(j - start))
                return j + 1
            } else if c == FastJSONByte.backslash {
                flags |= FastJSONFlag.escaped
                j = try scanEscape(j)
            } else if c < 0x20 {
                throw error(j, "unescaped control character \(describe(c)) in a string")
            } else {
                flags |= FastJSONFlag.nonASCII
                j = try scanUTF8(j)
            }
        }
    }

    /// Validates the escape sequence at `j` (a backslash); returns the index after it.
    mutating func scanEscape(_ j: Int) throws(FastJSONSyntaxError) -> Int {
        guard j + 1 < n else { throw unexpectedEnd("a string") }
        switch bytes[j + 1] {
        case FastJSONByte.quote, FastJSONByte.backslash, FastJSONByte.slash, UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return j + 2
        case UInt8(ascii: "u"):
            let unit = try hex4(j + 2, escape: j)
            switch unit {
            case 0xD800...0xDBFF:
                let lone = error(j, "\\u\(hexText(unit)) is a high surrogate without a following \\u low surrogate")
                guard j + 6 < n else { throw unexpectedEnd("a string") }
                guard bytes[j + 6] == FastJSONByte.backslash else { throw lone }
                guard j + 7 < n else { throw unexpectedEnd("a string") }
                guard bytes[j + 7] == UInt8(ascii: "u") else { throw lone }
                let low = try hex4(j + 8, escape: j + 6)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw error(j, "\\u\(hexText(unit)) is a high surrogate followed by \\u\(hexText(low)), not a low surrogate")
                }
                return j + 12
            case 0xDC00...0xDFFF:
                throw error(j, "\\u\(hexText(unit)) is a low surrogate without a high surrogate before it")
            default:
                return j + 6
            }
        default:
            throw error(j, "invalid escape sequence \\\(describe(bytes[j + 1]))")
        }
    }

    func hexText(_ unit: UInt32) -> String {
        let text = String(unit, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }

    /// The four hex digits at `k`, of the `\u` escape at `escape`.
    func hex4(_ k: Int, escape: Int) throws(FastJSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for d in k..<(k + 4) {
            guard d < n else { throw unexpectedEnd("a string") }
            let c = bytes[d]
            let digit: UInt8
            switch c {
            case FastJSONByte.zero...FastJSONByte.nine: digit = c &- FastJSONByte.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c &- UInt8(ascii: "A") &+ 10
            default: throw error(d, "invalid \\u escape: \(describe(c)) is not a hex digit")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Validates the UTF-8 sequence starting at `j` (a byte ≥ 0x80); returns the index after it.
    @inline(__always) func scanUTF8(_ j: Int) throws(FastJSONSyntaxError) -> Int {
        let lead = bytes[j]
        let length: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: throw error(j, "invalid UTF-8: \(describe(lead)) cannot start a character")
        }
        guard j + length <= n else { throw unexpectedEnd("a UTF-8 sequence") }
        let second = bytes[j + 1]
        guard second >= low && second <= high else { throw error(j + 1, "invalid UTF-8: \(describe(second)) cannot follow \(describe(lead))") }
        for k in 2..<length where bytes[j + k] & 0xC0 != 0x80 {
            throw error(j + k, "invalid UTF-8: \(describe(bytes[j + k])) is not a continuation byte")
        }
        return j + length
    }

    // MARK: Numbers

    @inline(__always) func isDigit(_ k: Int) -> Bool {
        k < n && bytes[k] &- FastJSONByte.zero < 10
    }

    /// Scans the number at `i`, appends its token and returns the index after it.
    @inline(__always) mutating func scanNumber(_ i: Int) throws(FastJSONSyntaxError) -> Int {
        var tag = FastJSONKind.number.rawValue
        var j = i
        if bytes[j] == FastJSONByte.minus {
            tag |= FastJSONFlag.negative
            j += 1
        }
        guard j < n else { throw unexpectedEnd("a number") }
        if bytes[j] == FastJSONByte.zero {
            j += 1
            if isDigit(j) { throw error(j, "a number cannot have a leading zero") }
        } else if isDigit(j) {
            j += 1
            while isDigit(j) { j += 1 }
        } else {
            throw error(j, "expected a digit, found \(describe(bytes[j]))")
        }
        if j < n && bytes[j] == FastJSONByte.dot {
            tag |= FastJSONFlag.nonInteger
            j += 1
            guard j < n else { throw unexpectedEnd("a number") }
            guard isDigit(j) else { throw error(j, "expected a digit after the decimal point, found \(describe(bytes[j]))") }
            while isDigit(j) { j += 1 }
        }
        if j < n && (bytes[j] == FastJSONByte.lowerE || bytes[j] == FastJSONByte.upperE) {
            tag |= FastJSONFlag.nonInteger
            j += 1
            if j < n && (bytes[j] == FastJSONByte.plus || bytes[j] == FastJSONByte.minus) { j += 1 }
            guard j < n else { throw unexpectedEnd("a number") }
            guard isDigit(j) else { throw error(j, "expected a digit in the exponent, found \(describe(bytes[j]))") }
            while isDigit(j) { j += 1 }
        }
        append(tag, i, UInt64(j - i))
        return j
    }
}
