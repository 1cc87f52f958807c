import Foundation

/// JSON strings as `JSONEncoder` writes them: UTF-8 passed through, and escaped: `"`, `\`,
/// `/` (as `\/`, `JSONEncoder`'s default), the control characters U+0000 to U+001F (`\b`,
/// `\t`, `\n`, `\f`, `\r`, others as `\u00xx`). Swift strings hold no lone surrogates, so
/// the output is always valid UTF-8 (RFC 8259 §8.1).
extension FastJSONOutput {
    // MARK: - Strings

    /// `text` as a quoted, escaped JSON string.
    ///
    /// - Complexity: O(UTF-8 length); eight bytes at a time where nothing needs escaping.
    @inline(__always)
    mutating func appendString(_ text: String) {
        text.withUTF8Bytes { appendString(utf8: $0) }
    }

    /// The UTF-8 bytes `utf8` as a quoted, escaped JSON string.
    mutating func appendString(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        _ = reserve(bytes.count + 2)
        append(UInt8(ascii: "\""))
        guard let source = bytes.baseAddress else {
            append(UInt8(ascii: "\""))
            return
        }
        let length = bytes.count
        var runStart = 0
        var index = 0
        while index < length {
            // Skip whole words that need no escape.
            while index + 8 <= length && !Self.wordNeedsEscape(UnsafeRawPointer(source + index).loadUnaligned(as: UInt64.self)) {
                index += 8
            }
            let end = Swift.min(index + 8, length)
            while index < end && !Self.needsEscape(source[index]) { index += 1 }
            guard index < end else { continue }
            append(UnsafeRawBufferPointer(start: source + runStart, count: index - runStart))
            appendEscape(source[index])
            index += 1
            runStart = index
        }
        append(UnsafeRawBufferPointer(start: source + runStart, count: length - runStart))
        append(UInt8(ascii: "\""))
    }

    @inline(__always)
    static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/")
    }

    /// Whether any of the eight bytes in `word` is below 0x20 or is `"`, `\` or `/`. Exact:
    /// the borrow-based tests can only err for bytes after one that matches.
    @inline(__always)
    static func wordNeedsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZero(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & high }
        let control = (word &- ones &* 0x20) & ~word & high
        return control | hasZero(word ^ (ones &* 0x22)) | hasZero(word ^ (ones &* 0x5C)) | hasZero(word ^ (ones &* 0x2F)) != 0
    }

    /// The escape sequence for one byte that ``needsEscape(_:)``.
    private mutating func appendEscape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): append(UInt8(ascii: "\\"), UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): append(UInt8(ascii: "\\"), UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): append(UInt8(ascii: "\\"), UInt8(ascii: "/"))
        case 0x08: append(UInt8(ascii: "\\"), UInt8(ascii: "b"))
        case 0x09: append(UInt8(ascii: "\\"), UInt8(ascii: "t"))
        case 0x0A: append(UInt8(ascii: "\\"), UInt8(ascii: "n"))
        case 0x0C: append(UInt8(ascii: "\\"), UInt8(ascii: "f"))
        case 0x0D: append(UInt8(ascii: "\\"), UInt8(ascii: "r"))
        default:
            let at = reserve(6)
            let hex: StaticString = "0123456789abcdef"
            at[0] = UInt8(ascii: "\\")
            at[1] = UInt8(ascii: "u")
            at[2] = UInt8(ascii: "0")
            at[3] = UInt8(ascii: "0")
            at[4] = hex.utf8Start[Int(byte >> 4)]
            at[5] = hex.utf8Start[Int(byte & 0x0F)]
            advance(by: 6)
        }
    }

    // MARK: - UUIDs

    /// `uuid` as `UUID(from:)` reads it: its `uuidString`, upper-case hex in 8-4-4-4-12 groups.
    @inline(__always)
    mutating func appendUUID(_ uuid: UUID) {
        let at = reserve(38)
        at[0] = UInt8(ascii: "\"")
        UUIDParsing.writeCanonical(uuid, at: at + 1)
        at[37] = UInt8(ascii: "\"")
        advance(by: 38)
    }

    // MARK: - Base64

    /// `data` as `.base64` writes it: `base64EncodedString()` (padded, no line breaks) as a
    /// JSON string, so with every `/` escaped.
    mutating func appendBase64(_ data: Data) {
        data.withUnsafeBytes { bytes in
            let groups = (bytes.count + 2) / 3
            // Every character might be an escaped `/`.
            let at = reserve(groups * 8 + 2)
            let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
            let table = alphabet.utf8Start
            var position = 0
            @inline(__always) func put(_ sextet: UInt32) {
                let character = table[Int(sextet & 0x3F)]
                if character == UInt8(ascii: "/") {
                    at[position] = UInt8(ascii: "\\")
                    position += 1
                }
                at[position] = character
                position += 1
            }
            at[position] = UInt8(ascii: "\"")
            position += 1
            var index = 0
            let count = bytes.count
            while index + 3 <= count {
                let triple = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                put(triple >> 18)
                put(triple >> 12)
                put(triple >> 6)
                put(triple)
                index += 3
            }
            if count - index == 1 {
                let triple = UInt32(bytes[index]) << 16
                put(triple >> 18)
                put(triple >> 12)
                at[position] = UInt8(ascii: "=")
                at[position + 1] = UInt8(ascii: "=")
                position += 2
            } else if count - index == 2 {
                let triple = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
                put(triple >> 18)
                put(triple >> 12)
                put(triple >> 6)
                at[position] = UInt8(ascii: "=")
                position += 1
            }
            at[position] = UInt8(ascii: "\"")
            position += 1
            advance(by: position)
        }
    }
}
