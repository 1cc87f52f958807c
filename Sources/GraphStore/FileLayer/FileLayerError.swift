#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - FileLayerError

/// A failure in the low-level file layer of the snapshot-file backend:
/// gzip encoding and decoding, atomic file replacement, reading and locking.
///
/// Every case carries enough context to say *where* things went wrong.
/// Byte offsets are offsets into the **compressed** input, counted from its
/// first byte. The store maps these errors into its public error type.
enum FileLayerError: Error, Sendable, Equatable {

    // MARK: Gzip container

    /// The input ended too early: at least `expectedAtLeast` bytes were needed
    /// to finish the header, the deflate stream or the trailer, but the input
    /// is only `actual` bytes long. `actual` is therefore the offset at which
    /// the input ran out. For a cut inside the deflate stream the lower bound
    /// counts one more compressed byte plus the 8-byte trailer.
    case truncated(expectedAtLeast: Int, actual: Int)

    /// The bytes at `offset` are not the gzip magic number `1f 8b`;
    /// `found` holds the (up to two) bytes that were there instead.
    case badMagic(offset: Int, found: [UInt8])

    /// The header names a compression method other than 8 (deflate).
    case unsupportedMethod(Int)

    /// The header flag byte at `offset` has one of the reserved bits
    /// (`0xE0`) set, which RFC 1952 requires decoders to reject.
    case reservedFlags(offset: Int, flags: UInt8)

    /// The header carries a CRC-16 (`FHCRC`) that does not match the header.
    case headerCRCMismatch(expected: UInt16, actual: UInt16)

    /// zlib rejected the deflate data; `offset` is how far into the file
    /// zlib had read when it detected the problem.
    case corruptDeflate(offset: Int, zlibMessage: String)

    /// The CRC-32 in the trailer (`expected`) differs from the CRC-32 of the
    /// decompressed bytes (`actual`).
    case crcMismatch(expected: UInt32, actual: UInt32)

    /// The ISIZE field of the trailer (`expected`, the length modulo 2^32)
    /// differs from the decompressed length modulo 2^32 (`actual`).
    case lengthMismatch(expected: UInt32, actual: UInt32)

    /// Bytes follow the end of the single gzip member, starting at `offset`.
    /// Concatenated members are rejected too: snapshot files hold one member.
    case trailingGarbage(offset: Int)

    /// Decompressing would produce more than `limit` bytes; decoding stopped
    /// before allocating more than the limit plus one chunk.
    case decompressedSizeLimitExceeded(limit: Int)

    /// An output buffer of `requestedBytes` bytes could not be allocated.
    case outOfMemory(requestedBytes: Int)

    /// zlib failed for a reason unrelated to the input data (for example it
    /// could not allocate memory, or was given an invalid compression level).
    case zlibFailure(function: String, code: Int32, message: String)

    // MARK: Files

    /// A system call failed. `operation` names the step (for example
    /// `"write"` or `"rename"`), `path` the file the caller asked for,
    /// `errno` the raw error number and `message` its `strerror` text.
    case io(operation: String, path: String, errno: Int32, message: String)

    /// The lock file at `path` is held by another open file description:
    /// another store in this process, or another process.
    case locked(path: String)
}

// MARK: - Construction helpers

extension FileLayerError {
    /// Builds an ``io(operation:path:errno:message:)`` error, filling in the
    /// `strerror` message for `errno`.
    ///
    /// - Complexity: O(1).
    static func io(_ operation: String, path: String, errno code: Int32) -> FileLayerError {
        .io(operation: operation, path: path, errno: code, message: systemErrorMessage(code))
    }
}

/// The `strerror` text for an errno value.
///
/// - Complexity: O(1).
func systemErrorMessage(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
}

/// The symbolic name of common errno values (`"ENOSPC"`), or `nil`.
///
/// - Complexity: O(1).
func systemErrorName(_ code: Int32) -> String? {
    switch code {
    case EPERM: "EPERM"
    case ENOENT: "ENOENT"
    case EINTR: "EINTR"
    case EIO: "EIO"
    case EBADF: "EBADF"
    case EAGAIN: "EAGAIN"
    case ENOMEM: "ENOMEM"
    case EACCES: "EACCES"
    case EBUSY: "EBUSY"
    case EEXIST: "EEXIST"
    case EXDEV: "EXDEV"
    case ENOTDIR: "ENOTDIR"
    case EISDIR: "EISDIR"
    case EINVAL: "EINVAL"
    case EMFILE: "EMFILE"
    case EFBIG: "EFBIG"
    case ENOSPC: "ENOSPC"
    case EROFS: "EROFS"
    case ENAMETOOLONG: "ENAMETOOLONG"
    case EDQUOT: "EDQUOT"
    default: nil
    }
}

// MARK: - CustomStringConvertible

extension FileLayerError: CustomStringConvertible {
    var description: String {
        switch self {
        case let .truncated(expectedAtLeast, actual):
            return "gzip data is truncated: input ends at byte \(actual), "
                + "but at least \(expectedAtLeast) bytes are needed"
        case let .badMagic(offset, found):
            let hex = found.map { String($0, radix: 16) }.joined(separator: " ")
            return "not gzip data: expected magic 1f 8b at byte \(offset), found [\(hex)]"
        case let .unsupportedMethod(method):
            return "unsupported gzip compression method \(method) (only 8, deflate, is supported)"
        case let .reservedFlags(offset, flags):
            return "gzip header flag byte at \(offset) has reserved bits set (0x\(String(flags, radix: 16)))"
        case let .headerCRCMismatch(expected, actual):
            return "gzip header CRC-16 mismatch: header says \(expected), computed \(actual)"
        case let .corruptDeflate(offset, zlibMessage):
            return "corrupt deflate data near byte \(offset): \(zlibMessage)"
        case let .crcMismatch(expected, actual):
            return "gzip CRC-32 mismatch: trailer says 0x\(String(expected, radix: 16)), "
                + "data has 0x\(String(actual, radix: 16))"
        case let .lengthMismatch(expected, actual):
            return "gzip length mismatch: trailer says \(expected) bytes (mod 2^32), "
                + "data has \(actual)"
        case let .trailingGarbage(offset):
            return "unexpected bytes after the end of the gzip data, starting at byte \(offset)"
        case let .decompressedSizeLimitExceeded(limit):
            return "decompressed data would exceed the limit of \(limit) bytes"
        case let .outOfMemory(requestedBytes):
            return "could not allocate a buffer of \(requestedBytes) bytes"
        case let .zlibFailure(function, code, message):
            return "zlib \(function) failed with code \(code): \(message)"
        case let .io(operation, path, code, message):
            let name = systemErrorName(code).map { "\($0), " } ?? ""
            return "\(operation) failed for '\(path)': \(message) (\(name)errno \(code))"
        case let .locked(path):
            return "'\(path)' is locked by another store or process"
        }
    }
}
