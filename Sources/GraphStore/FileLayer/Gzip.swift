import CZlib
import Foundation

// MARK: - Gzip

/// Whole-buffer gzip (RFC 1952) encoding and strict, bounded decoding for
/// snapshot files.
///
/// `compress` writes one standard gzip member that `gzip -d`, `zcat` and
/// Python's `gzip` module read (one compressed in parts lists its runs in the
/// header's extra field, which they skip: ``GzipRunTable``). `decompress`
/// accepts exactly **one** member: any byte after its trailer, including a
/// second concatenated member, is
/// rejected with ``FileLayerError/trailingGarbage(offset:)`` (GNU gzip would
/// also decode further members; snapshot files never contain them, so extra
/// bytes are treated as damage).
enum Gzip {

    // MARK: - Tuning

    /// Minimum growth step of an output buffer (and the first allocation when
    /// the trailer gives no usable size hint).
    static let chunkSize = 256 * 1024

    /// Largest slice of input or output handed to zlib in one call; zlib
    /// counts in 32-bit `uInt`, so slices are kept well below that.
    static let maxZlibSlice = 1 << 30

    /// Points zlib at the next slice of the input (bytes `fed..<count` of `base`, at most
    /// ``maxZlibSlice`` of them) once it has used up the previous one.
    static func feedNextSlice(_ z: UnsafeMutablePointer<z_stream>, from base: UnsafeRawPointer, count: Int, fed: inout Int) {
        guard z.pointee.avail_in == 0, fed < count else { return }
        let slice = min(count - fed, maxZlibSlice)
        z.pointee.next_in = UnsafeMutablePointer(mutating: (base + fed).assumingMemoryBound(to: Bytef.self))
        z.pointee.avail_in = uInt(slice)
        fed += slice
    }

    /// Deflate's maximum expansion ratio (1032:1), used to distrust an ISIZE
    /// hint that the compressed size cannot justify.
    static let maxDeflateRatio = 1032

    // MARK: - Detection

    /// Whether `data` starts with the gzip magic bytes `1f 8b`.
    ///
    /// Only the magic is checked, so a truncated or damaged gzip file is
    /// still recognised and then reported precisely by ``decompress(_:maxOutputBytes:)``
    /// instead of being parsed as some other format.
    ///
    /// - Complexity: O(1).
    static func isGzip(_ data: Data) -> Bool {
        data.starts(with: [GzipHeader.magic.0, GzipHeader.magic.1])
    }

    // MARK: - Compression

    /// Compresses `data` into a single gzip member.
    ///
    /// With `parts` above 1 and at least ``minimumPartBytes`` of input a part, the input is cut
    /// into that many consecutive runs, each deflated on its own thread: see
    /// ``compress(pieces:level:parts:)``. Otherwise the output buffer is sized with
    /// `deflateBound` up front, so the common case is one zlib call and no reallocation; the
    /// unused tail is returned to the allocator afterwards.
    ///
    /// - Parameters:
    ///   - data: The bytes to compress; may be empty.
    ///   - level: zlib level 0 (store) ... 9 (best); 6 is zlib's default.
    ///   - parts: How many threads may share the work (for example the active processor count).
    /// - Throws: ``FileLayerError/zlibFailure(function:code:message:)`` for an
    ///   invalid level or an internal zlib error, and
    ///   ``FileLayerError/outOfMemory(requestedBytes:)``.
    /// - Complexity: O(n) time, on up to `parts` threads; about `n` bytes of extra memory for
    ///   incompressible input (twice the output when compressing in parts).
    static func compress(_ data: Data, level: Int32 = 6, parts: Int = 1) throws(FileLayerError) -> Data {
        try compress(pieces: [data], level: level, parts: parts)
    }

    /// Compresses the concatenation of `pieces` into a single gzip member, without joining them
    /// (unless the whole is too small to be worth more than one thread).
    ///
    /// Each piece of at least twice ``minimumPartBytes`` is cut into up to `parts` consecutive
    /// runs of at least that size; every piece or run is deflated on its own thread, as `pigz`
    /// does: each but the last ends in a sync flush (an empty stored block, so the next starts
    /// on a byte boundary), and their CRC-32s are combined. The result is one standard member
    /// that any gzip reader reads; a run's matches only reach back within the run, so the file
    /// is a few bytes larger at each cut. One piece too small to cut is compressed as
    /// ``compress(_:level:parts:)`` does on one thread.
    ///
    /// - Throws: As ``compress(_:level:parts:)``.
    /// - Complexity: O(n) time, on up to `parts` threads.
    static func compress(pieces: [Data], level: Int32, parts: Int) throws(FileLayerError) -> Data {
        try compress(segments: pieces.map(GzipSegment.plain), level: level, parts: parts)
    }

    /// Compresses the concatenation of `segments` into a single gzip member, as
    /// ``compress(pieces:level:parts:)`` does for its pieces: plain segments are cut into runs
    /// and deflated on as many threads, runs deflated already (by the thread that encoded
    /// them) are joined as they are.
    ///
    /// - Throws: As ``compress(_:level:parts:)``.
    /// - Complexity: O(n) time for the plain segments' n bytes, on up to `parts` threads, and
    ///   O(m) to copy the deflated runs' m bytes into the member.
    static func compress(segments: [GzipSegment], level: Int32, parts: Int) throws(FileLayerError) -> Data {
        let pieces = segments.compactMap { segment -> Data? in
            if case .plain(let data) = segment { return data }
            return nil
        }
        // A document too small to cut (with nothing deflated yet) is not worth a run per piece
        // either.
        if pieces.count == segments.count, pieces.count > 1, parts < 2 || pieces.reduce(0, { $0 + $1.count }) < 2 * minimumPartBytes {
            return try compress(segments: [.plain(Data(concatenating: pieces))], level: level, parts: 1)
        }
        let runs = segments.flatMap { segment -> [GzipSegment] in
            guard case .plain(let piece) = segment else { return [segment] }
            let cuts = min(parts, piece.count / minimumPartBytes)
            guard cuts > 1 else { return piece.isEmpty && segments.count > 1 ? [] : [segment] }
            return (0..<cuts).map { cut in
                .plain(piece[(piece.startIndex + piece.count * cut / cuts)..<(piece.startIndex + piece.count * (cut + 1) / cuts)])
            }
        }
        if runs.count > 1 || pieces.count < segments.count { return try compressInRuns(runs, level: level) }
        let data = pieces.first ?? Data()
        let stream = try ZlibStream.gzipDeflater(level: level)
        let bound = Int(deflateBound(stream.pointer, uLong(data.count)))
        var output = try GrowableByteBuffer(capacity: bound)
        try data.withUnsafeBytesTyped { (input) throws(FileLayerError) in
            try deflateAll(input, stream: stream, into: &output, finish: true)
        }
        return output.takeData()
    }

    /// The least input a thread is given when compressing in parts: below it, handing the work
    /// over costs more than it saves.
    static let minimumPartBytes = 1 << 20

    /// `runs`, the plain ones deflated on as many threads, as one gzip member: the header zlib
    /// writes (MTIME 0, Unix) with a ``GzipRunTable`` of the runs in its extra field, the runs'
    /// raw deflate data, and a trailer with the combined CRC-32 and the length modulo 2^32. A
    /// member whose last run is deflated already ends in an empty final block.
    private static func compressInRuns(_ given: [GzipSegment], level: Int32) throws(FileLayerError) -> Data {
        // A last run deflated already ends in a sync flush: an empty run ends the stream.
        let runs: [GzipSegment]
        if case .deflated? = given.last { runs = given + [.plain(Data())] } else { runs = given }
        let compressed = try inJobs(runs.count, inParallel: true) { index in
            Result { () throws(FileLayerError) -> DeflatedRun in
                let run: Data
                switch runs[index] {
                case .deflated(let deflated): return deflated
                case .plain(let data): run = data
                }
                let stream = try ZlibStream.rawDeflater(level: level)
                // A sync flush adds an empty stored block (5 bytes) to what deflateBound allows.
                var output = try GrowableByteBuffer(capacity: Int(deflateBound(stream.pointer, uLong(run.count))) + 16)
                let crc = try run.withUnsafeBytesTyped { (input) throws(FileLayerError) -> UInt in
                    try deflateAll(input, stream: stream, into: &output, finish: index == runs.count - 1)
                    guard let base = input.baseAddress else { return 0 }
                    return UInt(crc32_z(0, base.assumingMemoryBound(to: Bytef.self), z_size_t(input.count)))
                }
                return DeflatedRun(body: output.takeData(), crc: crc, length: run.count)
            }
        }.map { result throws(FileLayerError) in try result.get() }
        // The header as zlib writes it (MTIME 0, Unix), with the table of the runs in its
        // extra field, so that a reader can inflate them on several threads (runs too small to
        // be worth a thread each are joined in one entry; a table of one entry is left out).
        let table = GzipRunTable(runs: compressed.map { GzipRunTable.Entry(compressed: $0.body.count, uncompressed: $0.length) })
        let listed = table.entries.count > 1
        let header: [UInt8] = [
            GzipHeader.magic.0, GzipHeader.magic.1, 8, listed ? GzipHeader.Flag.extra : 0, 0, 0, 0, 0,
            // XFL as zlib writes it: 2 for the slowest level, 4 for the fastest ones.
            level == 9 ? 2 : (level >= 0 && level < 2 ? 4 : 0),
            3,
        ] + (listed ? table.extraField : [])
        var crc: UInt = 0
        for part in compressed {
            crc = UInt(crc32_combine(uLong(crc), uLong(part.crc), .init(part.length)))
        }
        let length = compressed.reduce(0) { $0 + $1.length }
        var trailer = [UInt8](repeating: 0, count: GzipHeader.trailerLength)
        trailer.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: UInt32(truncatingIfNeeded: crc).littleEndian, toByteOffset: 0, as: UInt32.self)
            bytes.storeBytes(of: UInt32(truncatingIfNeeded: length).littleEndian, toByteOffset: 4, as: UInt32.self)
        }
        // Into a buffer whose allocation failure is an error, as the runs' own are.
        let pieces = [Data(header)] + compressed.map(\.body) + [Data(trailer)]
        var output = try GrowableByteBuffer(capacity: pieces.reduce(0) { $0 + $1.count })
        for piece in pieces {
            piece.withUnsafeBytes { bytes in
                output.unusedBytes.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            }
            output.commit(piece.count)
        }
        return output.takeData()
    }

    // MARK: - Decompression

    /// Decodes one gzip member, refusing to produce more than
    /// `maxOutputBytes` bytes.
    ///
    /// The header is validated (magic, method, reserved flags; FEXTRA, FNAME
    /// and FCOMMENT are skipped; FHCRC is verified), the deflate data is
    /// inflated into a buffer that never grows beyond `maxOutputBytes + 1`
    /// bytes, and the CRC-32 and ISIZE trailer are checked. A member whose
    /// header lists its runs (one this writer compressed in parts, see
    /// ``GzipRunTable``) is inflated on every processor, one part each, when
    /// the table checks out; otherwise, and for any part that does not inflate
    /// as the table says, in one pass.
    ///
    /// - Parameters:
    ///   - data: The complete compressed file.
    ///   - maxOutputBytes: The largest acceptable decompressed size.
    ///   - inParts: `false` inflates in one pass whatever the header lists, as a reader that
    ///     does not know the table does (the tests compare the two).
    /// - Precondition: `maxOutputBytes >= 0`.
    /// - Throws: A ``FileLayerError``: `.badMagic`, `.unsupportedMethod`,
    ///   `.reservedFlags`, `.headerCRCMismatch`, `.truncated` (input ends in
    ///   the header, the deflate data or the trailer), `.corruptDeflate`,
    ///   `.crcMismatch`, `.lengthMismatch`, `.trailingGarbage`,
    ///   `.decompressedSizeLimitExceeded`, `.outOfMemory` or `.zlibFailure`.
    /// - Complexity: O(n + m) time for n compressed and m decompressed bytes
    ///   (on up to `Processors.active` threads for a member with a table of its
    ///   runs, and twice over for a damaged one); at most `maxOutputBytes + 1`
    ///   bytes of output memory.
    static func decompress(_ data: Data, maxOutputBytes: Int, inParts: Bool = true) throws(FileLayerError) -> Data {
        precondition(maxOutputBytes >= 0, "maxOutputBytes must not be negative")
        return try data.withUnsafeBytesTyped { (input) throws(FileLayerError) in
            try decode(input, limit: maxOutputBytes, inParts: inParts)
        }
    }

    // MARK: - Private: deflate

    /// Deflates all of `input` into `output`: to the end of the stream when `finish`, else up to
    /// a sync flush (the output ends on a byte boundary, and more deflate data may follow).
    private static func deflateAll(
        _ input: UnsafeRawBufferPointer,
        stream: borrowing ZlibStream,
        into output: inout GrowableByteBuffer,
        finish: Bool
    ) throws(FileLayerError) {
        try deflate(input, stream: stream, into: &output, flush: finish ? Z_FINISH : Z_SYNC_FLUSH)
    }

    /// Deflates all of `input` into `output`, then flushes as `flush` says: `Z_FINISH` ends the
    /// stream, `Z_SYNC_FLUSH` ends the output on a byte boundary (more deflate data may follow),
    /// `Z_NO_FLUSH` returns once zlib has taken the input, which it may hold back in part for
    /// the next call.
    static func deflate(
        _ input: UnsafeRawBufferPointer,
        stream: borrowing ZlibStream,
        into output: inout GrowableByteBuffer,
        flush: Int32
    ) throws(FileLayerError) {
        let z = stream.pointer
        var fed = 0
        while true {
            if let base = input.baseAddress { feedNextSlice(z, from: base, count: input.count, fed: &fed) }
            let allFed = fed == input.count && z.pointee.avail_in == 0
            if allFed && flush == Z_NO_FLUSH { return }
            if output.unusedBytes.isEmpty {
                try output.grow(toCapacity: output.capacity + max(output.capacity, chunkSize))
            }
            let space = output.unusedBytes
            let offered = min(space.count, maxZlibSlice)
            z.pointee.next_out = space.baseAddress!.assumingMemoryBound(to: Bytef.self)
            z.pointee.avail_out = uInt(offered)
            let code = CZlib.deflate(z, allFed ? flush : Z_NO_FLUSH)
            output.commit(offered - Int(z.pointee.avail_out))
            switch code {
            case Z_STREAM_END:
                return
            case Z_OK where allFed && flush != Z_FINISH && z.pointee.avail_out > 0:
                return // The flush is complete: zlib had room left over.
            case Z_OK:
                continue
            case Z_BUF_ERROR where z.pointee.avail_out == 0:
                continue // Needs more output space; grown on the next pass.
            default:
                throw .zlibFailure(function: "deflate", code: code, message: stream.message(orCode: code))
            }
        }
    }

    // MARK: - Private: inflate

    private static func decode(_ input: UnsafeRawBufferPointer, limit: Int, inParts: Bool) throws(FileLayerError) -> Data {
        let header = try GzipHeader.parse(input)
        if inParts, let document = decodeInParts(input, header: header, limit: limit) { return document }
        let hardCap = limit == Int.max ? limit : limit + 1
        var output: GrowableByteBuffer
        do {
            output = try GrowableByteBuffer(capacity: min(initialCapacity(input, bodyStart: header.length), hardCap))
        } catch {
            // The size the trailer claims may be damage (a flipped bit asking for gigabytes):
            // start small, so that only data that really is that large runs out of memory.
            output = try GrowableByteBuffer(capacity: min(chunkSize, hardCap))
        }
        let stream = try ZlibStream.rawInflater()
        let (crc, bodyEnd) = try inflateBody(
            input, from: header.length, stream: stream, into: &output, limit: limit, hardCap: hardCap)
        try verifyTrailer(input, at: bodyEnd, crc: crc, length: output.count)
        return output.takeData()
    }

    /// First output allocation: the trailer's ISIZE (+1 so the end of the
    /// stream fits without a regrow) when plausible for the compressed size,
    /// else one chunk.
    private static func initialCapacity(_ input: UnsafeRawBufferPointer, bodyStart: Int) -> Int {
        let bodyAndTrailer = input.count - bodyStart
        guard bodyAndTrailer >= GzipHeader.trailerLength else { return chunkSize }
        let hint = Int(GzipHeader.littleEndianUInt32(input, at: input.count - 4))
        let plausible = bodyAndTrailer.multipliedReportingOverflow(by: maxDeflateRatio)
        let ceiling = plausible.overflow ? Int.max : plausible.partialValue + chunkSize
        return max(min(hint + 1, ceiling), 64)
    }

    /// Inflates the deflate body; returns the output's CRC-32 and the offset
    /// just past the deflate data.
    private static func inflateBody(
        _ input: UnsafeRawBufferPointer,
        from bodyStart: Int,
        stream: borrowing ZlibStream,
        into output: inout GrowableByteBuffer,
        limit: Int,
        hardCap: Int
    ) throws(FileLayerError) -> (crc: UInt32, end: Int) {
        let z = stream.pointer
        let base = input.baseAddress!  // Non-nil: the header parsed, so count >= 10.
        var fed = bodyStart
        var crc: UInt32 = 0
        while true {
            feedNextSlice(z, from: base, count: input.count, fed: &fed)
            if output.unusedBytes.isEmpty {
                guard output.capacity < hardCap else { throw .decompressedSizeLimitExceeded(limit: limit) }
                let grown = output.capacity + max(output.capacity, chunkSize)
                try output.grow(toCapacity: min(grown, hardCap))
            }
            let space = output.unusedBytes
            let offered = min(space.count, maxZlibSlice)
            z.pointee.next_out = space.baseAddress!.assumingMemoryBound(to: Bytef.self)
            z.pointee.avail_out = uInt(offered)
            let code = inflate(z, Z_NO_FLUSH)
            let produced = offered - Int(z.pointee.avail_out)
            crc = CRC32.checksum(UnsafeRawBufferPointer(start: space.baseAddress, count: produced), continuing: crc)
            output.commit(produced)
            if output.count > limit { throw .decompressedSizeLimitExceeded(limit: limit) }
            let consumed = fed - Int(z.pointee.avail_in)
            switch code {
            case Z_STREAM_END:
                return (crc, consumed)
            case Z_OK:
                continue
            case Z_BUF_ERROR where z.pointee.avail_out == 0:
                continue  // Output full; grown (or rejected) on the next pass.
            case Z_BUF_ERROR where consumed == input.count:
                // All input consumed without reaching the end of the stream:
                // at least one more deflate byte and the trailer are missing.
                throw .truncated(expectedAtLeast: input.count + 1 + GzipHeader.trailerLength, actual: input.count)
            case Z_DATA_ERROR, Z_NEED_DICT, Z_BUF_ERROR:
                throw .corruptDeflate(offset: consumed, zlibMessage: stream.message(orCode: code))
            default:
                throw .zlibFailure(function: "inflate", code: code, message: stream.message(orCode: code))
            }
        }
    }

    /// Checks the CRC-32 and ISIZE trailer at `offset` and that nothing
    /// follows it.
    private static func verifyTrailer(
        _ input: UnsafeRawBufferPointer, at offset: Int, crc: UInt32, length: Int
    ) throws(FileLayerError) {
        let end = offset + GzipHeader.trailerLength
        guard input.count >= end else {
            throw .truncated(expectedAtLeast: end, actual: input.count)
        }
        let storedCRC = GzipHeader.littleEndianUInt32(input, at: offset)
        guard storedCRC == crc else {
            throw .crcMismatch(expected: storedCRC, actual: crc)
        }
        let storedLength = GzipHeader.littleEndianUInt32(input, at: offset + 4)
        let actualLength = UInt32(truncatingIfNeeded: length)
        guard storedLength == actualLength else {
            throw .lengthMismatch(expected: storedLength, actual: actualLength)
        }
        guard input.count == end else {
            throw .trailingGarbage(offset: end)
        }
    }
}
