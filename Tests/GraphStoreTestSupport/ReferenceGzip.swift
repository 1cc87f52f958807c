import CZlib
import Foundation

/// zlib's own gzip reader, used by tests as the outside reference for what a gzip file holds.
public enum ReferenceGzip {
    /// The bytes the single gzip member `file` holds, as zlib's `inflate` reads them with its
    /// gzip wrapper (header, CRC-32 and ISIZE checked); `nil` when zlib refuses the file or
    /// bytes follow the member.
    public static func inflate(_ file: Data) -> Data? {
        withZlibStream(ending: { inflateEnd($0) }) { stream in inflate(file, with: stream) }
    }

    private static func inflate(_ file: Data, with stream: UnsafeMutablePointer<z_stream>) -> Data? {
        guard inflateInit2_(stream, 16 + 15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        var input = [UInt8](file)
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let finished: Bool = input.withUnsafeMutableBufferPointer { source in
            stream.pointee.next_in = source.baseAddress
            stream.pointee.avail_in = uInt(source.count)
            while true {
                let (code, produced) = chunk.withUnsafeMutableBufferPointer { target in
                    stream.pointee.next_out = target.baseAddress
                    stream.pointee.avail_out = uInt(target.count)
                    let code = CZlib.inflate(stream, Z_NO_FLUSH)
                    return (code, target.count - Int(stream.pointee.avail_out))
                }
                output.append(contentsOf: chunk.prefix(produced))
                if code == Z_STREAM_END { return stream.pointee.avail_in == 0 }
                if code != Z_OK { return false }
            }
        }
        return finished ? output : nil
    }
}

/// Runs `body` with a zlib stream at a stable address (zlib keeps a pointer back to it), and
/// ends it with `end` afterwards.
func withZlibStream<Result>(
    ending end: (UnsafeMutablePointer<z_stream>) -> Int32, _ body: (UnsafeMutablePointer<z_stream>) -> Result
) -> Result {
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    defer {
        _ = end(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }
    return body(stream)
}
