#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - GzipHeader

/// The RFC 1952 member header, as far as a decoder needs it.
///
/// Layout: `1f 8b` magic, CM (method, 8 = deflate), FLG, MTIME (4 bytes),
/// XFL, OS, then the optional fields selected by FLG in this order:
/// FEXTRA (2-byte little-endian length plus data), FNAME (zero-terminated),
/// FCOMMENT (zero-terminated), FHCRC (low 16 bits of the header's CRC-32).
///
/// MTIME, XFL and OS are informational and, as in every gzip decoder, not
/// validated: a damaged byte there is only detected when FHCRC is present.
struct GzipHeader: Equatable, Sendable {

    // MARK: - Constants

    /// Length of the fixed part of the header.
    static let fixedLength = 10

    /// Length of the CRC-32 + ISIZE trailer.
    static let trailerLength = 8

    /// The two magic bytes.
    static let magic: (UInt8, UInt8) = (0x1f, 0x8b)

    /// Compression method 8: deflate.
    static let deflateMethod: UInt8 = 8

    /// FLG bits.
    enum Flag {
        static let text: UInt8 = 0x01
        static let headerCRC: UInt8 = 0x02
        static let extra: UInt8 = 0x04
        static let name: UInt8 = 0x08
        static let comment: UInt8 = 0x10
        static let reserved: UInt8 = 0xE0
    }

    // MARK: - Parsed fields

    /// The FLG byte.
    let flags: UInt8

    /// Offset of the first deflate byte, i.e. the total header length.
    let length: Int

    /// Where the FEXTRA field's data lies (after its 2-byte length), when FLG has FEXTRA.
    var extra: Range<Int>? = nil

    // MARK: - Parsing

    /// Parses and validates the header at the start of `input`.
    ///
    /// Checks are made as early as the available bytes allow, so a short
    /// non-gzip input is reported as ``FileLayerError/badMagic(offset:found:)``
    /// rather than as truncated.
    ///
    /// - Throws: ``FileLayerError/badMagic(offset:found:)``,
    ///   ``FileLayerError/unsupportedMethod(_:)``,
    ///   ``FileLayerError/reservedFlags(offset:flags:)``,
    ///   ``FileLayerError/truncated(expectedAtLeast:actual:)`` when the input
    ///   ends inside the header, and
    ///   ``FileLayerError/headerCRCMismatch(expected:actual:)``.
    /// - Complexity: O(h) for a header of h bytes; zero terminators are found
    ///   with `memchr`.
    static func parse(_ input: UnsafeRawBufferPointer) throws(FileLayerError) -> GzipHeader {
        let count = input.count
        if count >= 1, input[0] != magic.0 || (count >= 2 && input[1] != magic.1) {
            throw .badMagic(offset: 0, found: Array(input.prefix(2)))
        }
        if count >= 3, input[2] != deflateMethod {
            throw .unsupportedMethod(Int(input[2]))
        }
        if count >= 4, input[3] & Flag.reserved != 0 {
            throw .reservedFlags(offset: 3, flags: input[3])
        }
        guard count >= fixedLength else {
            throw .truncated(expectedAtLeast: fixedLength, actual: count)
        }
        let flags = input[3]
        var position = fixedLength
        var extra: Range<Int>?

        if flags & Flag.extra != 0 {
            guard count >= position + 2 else {
                throw .truncated(expectedAtLeast: position + 2, actual: count)
            }
            let extraLength = Int(littleEndianUInt16(input, at: position))
            position += 2
            guard count >= position + extraLength else {
                throw .truncated(expectedAtLeast: position + extraLength, actual: count)
            }
            extra = position..<(position + extraLength)
            position += extraLength
        }
        if flags & Flag.name != 0 {
            position = try skipZeroTerminated(input, from: position)
        }
        if flags & Flag.comment != 0 {
            position = try skipZeroTerminated(input, from: position)
        }
        if flags & Flag.headerCRC != 0 {
            guard count >= position + 2 else {
                throw .truncated(expectedAtLeast: position + 2, actual: count)
            }
            let stored = littleEndianUInt16(input, at: position)
            let headerBytes = UnsafeRawBufferPointer(rebasing: input[0..<position])
            let computed = UInt16(truncatingIfNeeded: CRC32.checksum(headerBytes))
            guard stored == computed else {
                throw .headerCRCMismatch(expected: stored, actual: computed)
            }
            position += 2
        }
        return GzipHeader(flags: flags, length: position, extra: extra)
    }

    // MARK: - Little-endian readers

    /// The little-endian `UInt16` at `offset`.
    ///
    /// - Precondition: `offset + 2 <= bytes.count`.
    /// - Complexity: O(1).
    static func littleEndianUInt16(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    /// The little-endian `UInt32` at `offset`.
    ///
    /// - Precondition: `offset + 4 <= bytes.count`.
    /// - Complexity: O(1).
    static func littleEndianUInt32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    // MARK: - Private helpers

    /// Returns the offset just past the zero byte that ends the string at
    /// `start`.
    private static func skipZeroTerminated(
        _ input: UnsafeRawBufferPointer, from start: Int
    ) throws(FileLayerError) -> Int {
        let count = input.count
        guard start < count, let base = input.baseAddress,
              let zero = memchr(base + start, 0, count - start)
        else {
            throw .truncated(expectedAtLeast: max(start, count) + 1, actual: count)
        }
        return base.distance(to: UnsafeRawPointer(zero)) + 1
    }
}
