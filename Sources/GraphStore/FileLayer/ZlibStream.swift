import Foundation
import CZlib

// MARK: - ZlibStream

/// Owns one zlib `z_stream` for deflating or inflating and ends it on deinit.
///
/// zlib keeps a back pointer from its internal state to the `z_stream`, so the
/// stream lives in its own heap allocation with a stable address.
struct ZlibStream: ~Copyable {

    // MARK: - Kind

    /// Which zlib engine the stream was initialised for.
    enum Kind {
        case deflate
        case inflate
    }

    // MARK: - State

    /// The zlib stream; stable for the lifetime of this value.
    let pointer: UnsafeMutablePointer<z_stream>

    /// The engine, which decides the matching `*End` call.
    let kind: Kind

    private init(pointer: UnsafeMutablePointer<z_stream>, kind: Kind) {
        self.pointer = pointer
        self.kind = kind
    }

    deinit {
        switch kind {
        case .deflate: deflateEnd(pointer)
        case .inflate: inflateEnd(pointer)
        }
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    // MARK: - Factories

    /// A deflater that writes a complete RFC 1952 gzip member (header with
    /// MTIME 0, deflate data, CRC-32 and ISIZE trailer).
    ///
    /// - Parameter level: zlib compression level, 0...9 (or -1 for default).
    /// - Throws: ``FileLayerError/zlibFailure(function:code:message:)`` for an
    ///   invalid level or when zlib cannot allocate its state.
    /// - Complexity: O(1); allocates roughly 256 KiB of zlib state.
    static func gzipDeflater(level: Int32) throws(FileLayerError) -> ZlibStream {
        let pointer = allocateStream()
        // windowBits 15 + 16 selects the gzip wrapper; memLevel 8 is zlib's default.
        let code = deflateInit2_(
            pointer, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard code == Z_OK else {
            throw failInitialisation(pointer, function: "deflateInit2", code: code)
        }
        return ZlibStream(pointer: pointer, kind: .deflate)
    }

    /// A deflater that writes raw deflate data (no zlib or gzip wrapper), for a run of a
    /// member compressed in parts; the caller writes the gzip header and trailer.
    ///
    /// - Parameter level: zlib compression level, 0...9 (or -1 for default).
    /// - Throws: ``FileLayerError/zlibFailure(function:code:message:)`` for an
    ///   invalid level or when zlib cannot allocate its state.
    /// - Complexity: O(1); allocates roughly 256 KiB of zlib state.
    static func rawDeflater(level: Int32) throws(FileLayerError) -> ZlibStream {
        let pointer = allocateStream()
        let code = deflateInit2_(
            pointer, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard code == Z_OK else {
            throw failInitialisation(pointer, function: "deflateInit2", code: code)
        }
        return ZlibStream(pointer: pointer, kind: .deflate)
    }

    /// An inflater for raw deflate data (no zlib or gzip wrapper); the gzip
    /// header and trailer are parsed by the caller.
    ///
    /// - Throws: ``FileLayerError/zlibFailure(function:code:message:)`` when
    ///   zlib cannot allocate its state.
    /// - Complexity: O(1); allocates roughly 40 KiB of zlib state.
    static func rawInflater() throws(FileLayerError) -> ZlibStream {
        let pointer = allocateStream()
        let code = inflateInit2_(pointer, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard code == Z_OK else {
            throw failInitialisation(pointer, function: "inflateInit2", code: code)
        }
        return ZlibStream(pointer: pointer, kind: .inflate)
    }

    // MARK: - Diagnostics

    /// zlib's message for the last error, or a generic text for `code`.
    ///
    /// - Complexity: O(length of the message).
    func message(orCode code: Int32) -> String {
        if let text = pointer.pointee.msg {
            return String(cString: text)
        }
        return Self.describe(code)
    }

    /// The name of a zlib return code.
    ///
    /// - Complexity: O(1).
    static func describe(_ code: Int32) -> String {
        switch code {
        case Z_OK: "Z_OK"
        case Z_STREAM_END: "Z_STREAM_END"
        case Z_NEED_DICT: "Z_NEED_DICT"
        case Z_ERRNO: "Z_ERRNO"
        case Z_STREAM_ERROR: "Z_STREAM_ERROR"
        case Z_DATA_ERROR: "Z_DATA_ERROR"
        case Z_MEM_ERROR: "Z_MEM_ERROR"
        case Z_BUF_ERROR: "Z_BUF_ERROR"
        case Z_VERSION_ERROR: "Z_VERSION_ERROR"
        default: "zlib code \(code)"
        }
    }

    // MARK: - Private helpers

    private static func allocateStream() -> UnsafeMutablePointer<z_stream> {
        let pointer = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        // All-zero fields select zlib's default allocator.
        pointer.initialize(to: z_stream())
        return pointer
    }

    private static func failInitialisation(
        _ pointer: UnsafeMutablePointer<z_stream>, function: String, code: Int32
    ) -> FileLayerError {
        let message = pointer.pointee.msg.map { String(cString: $0) } ?? describe(code)
        pointer.deinitialize(count: 1)
        pointer.deallocate()
        return .zlibFailure(function: function, code: code, message: message)
    }
}

// MARK: - CRC32

/// CRC-32 (ISO 3309, as used by gzip) computed by zlib.
enum CRC32 {
    /// The CRC-32 of `bytes`, continuing from `crc` (0 for a fresh checksum).
    ///
    /// - Complexity: O(n); zlib processes several bytes per step.
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard var base = bytes.baseAddress?.assumingMemoryBound(to: Bytef.self) else { return crc }
        var value = uLong(crc)
        var remaining = bytes.count
        while remaining > 0 {
            let step = min(remaining, 1 << 30)
            value = crc32(value, base, uInt(step))
            base += step
            remaining -= step
        }
        return UInt32(truncatingIfNeeded: value)
    }

    /// The CRC-32 of `data`.
    ///
    /// - Complexity: O(n).
    static func checksum(_ data: some DataProtocol) -> UInt32 {
        var crc: UInt32 = 0
        for region in data.regions {
            crc = region.withUnsafeBytes { checksum($0, continuing: crc) }
        }
        return crc
    }
}
