import Foundation

/// A strict RFC 8259 parser from UTF-8 bytes to a ``FastJSONDocument`` tape.
///
/// One pass, no recursion. It validates everything a decoder would otherwise find late: the
/// grammar, UTF-8 inside strings, escape sequences (a `\u` high surrogate must be followed by
/// a `\u` low surrogate; a lone surrogate is an error), and nesting deeper than `maxDepth`.
/// Numbers and strings are only delimited here; the decoder converts the ones it reads.
/// Any value may stand at the top level; only whitespace may follow it.
package enum FastJSONParser {
    /// The deepest nesting of arrays and objects accepted, as in `JSONDecoder`.
    package static let defaultMaxDepth = 512
    /// Objects with more keys than this are not checked for duplicate keys while parsing;
    /// the decoder indexes them by key instead.
    static let maxCheckedKeys = 16

    /// Parses `input`, which must stay valid and unchanged while the document uses it.
    ///
    /// - Throws: ``FastJSONSyntaxError`` with the offset of the first offending byte.
    /// - Complexity: O(`input.count`).
    package static func parse(_ input: UnsafeBufferPointer<UInt8>, maxDepth: Int = defaultMaxDepth) throws(FastJSONSyntaxError) -> FastJSONDocument {
        guard let base = input.baseAddress, !input.isEmpty else {
            throw FastJSONSyntaxError(offset: 0, reason: "the document is empty")
        }
        var parser = Parser(bytes: base, count: input.count, maxDepth: max(maxDepth, 1))
        do {
            try parser.run()
        } catch {
            parser.deallocate()
            throw error
        }
        parser.deallocateWorkspace()
        parser.reserve(1)
        parser.tokens[parser.count] = FastJSONToken(tag: FastJSONKind.null.rawValue, offset: 0, payload: 0)
        return FastJSONDocument(tokens: parser.tokens, tokenCount: parser.count, bytes: base, byteCount: input.count)
    }
}

private struct OpenContainer {
    var token: Int
    var count: Int
    var isObject: Bool
    /// Whether the object's keys cannot be matched byte for byte in order (see
    /// ``FastJSONFlag/slowKeys``).
    var slowKeys: Bool
}

private enum ASCII {
    static let quote: UInt8 = 0x22, backslash: UInt8 = 0x5C, slash: UInt8 = 0x2F
    static let comma: UInt8 = 0x2C, colon: UInt8 = 0x3A
    static let openBrace: UInt8 = 0x7B, closeBrace: UInt8 = 0x7D
    static let openBracket: UInt8 = 0x5B, closeBracket: UInt8 = 0x5D
    static let minus: UInt8 = 0x2D, plus: UInt8 = 0x2B, dot: UInt8 = 0x2E
    static let zero: UInt8 = 0x30, nine: UInt8 = 0x39
    static let lowerE: UInt8 = 0x65, upperE: UInt8 = 0x45
    static let space: UInt8 = 0x20, tab: UInt8 = 0x09, lineFeed: UInt8 = 0x0A, carriageReturn: UInt8 = 0x0D
}

private struct Parser {
    let bytes: UnsafePointer<UInt8>
    let n: Int
    let maxDepth: Int
    var tokens: UnsafeMutablePointer<FastJSONToken>
    var capacity: Int
    var count = 0
    let stack: UnsafeMutablePointer<OpenContainer>
    var depth = 0
    /// Per open object (by depth), the fingerprints and offsets of its first keys.
    let keys: UnsafeMutablePointer<(fingerprint: UInt64, offset: Int)>

    init(bytes: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
        self.bytes = bytes
        n = count
        self.maxDepth = maxDepth
        // Our documents hold about one token per 14 bytes; growing doubles.
        capacity = count / 8 + 16
        tokens = .allocate(capacity: capacity)
        stack = .allocate(capacity: min(maxDepth, count) + 1)
        keys = .allocate(capacity: (min(maxDepth, count) + 1) * FastJSONParser.maxCheckedKeys)
    }

    func deallocate() {
        tokens.deallocate()
        deallocateWorkspace()
    }

    func deallocateWorkspace() {
        stack.deallocate()
        keys.deallocate()
    }

    // MARK: Tokens

    @inline(__always) mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    mutating func grow(to needed: Int) {
        let newCapacity = max(capacity * 2, needed)
        let grown = UnsafeMutablePointer<FastJSONToken>.allocate(capacity: newCapacity)
        grown.moveInitialize(from: tokens, count: count)
        tokens.deallocate()
        tokens = grown
        capacity = newCapacity
    }

    @inline(__always) mutating func append(_ tag: UInt8, _ offset: Int, _ payload: UInt64) {
        reserve(1)
        tokens[count] = FastJSONToken(tag: tag, offset: offset, payload: payload)
        count += 1
    }

    // MARK: Errors

    func error(_ offset: Int, _ reason: String) -> FastJSONSyntaxError {
        FastJSONSyntaxError(offset: offset, reason: reason)
    }

    func unexpectedEnd(_ what: String) -> FastJSONSyntaxError {
        FastJSONSyntaxError(offset: n, reason: "the document ends inside \(what)")
    }

    func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x\(hex.count == 1 ? "0" : "")\(hex)"
    }

    // MARK: Structure

    @inline(__always) func skipWhitespace(_ start: Int) -> Int {
        var i = start
        while i < n {
            let c = bytes[i]
            guard c == ASCII.space || c == ASCII.lineFeed || c == ASCII.carriageReturn || c == ASCII.tab else { break }
            i += 1
        }
        return i
    }

    mutating func run() throws(FastJSONSyntaxError) {
        var i = skipWhitespace(0)
        guard i < n else { throw error(0, "the document holds no value") }
        value: while true {
            // A value starts at `i` (whitespace skipped).
            guard i < n else { throw unexpectedEnd(depth == 0 ? "the document" : "a container: a value is missing") }
            let c = bytes[i]
            switch c {
            case ASCII.quote:
                i = try scanString(i)
            case ASCII.openBrace, ASCII.openBracket:
                let isObject = c == ASCII.openBrace
                guard depth < maxDepth else { throw error(i, "arrays and objects nest deeper than \(maxDepth) levels") }
                stack[depth] = OpenContainer(token: count, count: 0, isObject: isObject, slowKeys: false)
                depth += 1
                append(isObject ? FastJSONKind.object.rawValue : FastJSONKind.array.rawValue, i, 0)
                i = skipWhitespace(i + 1)
                guard i < n else { throw unexpectedEnd(isObject ? "an object" : "an array") }
                if bytes[i] == (isObject ? ASCII.closeBrace : ASCII.closeBracket) {
                    try close(at: i)
                    i += 1
                } else {
                    stack[depth - 1].count = 1
                    if isObject { i = try scanKey(i) }
                    continue value
                }
            case UInt8(ascii: "t"):
                try literal(i, "true")
                append(FastJSONKind.true.rawValue, i, 4)
                i += 4
            case UInt8(ascii: "f"):
                try literal(i, "false")
                append(FastJSONKind.false.rawValue, i, 5)
                i += 5
            case UInt8(ascii: "n"):
                try literal(i, "null")
                append(FastJSONKind.null.rawValue, i, 4)
                i += 4
            case ASCII.minus, ASCII.zero...ASCII.nine:
                i = try scanNumber(i)
            default:
                throw error(i, "\(describe(c)) cannot start a value")
            }
            // After a value: a separator, the end of containers, or the end of the document.
            while true {
                i = skipWhitespace(i)
                guard depth > 0 else {
                    guard i == n else { throw error(i, "\(describe(bytes[i])) after the end of the document's value") }
                    return
                }
                let isObject = stack[depth - 1].isObject
                guard i < n else { throw unexpectedEnd(isObject ? "an object" : "an array") }
                let c = bytes[i]
                if c == ASCII.comma {
                    stack[depth - 1].count += 1
                    i = skipWhitespace(i + 1)
                    if isObject {
                        guard i < n else { throw unexpectedEnd("an object") }
                        i = try scanKey(i)
                    }
                    continue value
                }
                guard c == (isObject ? ASCII.closeBrace : ASCII.closeBracket) else {
                    throw error(i, isObject
                        ? "expected ',' or '}' after an object member, found \(describe(c))"
                        : "expected ',' or ']' after an array element, found \(describe(c))")
                }
                try close(at: i)
                i += 1
            }
        }
    }

    /// Closes the innermost container: its count, its end, and for an object whether keys
    /// can be matched byte for byte.
    @inline(__always) mutating func close(at i: Int) throws(FastJSONSyntaxError) {
        depth -= 1
        let open = stack[depth]
        guard count <= Int(UInt32.max) else {
            // Containers keep 32-bit counts and ends; only a document over 4 GiB can need more.
            throw error(i, "the document holds more than \(UInt32.max) values, more than this parser indexes")
        }
        var tag = open.isObject ? FastJSONKind.object.rawValue : FastJSONKind.array.rawValue
        if open.isObject && (open.slowKeys || open.count > FastJSONParser.maxCheckedKeys) {
            tag |= FastJSONFlag.slowKeys
        }
        // An object's offset becomes the decoder's key cursor: its first key.
        let offset = open.isObject ? open.token + 1 : tokens[open.token].offset
        tokens[open.token] = FastJSONToken(tag: tag, offset: offset, payload: UInt64(count) << 32 | UInt64(open.count))
    }

    @inline(__always) func literal(_ i: Int, _ word: StaticString) throws(FastJSONSyntaxError) {
        let length = word.utf8CodeUnitCount
        let text = word.utf8Start
        for k in 0..<length {
            guard i + k < n else { throw unexpectedEnd("the literal \(word)") }
            guard bytes[i + k] == text[k] else { throw error(i + k, "invalid literal: expected \(word)") }
        }
    }

    /// Checks a plain key of the innermost object against the object's earlier keys: an equal
    /// one makes the object's keys slow. Keys are compared by a fingerprint (length, first and
    /// last two bytes) first, then byte for byte.
    @inline(__always) mutating func noteKey(offset: Int, length: Int) {
        let member = stack[depth - 1].count - 1
        guard member < FastJSONParser.maxCheckedKeys else { return }  // such objects are slow anyway
        var fingerprint = UInt64(truncatingIfNeeded: length) << 32
        if length >= 2 {
            fingerprint |= UInt64(bytes[offset]) << 24 | UInt64(bytes[offset + 1]) << 16
                | UInt64(bytes[offset + length - 2]) << 8 | UInt64(bytes[offset + length - 1])
        } else if length == 1 {
            fingerprint |= UInt64(bytes[offset])
        }
        let seen = keys + (depth - 1) * FastJSONParser.maxCheckedKeys
        for earlier in 0..<member where seen[earlier].fingerprint == fingerprint {
            if length <= 4 || memcmp(bytes + seen[earlier].offset, bytes + offset, length) == 0 {
                stack[depth - 1].slowKeys = true
                break
            }
        }
        seen[member] = (fingerprint, offset)
    }

    /// A key and its colon; `i` is at the key's opening quote. Returns the start of the value.
    @inline(__always) mutating func scanKey(_ i: Int) throws(FastJSONSyntaxError) -> Int {
        guard bytes[i] == ASCII.quote else {
            throw error(i, "expected a string key, found \(describe(bytes[i]))")
        }
        var j = try scanString(i)
        let key = tokens[count - 1]
        if key.tag & (FastJSONFlag.escaped | FastJSONFlag.nonASCII) != 0 {
            stack[depth - 1].slowKeys = true
        } else {
            noteKey(offset: i + 1, length: j - i - 2)
        }
        j = skipWhitespace(j)
        guard j < n else { throw unexpectedEnd("an object") }
        guard bytes[j] == ASCII.colon else { throw error(j, "expected ':' after an object key, found \(describe(bytes[j]))") }
        return skipWhitespace(j + 1)
    }

    // MARK: Strings

    /// Flags, in bit 7 of each byte, the bytes of `word` that end a run of plain characters:
    /// a quote, a backslash, a control character or a byte ≥ 0x80. The lowest flag is exact.
    @inline(__always) static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* UInt64(ASCII.quote))
        let backslash = word ^ (ones &* UInt64(ASCII.backslash))
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
                    if c == ASCII.quote || c == ASCII.backslash || c < 0x20 || c >= 0x80 { break }
                    j += 1
                }
                guard j < n else { throw unexpectedEnd("a string") }
            }
            let c = bytes[j]
            if c == ASCII.quote {
                append(FastJSONKind.string.rawValue | flags, start, UInt64(j - start))
                return j + 1
            } else if c == ASCII.backslash {
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
        case ASCII.quote, ASCII.backslash, ASCII.slash, UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return j + 2
        case UInt8(ascii: "u"):
            let unit = try hex4(j + 2, escape: j)
            switch unit {
            case 0xD800...0xDBFF:
                let lone = error(j, "\\u\(hexText(unit)) is a high surrogate without a following \\u low surrogate")
                guard j + 6 < n else { throw unexpectedEnd("a string") }
                guard bytes[j + 6] == ASCII.backslash else { throw lone }
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
            case ASCII.zero...ASCII.nine: digit = c &- ASCII.zero
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
        k < n && bytes[k] &- ASCII.zero < 10
    }

    /// Scans the number at `i`, appends its token and returns the index after it.
    @inline(__always) mutating func scanNumber(_ i: Int) throws(FastJSONSyntaxError) -> Int {
        var tag = FastJSONKind.number.rawValue
        var j = i
        if bytes[j] == ASCII.minus {
            tag |= FastJSONFlag.negative
            j += 1
        }
        guard j < n else { throw unexpectedEnd("a number") }
        if bytes[j] == ASCII.zero {
            j += 1
            if isDigit(j) { throw error(j, "a number cannot have a leading zero") }
        } else if isDigit(j) {
            j += 1
            while isDigit(j) { j += 1 }
        } else {
            throw error(j, "expected a digit, found \(describe(bytes[j]))")
        }
        if j < n && bytes[j] == ASCII.dot {
            tag |= FastJSONFlag.nonInteger
            j += 1
            guard j < n else { throw unexpectedEnd("a number") }
            guard isDigit(j) else { throw error(j, "expected a digit after the decimal point, found \(describe(bytes[j]))") }
            while isDigit(j) { j += 1 }
        }
        if j < n && (bytes[j] == ASCII.lowerE || bytes[j] == ASCII.upperE) {
            tag |= FastJSONFlag.nonInteger
            j += 1
            if j < n && (bytes[j] == ASCII.plus || bytes[j] == ASCII.minus) { j += 1 }
            guard j < n else { throw unexpectedEnd("a number") }
            guard isDigit(j) else { throw error(j, "expected a digit in the exponent, found \(describe(bytes[j]))") }
            while isDigit(j) { j += 1 }
        }
        append(tag, i, UInt64(j - i))
        return j
    }
}
