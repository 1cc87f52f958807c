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
        try scan(input, maxDepth: maxDepth, chunking: nil)
    }

    /// Runs a scanner over the whole of `input` and closes its tape with the null token that
    /// ends every tape: the whole-document parse, or with `chunking`, the outline that the
    /// chunked parse leaves.
    static func scan(
        _ input: UnsafeBufferPointer<UInt8>, maxDepth: Int, chunking: FastJSONChunking?
    ) throws(FastJSONSyntaxError) -> FastJSONDocument {
        guard let base = input.baseAddress, !input.isEmpty else {
            throw FastJSONSyntaxError(offset: 0, reason: "the document is empty")
        }
        var parser = FastJSONScanner(bytes: base, count: input.count, maxDepth: max(maxDepth, 1), chunking: chunking)
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

/// An array or object the scanner is inside of.
struct FastJSONOpenContainer {
    var token: Int
    var count: Int
    var isObject: Bool
    /// Whether the object's keys cannot be matched byte for byte in order (see
    /// ``FastJSONFlag/slowKeys``).
    var slowKeys: Bool
    /// Whether the object is the root member whose arrays are parsed in chunks (see
    /// ``FastJSONChunkedParse``).
    var holdsChunkedArrays = false
}

/// The bytes of JSON's grammar.
enum FastJSONByte {
    static let quote: UInt8 = 0x22, backslash: UInt8 = 0x5C, slash: UInt8 = 0x2F
    static let comma: UInt8 = 0x2C, colon: UInt8 = 0x3A
    static let openBrace: UInt8 = 0x7B, closeBrace: UInt8 = 0x7D
    static let openBracket: UInt8 = 0x5B, closeBracket: UInt8 = 0x5D
    static let minus: UInt8 = 0x2D, plus: UInt8 = 0x2B, dot: UInt8 = 0x2E
    static let zero: UInt8 = 0x30, nine: UInt8 = 0x39
    static let lowerE: UInt8 = 0x65, upperE: UInt8 = 0x45
    static let space: UInt8 = 0x20, tab: UInt8 = 0x09, lineFeed: UInt8 = 0x0A, carriageReturn: UInt8 = 0x0D
}

/// The state of one parse: the bytes, the tokens made so far, and the open containers.
struct FastJSONScanner {
    let bytes: UnsafePointer<UInt8>
    let n: Int
    let maxDepth: Int
    var tokens: UnsafeMutablePointer<FastJSONToken>
    var capacity: Int
    var count = 0
    let stack: UnsafeMutablePointer<FastJSONOpenContainer>
    var depth = 0
    /// Per open object (by depth), the fingerprints and offsets of its first keys.
    let keys: UnsafeMutablePointer<(fingerprint: UInt64, offset: Int)>
    /// What a chunked parse does with the arrays of one root member (`nil`: a whole tape).
    let chunking: FastJSONChunking?
    /// While inside a chunked array: its depth (0 otherwise), the tape of the document
    /// around it (`tokens` is then the chunk's), and the index of the chunk's first element.
    var chunkDepth = 0
    var outer: (tokens: UnsafeMutablePointer<FastJSONToken>, count: Int, capacity: Int)?
    var chunkFirstElement = 0

    init(bytes: UnsafePointer<UInt8>, count: Int, maxDepth: Int, chunking: FastJSONChunking? = nil) {
        self.bytes = bytes
        n = count
        self.maxDepth = maxDepth
        self.chunking = chunking
        // Our documents hold about one token per 14 bytes; growing doubles. A chunked parse
        // keeps only the document around its chunked arrays in this tape.
        capacity = chunking == nil ? count / 8 + 16 : 1_024
        tokens = .allocate(capacity: capacity)
        stack = .allocate(capacity: min(maxDepth, count) + 1)
        keys = .allocate(capacity: (min(maxDepth, count) + 1) * FastJSONParser.maxCheckedKeys)
    }

    func deallocate() {
        tokens.deallocate()
        outer?.tokens.deallocate()
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
            guard c == FastJSONByte.space || c == FastJSONByte.lineFeed || c == FastJSONByte.carriageReturn || c == FastJSONByte.tab else { break }
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
            case FastJSONByte.quote:
                i = try scanString(i)
            case FastJSONByte.openBrace, FastJSONByte.openBracket:
                let isObject = c == FastJSONByte.openBrace
                guard depth < maxDepth else { throw error(i, "arrays and objects nest deeper than \(maxDepth) levels") }
                let holdsChunkedArrays = chunking != nil && depth == 1 && isObject && stack[0].isObject && isChunkedMemberKey(count - 1)
                stack[depth] = FastJSONOpenContainer(token: count, count: 0, isObject: isObject, slowKeys: false, holdsChunkedArrays: holdsChunkedArrays)
                depth += 1
                append(isObject ? FastJSONKind.object.rawValue : FastJSONKind.array.rawValue, i, 0)
                if depth == 3 && !isObject && stack[1].holdsChunkedArrays { beginChunks() }
                i = skipWhitespace(i + 1)
                guard i < n else { throw unexpectedEnd(isObject ? "an object" : "an array") }
                if bytes[i] == (isObject ? FastJSONByte.closeBrace : FastJSONByte.closeBracket) {
                    if depth == chunkDepth { endChunks() }
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
            case FastJSONByte.minus, FastJSONByte.zero...FastJSONByte.nine:
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
                if c == FastJSONByte.comma {
                    if depth == chunkDepth && count >= chunking.unsafelyUnwrapped.tokensPerChunk { flushChunk() }
                    stack[depth - 1].count += 1
                    i = skipWhitespace(i + 1)
                    if isObject {
                        guard i < n else { throw unexpectedEnd("an object") }
                        i = try scanKey(i)
                    }
                    continue value
                }
                guard c == (isObject ? FastJSONByte.closeBrace : FastJSONByte.closeBracket) else {
                    throw error(i, isObject
                        ? "expected ',' or '}' after an object member, found \(describe(c))"
                        : "expected ',' or ']' after an array element, found \(describe(c))")
                }
                if depth == chunkDepth { endChunks() }
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
        // An object already slow (an escaped or non-ASCII key among its earlier ones) is not
        // checked further: that key left its slot unwritten, and an unwritten slot holds
        // whatever the memory held, an offset anywhere.
        guard !stack[depth - 1].slowKeys else { return }
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
        guard bytes[i] == FastJSONByte.quote else {
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
        guard bytes[j] == FastJSONByte.colon else { throw error(j, "expected ':' after an object key, found \(describe(bytes[j]))") }
        return skipWhitespace(j + 1)
    }
}
