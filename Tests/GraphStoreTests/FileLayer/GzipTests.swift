import CZlib
import Foundation
import Testing

@testable import GraphStore
import GraphStoreTestSupport

// MARK: - Round trips and interoperability

@Suite("Gzip round trips, interoperability and bounds")
struct GzipTests {

    static let unlimited = 1 << 40

    // MARK: - Round trips

    @Test("Empty input round-trips and is a valid gzip member")
    func emptyRoundTrip() throws {
        let compressed = try Gzip.compress(Data())
        #expect(Gzip.isGzip(compressed))
        #expect(compressed.count == 20)  // 10-byte header, 2-byte empty block, 8-byte trailer.
        #expect(try Gzip.decompress(compressed, maxOutputBytes: 0) == Data())
    }

    @Test("Small input round-trips at every level")
    func smallRoundTrip() throws {
        let data = Data("Hello, GraphStore! Hello, GraphStore! 🚀".utf8)
        for level: Int32 in 0...9 {
            let compressed = try Gzip.compress(data, level: level)
            #expect(try Gzip.decompress(compressed, maxOutputBytes: data.count) == data)
        }
    }

    @Test("5 MB of random and of compressible data round-trip")
    func largeRoundTrip() throws {
        let random = SplitMix64.bytes(5_000_000)
        let compressedRandom = try Gzip.compress(random)
        #expect(try Gzip.decompress(compressedRandom, maxOutputBytes: random.count) == random)

        let text = FileLayerFixtures.compressibleText(atLeast: 5_000_000)
        let compressedText = try Gzip.compress(text)
        #expect(compressedText.count < text.count / 5)
        #expect(try Gzip.decompress(compressedText, maxOutputBytes: text.count) == text)
    }

    @Test("Compressed in parts, one member holds every byte, for 2, 3 and 7 parts", arguments: [2, 3, 7])
    func partsRoundTrip(parts: Int) throws {
        // Not a multiple of the part count, with random runs between compressible ones, so that
        // each cut falls inside a run of either kind and the CRC-32s of unequal runs combine.
        let data = FileLayerFixtures.compressibleText(atLeast: 3 * Gzip.minimumPartBytes) + SplitMix64.bytes(Gzip.minimumPartBytes + 13)
            + FileLayerFixtures.compressibleText(atLeast: 4 * Gzip.minimumPartBytes)
        let whole = try Gzip.compress(data, level: 1)
        let inParts = try Gzip.compress(data, level: 1, parts: parts)
        #expect(inParts != whole, "the input was cut into parts")
        // Each cut costs an empty stored block and a restarted window: a few bytes, not more.
        #expect(inParts.count < whole.count + parts * 2_048)
        #expect(Self.fixedHeaderWithoutTable(inParts) == whole.prefix(10), "the same header as zlib writes, with a table of the runs")
        #expect(try Gzip.decompress(inParts, maxOutputBytes: data.count) == data)
    }

    @Test("Pieces are compressed as one member of their concatenation, empty ones and small ones too")
    func piecesRoundTrip() throws {
        let large = FileLayerFixtures.compressibleText(atLeast: 3 * Gzip.minimumPartBytes)
        let pieces = [Data("{\"header\":1,".utf8), Data(), large, SplitMix64.bytes(70_000), Data("]}".utf8)]
        let joined = pieces.reduce(Data(), +)
        let compressed = try Gzip.compress(pieces: pieces, level: 1, parts: 3)
        #expect(try Gzip.decompress(compressed, maxOutputBytes: joined.count) == joined)
        // One piece that is not cut is what the one-thread compressor writes.
        #expect(try Gzip.compress(pieces: [pieces[3]], level: 1, parts: 3) == (try Gzip.compress(pieces[3], level: 1)))
        #expect(try Gzip.decompress(try Gzip.compress(pieces: [Data(), Data()], level: 1, parts: 2), maxOutputBytes: 0) == Data())
    }

    /// Runs a thread deflated a chunk at a time, as the JSON writer's threads do, join plain
    /// pieces into one member: between them, first, last (the member then ends in an empty
    /// final block), and empty. Python's `gzip` reads the file as the app does.
    @Test("Runs deflated chunk by chunk join plain pieces into one member")
    func deflatedRunsJoinPlainPieces() async throws {
        let text = FileLayerFixtures.compressibleText(atLeast: 3 * Gzip.minimumPartBytes)
        let noise = SplitMix64.bytes(300_000)
        let chunks = [text.prefix(100_000), noise, text.suffix(from: text.startIndex + 100_000), Data(), Data("x".utf8)].map { Data($0) }
        let all = chunks.reduce(Data(), +)
        let header = Data("{\"header\":1,".utf8), closing = Data("]}".utf8)
        var layouts: [(segments: [GzipSegment], text: Data)] = []
        layouts.append(([.plain(header), try Self.deflated(chunks), .plain(closing)], header + all + closing))
        layouts.append(([try Self.deflated(chunks), .plain(text)], all + text))
        layouts.append(([.plain(noise), try Self.deflated(chunks)], noise + all))
        layouts.append(([try Self.deflated([]), try Self.deflated(chunks), try Self.deflated([closing])], all + closing))
        layouts.append(([try Self.deflated([])], Data()))
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for (number, layout) in layouts.enumerated() {
            let compressed = try Gzip.compress(segments: layout.segments, level: 1, parts: 2)
            #expect(try Gzip.decompress(compressed, maxOutputBytes: layout.text.count) == layout.text, "layout \(number)")
            let url = directory.file("layout-\(number).gz")
            try compressed.write(to: url)
            #expect(try await FileLayerFixtures.pythonGunzip(url) == layout.text, "layout \(number), read by Python")
        }
    }

    /// `chunks` given one by one to a ``RunDeflater``, as a deflated segment.
    private static func deflated(_ chunks: [Data]) throws -> GzipSegment {
        var deflater = try RunDeflater(level: 1, expectedBytes: chunks.reduce(0) { $0 + $1.count })
        for chunk in chunks {
            let bytes = [UInt8](chunk)
            try bytes.withUnsafeBytes { try deflater.append($0) }
        }
        return .deflated(try deflater.finish())
    }

    @Test("Input too small for a part a thread is compressed in one run")
    func smallInputIsNotCut() throws {
        let data = FileLayerFixtures.compressibleText(atLeast: Gzip.minimumPartBytes + 1).prefix(2 * Gzip.minimumPartBytes - 1)
        #expect(try Gzip.compress(data, parts: 8) == (try Gzip.compress(data)))
    }

    @Test("A Data slice with a non-zero start index is handled")
    func sliceInput() throws {
        let text = FileLayerFixtures.compressibleText(atLeast: 10_000)
        let padded = Data([0xAA, 0xBB, 0xCC]) + (try Gzip.compress(text))
        let slice = padded.dropFirst(3)
        #expect(slice.startIndex == 3)
        #expect(Gzip.isGzip(slice))
        #expect(try Gzip.decompress(slice, maxOutputBytes: Self.unlimited) == text)
    }

    @Test("An invalid compression level is a zlib failure")
    func invalidLevel() {
        let error = #expect(throws: FileLayerError.self) { try Gzip.compress(Data([1, 2, 3]), level: 42) }
        guard case .zlibFailure(let function, let code, _) = error else {
            Issue.record("expected zlibFailure, got \(String(describing: error))")
            return
        }
        #expect(function == "deflateInit2")
        #expect(code == Z_STREAM_ERROR)
    }

    // MARK: - Interoperability

    @Test("Python's gzip module and gzip -d read our output")
    func standardToolsReadOurOutput() async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let inputs = [
            Data(),
            Data("small".utf8),
            SplitMix64.bytes(5_000_000),
            FileLayerFixtures.compressibleText(atLeast: 5_000_000),
        ]
        let partsInput = FileLayerFixtures.compressibleText(atLeast: 5 * Gzip.minimumPartBytes) + SplitMix64.bytes(100_000)
        for (index, (data, parts)) in (inputs.map { ($0, 1) } + [(partsInput, 5)]).enumerated() {
            let file = scratch.file("out-\(index).gz")
            try Gzip.compress(data, parts: parts).write(to: file)
            #expect(try await FileLayerFixtures.pythonGunzip(file) == data, "python, input \(index)")
            let gunzip = try await runCommand(["gzip", "-dc", file.path])
            #expect(gunzip.status == 0)
            #expect(gunzip.output == data, "gzip -dc, input \(index)")
        }
    }

    @Test("Files made by Python and by gzip (with FNAME) decompress to the same bytes")
    func weReadStandardToolsOutput() async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let original = FileLayerFixtures.compressibleText(atLeast: 300_000)
            + SplitMix64.bytes(100_000)
        let source = scratch.file("snapshot.json")
        try original.write(to: source)

        let pythonFile = scratch.file("python.gz")
        let script = #"import gzip,sys; open(sys.argv[2],"wb").write(gzip.compress(open(sys.argv[1],"rb").read(), 9))"#
        #expect(try await runPython(script, [source.path, pythonFile.path]).status == 0)
        let fromPython = try Data(contentsOf: pythonFile)
        #expect(try Gzip.decompress(fromPython, maxOutputBytes: original.count) == original)

        let fromGzip = try await runCommand(["gzip", "-c", "-N", source.path])
        #expect(fromGzip.status == 0)
        let gzipped = fromGzip.output
        #expect(gzipped.count > 3 && gzipped[gzipped.startIndex + 3] & GzipHeader.Flag.name != 0)
        #expect(try Gzip.decompress(gzipped, maxOutputBytes: original.count) == original)
    }

    // MARK: - Output bound

    @Test("The size limit is inclusive")
    func limitIsInclusive() throws {
        let data = FileLayerFixtures.compressibleText(atLeast: 1_000_000)
        let compressed = try Gzip.compress(data)
        #expect(try Gzip.decompress(compressed, maxOutputBytes: data.count) == data)
        #expect(throws: FileLayerError.decompressedSizeLimitExceeded(limit: data.count - 1)) {
            try Gzip.decompress(compressed, maxOutputBytes: data.count - 1)
        }
    }

    @Test("The bomb construction is valid gzip (32 MiB of zeros)")
    func bombConstructionIsValid() throws {
        let bomb = try Self.zeroBomb(mebibytes: 32)
        let output = try Gzip.decompress(bomb, maxOutputBytes: 32 << 20)
        #expect(output.count == 32 << 20)
        #expect(output.allSatisfy { $0 == 0 })
    }

    @Test("A 1 GiB gzip bomb hits a 16 MiB limit")
    func gzipBombIsRejected() throws {
        let bomb = try Self.zeroBomb(mebibytes: 1024)
        #expect(bomb.count < 2 << 20)
        #expect(throws: FileLayerError.decompressedSizeLimitExceeded(limit: 16 << 20)) {
            try Gzip.decompress(bomb, maxOutputBytes: 16 << 20)
        }
    }

    // MARK: - Helpers

    /// The fixed header of a member compressed in parts, without the FEXTRA flag its table of
    /// runs sets: what zlib writes for the same level.
    static func fixedHeaderWithoutTable(_ member: Data) -> Data {
        var header = member.prefix(GzipHeader.fixedLength)
        header[header.startIndex + 3] &= ~GzipHeader.Flag.extra
        return header
    }

    /// A gzip member holding `mebibytes` MiB of zeros, built without
    /// compressing them all: one full-flushed deflate segment for 1 MiB is
    /// repeated, then a final empty block and the trailer are appended.
    static func zeroBomb(mebibytes: Int) throws -> Data {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { deflateEnd(stream); stream.deinitialize(count: 1); stream.deallocate() }
        let initCode = deflateInit2_(
            stream, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        try #require(initCode == Z_OK)

        var zeros = [UInt8](repeating: 0, count: 1 << 20)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        func run(_ flush: Int32, input: UnsafeMutablePointer<UInt8>?, count: Int) -> Data {
            var produced = Data()
            stream.pointee.next_in = input
            stream.pointee.avail_in = uInt(count)
            repeat {
                buffer.withUnsafeMutableBufferPointer { out in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = uInt(out.count)
                    _ = deflate(stream, flush)
                    produced.append(out.baseAddress!, count: out.count - Int(stream.pointee.avail_out))
                }
            } while stream.pointee.avail_out == 0
            return produced
        }
        let segment = zeros.withUnsafeMutableBufferPointer { run(Z_FULL_FLUSH, input: $0.baseAddress, count: $0.count) }
        let final = run(Z_FINISH, input: nil, count: 0)

        let chunkCRC = zeros.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        var crc: uLong = 0
        for _ in 0..<mebibytes { crc = crc32_combine(crc, chunkCRC, off_t(1 << 20)) }
        let length = UInt32(truncatingIfNeeded: mebibytes << 20)

        var bomb = Data([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3])
        bomb.reserveCapacity(10 + segment.count * mebibytes + final.count + 8)
        for _ in 0..<mebibytes { bomb.append(segment) }
        bomb.append(final)
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: crc).littleEndian) { bomb.append(contentsOf: $0) }
        withUnsafeBytes(of: length.littleEndian) { bomb.append(contentsOf: $0) }
        zeros.removeAll()
        return bomb
    }
}

