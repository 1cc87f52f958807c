import Foundation

/// UUIDs read from and written as their canonical text without making a `String`: the fast
/// path of both decoders (which leave any other text to `UUID(uuidString:)`) and of both
/// encoders.
enum UUIDParsing {
    /// The UUID in canonical text (8-4-4-4-12 hex digits, either case), or `nil` for any other
    /// text, left to `UUID(uuidString:)`.
    @inline(__always)
    static func canonicalUUID(_ text: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard text.count == 36, let base = text.baseAddress,
              base[8] == 0x2D, base[13] == 0x2D, base[18] == 0x2D, base[23] == 0x2D else { return nil }
        let raw = UnsafeRawPointer(base)
        @inline(__always) func load8(_ offset: Int) -> UInt64 {
            UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        @inline(__always) func load4(_ offset: Int) -> UInt64 {
            UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        }
        guard let a = hexWord(load8(0)), let b = hexWord(load4(9) | load4(14) << 32),
              let c = hexWord(load4(19) | load4(24) << 32), let d = hexWord(load8(28)) else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            bytes.storeBytes(of: (a | b << 32).littleEndian, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: (c | d << 32).littleEndian, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: uuid)
    }

    /// The four bytes written as the eight hex digits (either case) of `word` (first digit in
    /// the lowest byte), first byte lowest; `nil` if any byte is not a hex digit.
    @inline(__always)
    static func hexWord(_ word: UInt64) -> UInt64? {
        let high: UInt64 = 0x8080_8080_8080_8080
        let ones: UInt64 = 0x0101_0101_0101_0101
        guard word & high == 0 else { return nil }
        // For bytes below 0x80, ((x | 0x80) - k) keeps bit 7 exactly when x ≥ k: no borrows.
        @inline(__always) func atLeast(_ x: UInt64, _ k: UInt64) -> UInt64 { ((x | high) &- ones &* k) & high }
        let digit = atLeast(word, 0x30) & ~atLeast(word, 0x3A)
        let lower = word | ones &* 0x20
        let letter = atLeast(lower, 0x61) & ~atLeast(lower, 0x67)
        guard digit | letter == high else { return nil }
        // '0'…'9' → 0…9; 'a'…'f' and 'A'…'F' (bit 6 set) → 1…6 + 9.
        let nibbles = (word & (ones &* 0x0F)) &+ ((word >> 6) & ones) &* 9
        // Pairs of nibbles into bytes, then the four bytes together.
        var bytes = ((nibbles & 0x000F_000F_000F_000F) << 4) | ((nibbles >> 8) & 0x000F_000F_000F_000F)
        bytes = (bytes | bytes >> 8) & 0x0000_FFFF_0000_FFFF
        bytes = (bytes | bytes >> 16) & 0x0000_0000_FFFF_FFFF
        return bytes
    }

    /// Writes `uuid` as its `uuidString` (upper-case hex in 8-4-4-4-12 groups, 36 bytes) at `at`,
    /// without the `snprintf` that `uuidString` calls.
    @inline(__always)
    static func writeCanonical(_ uuid: UUID, at: UnsafeMutablePointer<UInt8>) {
        let pairs = hexPairs.utf8Start
        withUnsafeBytes(of: uuid.uuid) { bytes in
            @inline(__always) func put(_ byte: Int, _ position: Int) {
                let pair = Int(bytes[byte]) &* 2
                at[position] = pairs[pair]
                at[position + 1] = pairs[pair + 1]
            }
            put(0, 0); put(1, 2); put(2, 4); put(3, 6)
            at[8] = UInt8(ascii: "-")
            put(4, 9); put(5, 11)
            at[13] = UInt8(ascii: "-")
            put(6, 14); put(7, 16)
            at[18] = UInt8(ascii: "-")
            put(8, 19); put(9, 21)
            at[23] = UInt8(ascii: "-")
            put(10, 24); put(11, 26); put(12, 28); put(13, 30); put(14, 32); put(15, 34)
        }
    }

    /// Two upper-case hex digits for every byte, `00` to `FF`.
    private static var hexPairs: StaticString {
        "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFC0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF"
    }
}
