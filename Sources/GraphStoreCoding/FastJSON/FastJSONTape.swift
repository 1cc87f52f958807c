/// Why a document is not valid JSON (RFC 8259), and where: the byte offset in the UTF-8 text
/// the parser read (after a byte order mark, or after converting UTF-16/32 input).
package typealias FastJSONSyntaxError = DocumentSyntaxError<FastJSONSyntax>

/// JSON, as ``FastJSONSyntaxError`` names it.
package enum FastJSONSyntax: DocumentSyntax {
    package static var documentName: String { "JSON" }
}

/// One value (or object key) of a parsed document. 16 bytes.
///
/// `word` holds the kind and flags in its top byte and, below, the value's byte offset in the
/// document (strings: the first byte after the opening quote). For an object the offset is
/// not needed once parsed and holds the decoder's key cursor instead. `payload` holds a
/// string's or number's length in bytes, or for a container its element count (low 32 bits)
/// and the tape index just past its last element (high 32 bits).
package struct FastJSONToken {
    package var word: UInt64
    package var payload: UInt64

    @usableFromInline static let offsetMask: UInt64 = (1 << 56) - 1

    @inlinable @inline(__always) package var tag: UInt8 { UInt8(truncatingIfNeeded: word >> 56) }
    @inlinable @inline(__always) package var kind: FastJSONKind { FastJSONKind(rawValue: tag & 7).unsafelyUnwrapped }
    @inlinable @inline(__always) package var offset: Int { Int(truncatingIfNeeded: word & Self.offsetMask) }
    @inlinable @inline(__always) package var length: Int { Int(truncatingIfNeeded: payload) }
    @inlinable @inline(__always) package var count: Int { Int(truncatingIfNeeded: payload & 0xFFFF_FFFF) }
    @inlinable @inline(__always) package var end: Int { Int(truncatingIfNeeded: payload >> 32) }

    @inline(__always) init(tag: UInt8, offset: Int, payload: UInt64) {
        word = UInt64(tag) << 56 | UInt64(truncatingIfNeeded: offset)
        self.payload = payload
    }
}

package enum FastJSONKind: UInt8 {
    case null = 0, `false` = 1, `true` = 2, number = 3, string = 4, array = 5, object = 6

    /// As `JSONDecoder` names the kinds in its type-mismatch messages.
    package var debugDescription: String {
        switch self {
        case .null: "null"
        case .false, .true: "bool"
        case .number: "number"
        case .string: "a string"
        case .array: "an array"
        case .object: "a dictionary"
        }
    }
}

/// Flags in the tag byte, above the kind.
package enum FastJSONFlag {
    /// A string holding at least one escape sequence.
    package static let escaped: UInt8 = 0x08
    /// A string holding at least one byte ≥ 0x80.
    package static let nonASCII: UInt8 = 0x10
    /// A number with a fraction or an exponent.
    package static let nonInteger: UInt8 = 0x08
    /// A number with a minus sign.
    package static let negative: UInt8 = 0x10
    /// An object whose keys cannot be matched byte for byte in order: one has an escape or a
    /// non-ASCII byte, two are equal, or it has more keys than the parser checks.
    package static let slowKeys: UInt8 = 0x08
}

/// A parsed document: one token per value and per object key, in document order, over the
/// UTF-8 bytes it was parsed from.
///
/// An object is its token, then per member the key's string token and the value's tokens; an
/// array is its token, then its elements' tokens. A container's `end` skips it whole. After
/// the last token comes one extra `null` token (at `tokenCount`) that stands for a missing
/// value.
///
/// The bytes are borrowed from the caller until ``takeOwnershipOfBytes()``; the tokens are
/// owned.
package final class FastJSONDocument {
    package let tokens: UnsafeMutablePointer<FastJSONToken>
    package let tokenCount: Int
    @exclusivity(unchecked) package private(set) var bytes: UnsafePointer<UInt8>
    package let byteCount: Int
    @exclusivity(unchecked) private var ownedBytes: UnsafeMutablePointer<UInt8>?

    init(tokens: UnsafeMutablePointer<FastJSONToken>, tokenCount: Int, bytes: UnsafePointer<UInt8>, byteCount: Int) {
        self.tokens = tokens
        self.tokenCount = tokenCount
        self.bytes = bytes
        self.byteCount = byteCount
    }

    deinit {
        tokens.deallocate()
        ownedBytes?.deallocate()
    }

    /// The token at `index` (the document stays alive while it is read, unlike through
    /// `tokens`).
    package func token(at index: Int) -> FastJSONToken {
        tokens[index]
    }

    /// The index of the missing-value `null` token.
    package var missing: Int { tokenCount }

    /// Copies the borrowed bytes, for a document that outlives them (a decoder or container
    /// kept by the value being decoded).
    package func takeOwnershipOfBytes() {
        guard ownedBytes == nil else { return }
        let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(byteCount, 1))
        copy.initialize(from: bytes, count: byteCount)
        ownedBytes = copy
        bytes = UnsafePointer(copy)
    }

    /// The index of the token after the value at `index`.
    @inlinable @inline(__always) package func skip(_ index: Int) -> Int {
        let token = tokens[index]
        return token.tag & 7 >= FastJSONKind.array.rawValue ? token.end : index + 1
    }

    /// The raw bytes of a string (between the quotes, escapes unresolved) or number token.
    @inlinable @inline(__always) package func span(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        let token = tokens[index]
        return UnsafeBufferPointer(start: bytes + token.offset, count: token.length)
    }
}
