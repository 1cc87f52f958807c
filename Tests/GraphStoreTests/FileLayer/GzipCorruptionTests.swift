import Foundation
import Testing

@testable import GraphStore
import GraphStoreTestSupport

// MARK: - Damaged input

@Suite("Gzip rejects damaged input")
struct GzipCorruptionTests {

    static let limit = 1 << 30
    static let text = FileLayerFixtures.compressibleText(atLeast: 2_000)

    // MARK: - Fixtures

    /// Our member with its header rebuilt to carry FEXTRA, FNAME, FCOMMENT
    /// and FHCRC, so every optional header path is exercised.
    static func memberWithOptionalFields(_ data: Data) throws -> Data {
        let plain = try Gzip.compress(data)
        var header: [UInt8] = [0x1f, 0x8b, 8, 0x1E, 0x78, 0x56, 0x34, 0x12, 0, 3]
        header += [4, 0, 0x41, 0x42, 0, 0]  // XLEN 4: subfield "AB" with no data.
        header += Array("snapshot.json".utf8) + [0]
        header += Array("graph store".utf8) + [0]
        let crc16 = UInt16(truncatingIfNeeded: CRC32.checksum(Data(header)))
        header += [UInt8(crc16 & 0xff), UInt8(crc16 >> 8)]
        return Data(header) + plain.dropFirst(GzipHeader.fixedLength)
    }

    static func flipping(_ data: Data, bit: Int) -> Data {
        var copy = data
        copy[copy.startIndex + bit / 8] ^= UInt8(1) << UInt8(bit % 8)
        return copy
    }

    // MARK: - Optional header fields

    @Test("FEXTRA, FNAME, FCOMMENT and FHCRC are parsed, by us and by Python")
    func optionalHeaderFields() async throws {
        let member = try Self.memberWithOptionalFields(Self.text)
        #expect(try Gzip.decompress(member, maxOutputBytes: Self.limit) == Self.text)
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let file = scratch.file("fields.gz")
        try member.write(to: file)
        #expect(try await FileLayerFixtures.pythonGunzip(file) == Self.text)
    }

    @Test("Every bit flip in a header protected by FHCRC is rejected")
    func protectedHeaderBitFlips() throws {
        let member = try Self.memberWithOptionalFields(Self.text)
        let headerLength = try member.withUnsafeBytes { try GzipHeader.parse($0).length }
        #expect(headerLength == 10 + 6 + 14 + 12 + 2)
        for bit in 0..<(headerLength * 8) {
            #expect(throws: FileLayerError.self, "bit \(bit)") {
                try Gzip.decompress(Self.flipping(member, bit: bit), maxOutputBytes: Self.limit)
            }
        }
    }

    // MARK: - Truncation

    @Test("Every truncation of a small file reports where the input ended")
    func everyTruncationOfSmallFile() throws {
        let member = try Self.memberWithOptionalFields(Self.text)
        for length in 0..<member.count {
            let error = #expect(throws: FileLayerError.self) {
                try Gzip.decompress(member.prefix(length), maxOutputBytes: Self.limit)
            }
            guard case let .truncated(expectedAtLeast, actual) = error else {
                Issue.record("length \(length): expected .truncated, got \(String(describing: error))")
                continue
            }
            #expect(actual == length)
            #expect(expectedAtLeast > length)
        }
    }

    @Test("Sampled truncations of a larger file report truncation")
    func sampledTruncationsOfLargeFile() throws {
        let data = FileLayerFixtures.compressibleText(atLeast: 1_000_000) + SplitMix64.bytes(50_000)
        let member = try Gzip.compress(data)
        let sampled = stride(from: 0, to: member.count, by: member.count / 64 + 1)
        let nearEnd = (member.count - 24)..<member.count
        for length in Array(sampled) + Array(nearEnd) {
            let error = #expect(throws: FileLayerError.self) {
                try Gzip.decompress(member.prefix(length), maxOutputBytes: Self.limit)
            }
            #expect(error == .truncated(expectedAtLeast: Self.expectedMinimum(length, member), actual: length))
        }
    }

    /// What the decoder promises as the lower bound for a cut of a plain
    /// (10-byte header) member: the header, or one deflate byte plus the
    /// trailer, or the rest of the trailer.
    static func expectedMinimum(_ length: Int, _ member: Data) -> Int {
        if length < 10 { return 10 }
        if length < member.count - 8 { return length + 9 }
        return member.count
    }

    // MARK: - Header

    @Test("Bit flips in the fixed header are rejected with the specific error")
    func fixedHeaderBitFlips() throws {
        let member = try Gzip.compress(Self.text)
        for bit in 0..<16 {
            let flipped = Self.flipping(member, bit: bit)
            #expect(throws: FileLayerError.badMagic(offset: 0, found: Array(flipped.prefix(2)))) {
                try Gzip.decompress(flipped, maxOutputBytes: Self.limit)
            }
        }
        for bit in 16..<24 {
            let method = Int(8 ^ (1 << (bit % 8)))
            #expect(throws: FileLayerError.unsupportedMethod(method)) {
                try Gzip.decompress(Self.flipping(member, bit: bit), maxOutputBytes: Self.limit)
            }
        }
        for bit in 29..<32 {
            let flags = UInt8(1) << UInt8(bit % 8)
            #expect(throws: FileLayerError.reservedFlags(offset: 3, flags: flags)) {
                try Gzip.decompress(Self.flipping(member, bit: bit), maxOutputBytes: Self.limit)
            }
        }
        // FHCRC, FEXTRA, FNAME, FCOMMENT set by damage: the header is then
        // misparsed and the damage surfaces as some error.
        for bit in 25..<29 {
            #expect(throws: FileLayerError.self, "flag bit \(bit % 8)") {
                try Gzip.decompress(Self.flipping(member, bit: bit), maxOutputBytes: Self.limit)
            }
        }
        // FTEXT, MTIME, XFL and OS are informational and unprotected without
        // FHCRC: every gzip decoder accepts damage there, and so do we.
        for bit in [24] + Array(32..<80) {
            #expect(try Gzip.decompress(Self.flipping(member, bit: bit), maxOutputBytes: Self.limit) == Self.text)
        }
    }

    @Test("Wrong magic and empty input")
    func wrongMagicAndEmptyInput() throws {
        let json = Data(#"{"nodes":[]}"#.utf8)
        #expect(!Gzip.isGzip(json))
        #expect(throws: FileLayerError.badMagic(offset: 0, found: [0x7b, 0x22])) {
            try Gzip.decompress(json, maxOutputBytes: Self.limit)
        }
        #expect(throws: FileLayerError.badMagic(offset: 0, found: [0x1f, 0x00])) {
            try Gzip.decompress(Data([0x1f, 0x00, 8]), maxOutputBytes: Self.limit)
        }
        #expect(!Gzip.isGzip(Data()))
        #expect(throws: FileLayerError.truncated(expectedAtLeast: 10, actual: 0)) {
            try Gzip.decompress(Data(), maxOutputBytes: Self.limit)
        }
        #expect(Gzip.isGzip(Data([0x1f, 0x8b])))
    }

    // MARK: - Deflate body

    @Test("An invalid block type is reported as corrupt deflate data with its offset")
    func invalidBlockType() throws {
        var member = try Gzip.compress(Self.text)
        member[member.startIndex + 10] |= 0b110  // BTYPE 11 is reserved.
        let error = #expect(throws: FileLayerError.self) {
            try Gzip.decompress(member, maxOutputBytes: Self.limit)
        }
        guard case let .corruptDeflate(offset, message) = error else {
            Issue.record("expected .corruptDeflate, got \(String(describing: error))")
            return
        }
        #expect(offset == 11)
        #expect(message.contains("invalid block type"))
    }

    @Test("Every bit flip in the deflate body of a small file is rejected, except final padding")
    func everyBodyBitFlip() throws {
        let member = try Gzip.compress(Self.text)
        let lastBodyByte = member.count - 9
        var acceptedBits: [Int] = []
        for bit in (10 * 8)..<((member.count - 8) * 8) {
            do {
                let output = try Gzip.decompress(Self.flipping(member, bit: bit), maxOutputBytes: Self.limit)
                // Only the unused padding bits after the end-of-block code may
                // change without effect; the output must then be unchanged.
                #expect(output == Self.text)
                acceptedBits.append(bit)
            } catch {
                continue
            }
        }
        // Padding is at most 7 bits and sits at the top of the last byte.
        #expect(acceptedBits.count <= 7)
        #expect(acceptedBits.allSatisfy { $0 / 8 == lastBodyByte })
        #expect(acceptedBits.isEmpty || acceptedBits.last == lastBodyByte * 8 + 7)
    }

    /// Deflate can encode one document in more than one way, so a flipped body bit may leave
    /// the output and its CRC unchanged (a distance moved to another copy of the same bytes:
    /// about one flip in 40,000 in small JSON documents). Whatever a flip does, our reader must
    /// read exactly what zlib reads, and refuse what zlib refuses.
    @Test("Every body bit flip reads as zlib reads it: refused by both, or the same bytes")
    func bodyBitFlipsAgreeWithZlib() throws {
        var generator = SplitMix64(seed: 0x6A1B)
        for document in 0..<6 {
            var text = "{\"entities\":{\"Note\":["
            for index in 0..<24 {
                let id = UInt64.random(in: 0...UInt64.max, using: &generator)
                text += "{\"id\":\"\(String(id, radix: 16))\",\"title\":\"note \(index)\",\"body\":\"\(String(repeating: "x", count: Int.random(in: 0...40, using: &generator)))\"},"
            }
            text += "{}]}}"
            let original = Data(text.utf8)
            let member = try Gzip.compress(original)
            #expect(ReferenceGzip.inflate(member) == original)
            for bit in (10 * 8)..<((member.count - 8) * 8) {
                let flipped = Self.flipping(member, bit: bit)
                let ours = try? Gzip.decompress(flipped, maxOutputBytes: Self.limit)
                #expect(ours == ReferenceGzip.inflate(flipped), "document \(document), bit \(bit)")
                if let ours { #expect(ours == original, "document \(document), bit \(bit): read, but changed") }
            }
        }
    }

    // MARK: - Trailer

    @Test("Bit flips in CRC-32 and ISIZE are reported with both values")
    func trailerBitFlips() throws {
        let member = try Gzip.compress(Self.text)
        let crc = CRC32.checksum(Self.text)
        let size = UInt32(Self.text.count)
        let trailer = (member.count - 8) * 8
        for bit in 0..<32 {
            #expect(throws: FileLayerError.crcMismatch(expected: crc ^ (1 << UInt32(bit)), actual: crc)) {
                try Gzip.decompress(Self.flipping(member, bit: trailer + bit), maxOutputBytes: Self.limit)
            }
            #expect(throws: FileLayerError.lengthMismatch(expected: size ^ (1 << UInt32(bit)), actual: size)) {
                try Gzip.decompress(Self.flipping(member, bit: trailer + 32 + bit), maxOutputBytes: Self.limit)
            }
        }
    }

    @Test("Bytes after the member, including a second member, are trailing garbage")
    func trailingGarbage() throws {
        let member = try Gzip.compress(Self.text)
        #expect(throws: FileLayerError.trailingGarbage(offset: member.count)) {
            try Gzip.decompress(member + [0], maxOutputBytes: Self.limit)
        }
        let second = try Gzip.compress(Data("more".utf8))
        #expect(throws: FileLayerError.trailingGarbage(offset: member.count)) {
            try Gzip.decompress(member + second, maxOutputBytes: Self.limit)
        }
    }
}
