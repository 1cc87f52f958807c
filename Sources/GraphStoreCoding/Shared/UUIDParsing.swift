import Foundation

/// UUIDs read from their canonical text without making a `String`: the fast path of both
/// decoders, which leave any other text to `UUID(uuidString:)`.
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
}
