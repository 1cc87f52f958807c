import CZlib
import Foundation
import Testing
import GraphStoreTestSupport

@testable import GraphStore
@testable import GraphStoreCoding

/// The table of runs a member compressed in parts carries in its header, and inflating such a
/// member in parts: the same bytes as one pass, or the same error.
@Suite("Gzip members inflated in parts")
struct GzipRunTableTests {

    /// Three runs of about 300 KB of text, each deflated on its own as the JSON writer's threads
    /// deflate theirs, joined by plain pieces: a member with a table of three entries.
    static func member() throws -> (compressed: Data, text: Data) {
        let text = FileLayerFixtures.compressibleText(atLeast: 3 * GzipRunTable.minimumEntryBytes + 1_000)
        let third = text.count / 3
        let runs = [text.prefix(third), text.dropFirst(third).prefix(third), text.dropFirst(2 * third)].map { Data($0) }
        var segments: [GzipSegment] = [.plain(Data("{\"header\":1,".utf8))]
        for run in runs {
            var deflater = try RunDeflater(level: 1, expectedBytes: run.count)
            try [UInt8](run).withUnsafeBytes { try deflater.append($0) }
            segments.append(.deflated(try deflater.finish()))
        }
        segments.append(.plain(Data("]}".utf8)))
        return (try Gzip.compress(segments: segments, level: 1, parts: 2), Data("{\"header\":1,".utf8) + text + Data("]}".utf8))
    }

    static func table(of member: Data) throws -> (header: GzipHeader, table: GzipRunTable?) {
        try member.withUnsafeBytes { bytes in
            let header = try GzipHeader.parse(bytes)
            return (header, header.extra.flatMap { GzipRunTable(extraField: UnsafeRawBufferPointer(rebasing: bytes[$0])) })
        }
    }

    /// The member inflated in parts on two threads (on any machine: the path is tested where
    /// there is one processor too), or `nil`.
    static func inParts(_ member: Data, limit: Int = 1 << 30) throws -> Data? {
        try member.withUnsafeBytes { bytes in Gzip.decodeInParts(bytes, header: try GzipHeader.parse(bytes), limit: limit, jobs: 2) }
    }

    /// What ``Gzip/decompress(_:maxOutputBytes:inParts:)`` answers with two processors: the
    /// member inflated in parts, or else in one pass.
    static func decompressedOnTwoThreads(_ member: Data, limit: Int = 1 << 30) -> Result<Data, FileLayerError> {
        if let parts = try? inParts(member, limit: limit) { return .success(parts) }
        return Result { () throws(FileLayerError) in try Gzip.decompress(member, maxOutputBytes: limit, inParts: false) }
    }

    @Test("A member compressed in parts lists its runs, tiling the deflate data, and inflates in parts")
    func tableTilesTheMember() throws {
        let (compressed, text) = try Self.member()
        let (header, table) = try Self.table(of: compressed)
        let entries = try #require(table?.entries)
        #expect(header.flags & GzipHeader.Flag.extra != 0)
        // The small plain pieces are joined to the runs beside them.
        #expect(entries.count == 3)
        #expect(entries.reduce(0) { $0 + $1.compressed } == compressed.count - header.length - GzipHeader.trailerLength)
        #expect(entries.reduce(0) { $0 + $1.uncompressed } == text.count)
        #expect(entries.allSatisfy { $0.uncompressed >= GzipRunTable.minimumEntryBytes })
        #expect(try Self.inParts(compressed) == text)
        #expect(try compressed.withUnsafeBytes { bytes in
            Gzip.decodeInParts(bytes, header: try GzipHeader.parse(bytes), limit: 1 << 30, jobs: 1)
        } == nil, "one processor: one pass")
        #expect(try Gzip.decompress(compressed, maxOutputBytes: text.count) == text)
        // A document cut into parts by the compressor itself lists them too.
        let large = FileLayerFixtures.compressibleText(atLeast: 3 * Gzip.minimumPartBytes)
        let cut = try Gzip.compress(large, level: 1, parts: 3)
        #expect(try Self.table(of: cut).table?.entries.map(\.uncompressed).reduce(0, +) == large.count)
        #expect(try Gzip.decompress(cut, maxOutputBytes: large.count) == large)
        // One compressed in one run has no table; nor has one whose runs are too small to be
        // worth a thread each (they would make one entry).
        #expect(try Self.table(of: Gzip.compress(large, level: 1)).table == nil)
        let small = try Gzip.compress(pieces: [Data("a".utf8), Data("b".utf8)], level: 1, parts: 2)
        #expect(try Self.table(of: small).header.flags & GzipHeader.Flag.extra == 0)
        #expect(try Gzip.decompress(small, maxOutputBytes: 2) == Data("ab".utf8))
    }

    @Test("The table's layout: unknown subfields skipped, other versions and bad lengths not read")
    func tableLayout() throws {
        let table = GzipRunTable(entries: [.init(compressed: 5, uncompressed: 1 << 40), .init(compressed: 70_000, uncompressed: 0)])
        let field = table.extraField
        #expect(Int(field[0]) | Int(field[1]) << 8 == field.count - 2)
        #expect(Array(field[2...3]) == [UInt8(ascii: "G"), UInt8(ascii: "S")])
        func read(_ data: [UInt8]) -> GzipRunTable? { data.withUnsafeBytes { GzipRunTable(extraField: $0) } }
        let data = Array(field.dropFirst(2))
        #expect(read(data) == table)
        // Behind a subfield of another writer.
        #expect(read([0x41, 0x70, 2, 0, 9, 9] + data) == table)
        // Another version, an entry cut short, a subfield longer than the field, none at all.
        var otherVersion = data
        otherVersion[4] = 2
        #expect(read(otherVersion) == nil)
        var cutShort = data
        cutShort[2] -= 1
        #expect(read(Array(cutShort.dropLast())) == nil)
        #expect(read(Array(data.dropLast())) == nil)
        #expect(read([0x41, 0x70, 0, 0]) == nil)
        #expect(read([]) == nil)
        // More runs than a table lists are joined two by two; small ones to their neighbours.
        let many = GzipRunTable(runs: (0..<1_000).map { _ in .init(compressed: 3, uncompressed: GzipRunTable.minimumEntryBytes) })
        #expect(many.entries.count <= GzipRunTable.maxEntries)
        #expect(many.entries.reduce(0) { $0 + $1.compressed } == 3_000)
        #expect(many.extraField.count <= 65_537)
        let small = GzipRunTable(runs: [.init(compressed: 1, uncompressed: 10), .init(compressed: 2, uncompressed: 1 << 20), .init(compressed: 3, uncompressed: 0)])
        #expect(small.entries == [.init(compressed: 6, uncompressed: (1 << 20) + 10)])
    }

    @Test("Groups for the threads are consecutive, cover every entry and share the bytes", arguments: [1, 2, 3, 8])
    func groups(jobs: Int) {
        let table = GzipRunTable(entries: [7, 1, 1, 1, 5, 9, 2].map { .init(compressed: $0 * 10, uncompressed: $0 * 100) })
        let groups = table.groups(jobs: jobs)
        #expect(groups.count == min(jobs, 7))
        #expect(groups.first?.compressed.lowerBound == 0)
        #expect(groups.last?.compressed.upperBound == 260)
        #expect(groups.last?.uncompressed.upperBound == 2_600)
        for (first, second) in zip(groups, groups.dropFirst()) {
            #expect(first.compressed.upperBound == second.compressed.lowerBound)
            #expect(first.uncompressed.upperBound == second.uncompressed.lowerBound)
        }
        if jobs == 2 { #expect(groups.map(\.uncompressed.count) == [1_500, 1_100]) }
        // Two runs, the first a little short of half: still one each (the JSON writer's
        // threads make such pairs).
        let pair = GzipRunTable(entries: [.init(compressed: 10, uncompressed: 7_409_370), .init(compressed: 11, uncompressed: 7_415_406)])
        #expect(pair.groups(jobs: jobs).map(\.compressed) == (jobs == 1 ? [0..<21] : [0..<10, 10..<21]))
    }

    /// Inflating in parts must answer as one pass does: flips in the table, the runs and the
    /// trailer give the original bytes (the table is only a guide) or one pass's error.
    @Test("Bit flips anywhere give the one-pass answer: the same bytes or the same error")
    func bitFlipsMatchOnePass() throws {
        let (compressed, text) = try Self.member()
        let (header, _) = try Self.table(of: compressed)
        var bits = Array(0..<(header.length * 8))
        bits += stride(from: header.length * 8, to: compressed.count * 8 - 64, by: max(1, (compressed.count * 8) / 300))
        bits += (compressed.count * 8 - 64)..<(compressed.count * 8)
        var tableFlipsRead = 0
        for bit in bits {
            var flipped = compressed
            flipped[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
            let parts = Self.decompressedOnTwoThreads(flipped)
            let onePass = Result { () throws(FileLayerError) in try Gzip.decompress(flipped, maxOutputBytes: 1 << 30, inParts: false) }
            #expect(parts == onePass, "bit \(bit)")
            if let extra = header.extra, extra.contains(bit / 8), case .success(let bytes) = parts {
                #expect(bytes == text, "bit \(bit) of the table")
                tableFlipsRead += 1
            }
        }
        // A damaged table is only a missed chance to use both cores: the file still reads.
        #expect(tableFlipsRead > 0)
    }

    @Test("A table whose cuts and sizes do not match the stream is not trusted")
    func tableOverOneStream() throws {
        let text = FileLayerFixtures.compressibleText(atLeast: 3 * GzipRunTable.minimumEntryBytes)
        let plain = try Gzip.compress(text, level: 6)
        let body = plain.dropFirst(GzipHeader.fixedLength).dropLast(GzipHeader.trailerLength)
        // Cut one deflate stream in the middle, as if it were two runs.
        let table = GzipRunTable(entries: [
            .init(compressed: body.count / 2, uncompressed: text.count / 2),
            .init(compressed: body.count - body.count / 2, uncompressed: text.count - text.count / 2),
        ])
        var header = Array(plain.prefix(GzipHeader.fixedLength))
        header[3] |= GzipHeader.Flag.extra
        let forged = Data(header + table.extraField) + body + plain.suffix(GzipHeader.trailerLength)
        #expect(try Self.inParts(forged) == nil)
        #expect(try Gzip.decompress(forged, maxOutputBytes: text.count) == text)
    }

    /// A part that ends inside a block (here: the header of a stored block of 8 bytes) hands the
    /// next part bytes that one pass reads as that block's content: each part inflates to its
    /// size and the CRC-32 of what the parts made matches the trailer, yet `gzip -d`, Python and
    /// the one-pass inflate all refuse the file (its CRC-32 does not match what they read).
    /// The parts must end between blocks, so the answer is one pass's.
    @Test("A part that ends inside a block is not trusted")
    func partEndingInsideABlock() throws {
        var deflater = try RunDeflater(level: 1, expectedBytes: 6)
        try [UInt8]("hello ".utf8).withUnsafeBytes { try deflater.append($0) }
        let first = try deflater.finish().body + Data([0x00, 0x08, 0x00, 0xF7, 0xFF])
        let second = Data([0x00, 0x03, 0x00, 0xFC, 0xFF]) + Data("abc".utf8) + Data([0x01, 0x00, 0x00, 0xFF, 0xFF])
        let table = GzipRunTable(entries: [.init(compressed: first.count, uncompressed: 6), .init(compressed: second.count, uncompressed: 3)])
        let parted = Data("hello abc".utf8)
        var trailer = Data()
        withUnsafeBytes(of: CRC32.checksum(parted).littleEndian) { trailer.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(parted.count).littleEndian) { trailer.append(contentsOf: $0) }
        let forged = Data([0x1f, 0x8b, 8, GzipHeader.Flag.extra, 0, 0, 0, 0, 4, 3] + table.extraField) + first + second + trailer
        #expect(try Self.inParts(forged) == nil)
        let onePass = Result { () throws(FileLayerError) in try Gzip.decompress(forged, maxOutputBytes: 1 << 20, inParts: false) }
        guard case .failure(.crcMismatch) = onePass else {
            Issue.record("one pass: \(onePass)")
            return
        }
        #expect(Self.decompressedOnTwoThreads(forged) == onePass)
    }

    /// A table that understates what its runs make must not carry a bomb past the limit: a
    /// part that makes more than its entry says fails, and one pass then hits the limit.
    @Test("A gzip bomb whose table understates its sizes still hits the limit")
    func bombWithUnderstatingTable() throws {
        /// `bomb` (1 MiB segments, each a full flush that can be started on its own, then a
        /// 2-byte final block) with a table of two entries, its halves, said to make `sizes`.
        func withTable(_ bomb: Data, segments: Int, sizes: (Int, Int)) throws -> Data {
            let body = bomb.dropFirst(GzipHeader.fixedLength).dropLast(GzipHeader.trailerLength)
            try #require((body.count - 2) % segments == 0)
            let half = (body.count - 2) / segments * (segments / 2)
            let table = GzipRunTable(entries: [.init(compressed: half, uncompressed: sizes.0), .init(compressed: body.count - half, uncompressed: sizes.1)])
            var header = Array(bomb.prefix(GzipHeader.fixedLength))
            header[3] |= GzipHeader.Flag.extra
            return Data(header + table.extraField) + body + bomb.suffix(GzipHeader.trailerLength)
        }
        // 4 GiB + 2 MiB of zeros: the trailer's length, modulo 2^32, agrees with a table that
        // says 2 MiB.
        let huge = try GzipTests.zeroBomb(mebibytes: 4_098)
        let lying = try withTable(huge, segments: 4_098, sizes: (1 << 20, 1 << 20))
        #expect(try Self.inParts(lying, limit: 16 << 20) == nil)
        #expect(throws: FileLayerError.decompressedSizeLimitExceeded(limit: 16 << 20)) {
            try Gzip.decompress(lying, maxOutputBytes: 16 << 20)
        }
        // An honest table over the limit is refused before anything is allocated; under the
        // limit, the parts are inflated side by side.
        let honest = try withTable(try GzipTests.zeroBomb(mebibytes: 64), segments: 64, sizes: (32 << 20, 32 << 20))
        #expect(try Self.inParts(honest, limit: 16 << 20) == nil)
        #expect(throws: FileLayerError.decompressedSizeLimitExceeded(limit: 16 << 20)) {
            try Gzip.decompress(honest, maxOutputBytes: 16 << 20)
        }
        let output = try #require(try Self.inParts(honest, limit: 64 << 20))
        #expect(output.count == 64 << 20 && output.allSatisfy { $0 == 0 })
    }
}

/// Random damage to a member compressed in parts, most of it in the header's table of runs:
/// inflating in parts must answer exactly as one pass does (the same bytes, or the same error),
/// never crash, hang or read out of bounds. `swift test` runs a few iterations;
/// `scripts/fuzz-open.sh N` runs N.
@Suite struct GzipPartsOpenFuzzTests {
    @Test func damagedMembersWithATableAnswerAsOnePassDoes() throws {
        var random = SplitMix64(seed: OpenFuzzTests.seed ^ 0x6A09_E667)
        let (member, _) = try GzipRunTableTests.member()
        let header = try GzipRunTableTests.table(of: member).header
        let extra = try #require(header.extra)
        for iteration in 0..<OpenFuzzTests.iterations {
            // Half the time only the header (the table and what surrounds it), else anywhere.
            let damaged: Data
            if Bool.random(using: &random) {
                let head = FileMutations.mutate(member.prefix(extra.upperBound), using: &random)
                damaged = head + member.dropFirst(extra.upperBound)
            } else {
                damaged = FileMutations.mutate(member, using: &random)
            }
            let onePass = Result { () throws(FileLayerError) in try Gzip.decompress(damaged, maxOutputBytes: 1 << 24, inParts: false) }
            #expect(GzipRunTableTests.decompressedOnTwoThreads(damaged, limit: 1 << 24) == onePass, "iteration \(iteration), seed \(OpenFuzzTests.seed)")
        }
    }
}
