import CZlib
import Foundation

/// Decompresses a Core Data model cache: raw deflate (RFC 1951), as Core Data writes it, or
/// the same with a zlib wrapper (RFC 1950), which some tools write.
enum ModelCacheInflater {
    /// Why the bytes do not inflate.
    struct Failure: Error, Equatable {
        let reason: String
    }

    /// The decompressed bytes of `data`, at most `limit` of them.
    ///
    /// - Throws: ``Failure`` for data that is not deflate, ends before its last block, has
    ///   bytes after it, or inflates past `limit`.
    /// - Complexity: O(compressed + decompressed size).
    static func inflate(_ data: Data, limit: Int = 256 << 20) throws(Failure) -> Data {
        guard !data.isEmpty else { throw Failure(reason: "it is empty") }
        // Raw deflate can start with bytes that read as a zlib header; then try it as raw too.
        if hasZlibHeader(data), let wrapped = try? inflate(data, windowBits: 15, limit: limit) { return wrapped }
        return try inflate(data, windowBits: -15, limit: limit)
    }

    /// Whether `data` starts with a zlib header: deflate method, a window of at most 32 KiB and
    /// a check value that makes the first two bytes a multiple of 31.
    static func hasZlibHeader(_ data: Data) -> Bool {
        guard data.count >= 2 else { return false }
        let first = data[data.startIndex], second = data[data.startIndex + 1]
        return first & 0x0F == 8 && first >> 4 <= 7 && (UInt16(first) << 8 | UInt16(second)) % 31 == 0
    }

    // MARK: - Private

    private static func inflate(_ data: Data, windowBits: Int32, limit: Int) throws(Failure) -> Data {
        // zlib keeps a pointer back to the stream, so it needs a stable address.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        guard inflateInit2_(stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure(reason: "zlib could not start inflating")
        }
        defer { inflateEnd(stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let input = [UInt8](data)
        var code: Int32 = Z_OK
        input.withUnsafeBufferPointer { source in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress!)
            stream.pointee.avail_in = uInt(source.count)
            while code == Z_OK {
                chunk.withUnsafeMutableBufferPointer { target in
                    stream.pointee.next_out = target.baseAddress!
                    stream.pointee.avail_out = uInt(target.count)
                    code = CZlib.inflate(stream, Z_NO_FLUSH)
                    output.append(target.baseAddress!, count: target.count - Int(stream.pointee.avail_out))
                }
                if output.count > limit { return }
            }
        }
        if output.count > limit { throw Failure(reason: "it inflates to more than \(limit) bytes") }
        switch code {
        case Z_STREAM_END:
            guard stream.pointee.avail_in == 0 else { throw Failure(reason: "\(stream.pointee.avail_in) byte(s) follow the end of its deflate data") }
            return output
        case Z_BUF_ERROR, Z_OK:
            throw Failure(reason: "its deflate data is truncated (it ends after \(data.count) bytes, before the last block)")
        default:
            let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib code \(code)"
            throw Failure(reason: "it is not valid deflate data (\(message))")
        }
    }
}
