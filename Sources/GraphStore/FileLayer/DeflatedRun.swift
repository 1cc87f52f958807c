import CZlib
import Foundation

/// Raw deflate data ending on a byte boundary (a sync flush), with the CRC-32 and the length
/// of the bytes it holds: one of the runs ``Gzip/compress(segments:level:parts:)`` joins into
/// one gzip member, as `pigz` joins its threads' runs.
struct DeflatedRun: Sendable {
    var body: Data
    var crc: UInt
    var length: Int
}

/// A piece of a document on its way into one gzip member: bytes still to compress, or a run
/// deflated already (by the thread that encoded its bytes, while they were in its cache).
enum GzipSegment: Sendable {
    case plain(Data)
    case deflated(DeflatedRun)

    /// The bytes of a plain segment, from an encoding asked to deflate nothing (a deflated run
    /// there is a programming error).
    var plainData: Data {
        guard case .plain(let data) = self else { preconditionFailure("GraphStore: a deflated run where nothing was to be deflated") }
        return data
    }
}

/// Deflates bytes given a chunk at a time into one ``DeflatedRun``, for an encoder that
/// reuses one small buffer instead of keeping its whole output: the bytes are compressed
/// while they are still in the processor's cache, and no buffer of the whole document's text
/// is ever made (or its pages faulted in).
struct RunDeflater: ~Copyable {
    private let stream: ZlibStream
    private var output: GrowableByteBuffer
    private var crc: uLong = 0
    private var length = 0

    /// A deflater at zlib `level`, whose output buffer starts at a guess for `expectedBytes` of
    /// input (it grows as needed).
    ///
    /// - Throws: ``FileLayerError/zlibFailure(function:code:message:)``,
    ///   ``FileLayerError/outOfMemory(requestedBytes:)``.
    init(level: Int32, expectedBytes: Int) throws(FileLayerError) {
        let output = try GrowableByteBuffer(capacity: max(expectedBytes / 4, Gzip.chunkSize))
        stream = try ZlibStream.rawDeflater(level: level)
        self.output = output
    }

    /// Deflates `bytes`, which follow the bytes given before.
    ///
    /// - Throws: As ``init(level:expectedBytes:)``.
    /// - Complexity: O(`bytes.count`).
    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(FileLayerError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        crc = crc32_z(crc, base.assumingMemoryBound(to: Bytef.self), z_size_t(bytes.count))
        length += bytes.count
        try Gzip.deflate(bytes, stream: stream, into: &output, flush: Z_NO_FLUSH)
    }

    /// The run: everything given, flushed to a byte boundary.
    ///
    /// - Throws: As ``init(level:expectedBytes:)``.
    consuming func finish() throws(FileLayerError) -> DeflatedRun {
        try Gzip.deflate(UnsafeRawBufferPointer(start: nil, count: 0), stream: stream, into: &output, flush: Z_SYNC_FLUSH)
        return DeflatedRun(body: output.takeData(), crc: UInt(crc), length: length)
    }
}
