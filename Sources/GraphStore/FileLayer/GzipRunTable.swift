import CZlib
import Foundation
internal import GraphStoreCoding

// MARK: - GzipRunTable

/// The runs of a gzip member compressed in parts, listed in the member's header so that a
/// reader can inflate them on several threads.
///
/// Every run ``Gzip/compress(segments:level:parts:)`` joins is raw deflate data of its own: a
/// fresh deflater made it, so its matches reach back only within the run, and the run before
/// it ends on a byte boundary (a sync flush). A fresh inflater started at a run's first byte
/// therefore makes exactly the bytes that inflating the member from its start makes there.
/// The table says where the runs start and how many bytes each makes, so that the parts can
/// be inflated side by side into one buffer.
///
/// It is a subfield of the header's extra field (RFC 1952, section 2.3.1.1), `SI1 SI2` =
/// `G S`, which every gzip reader skips (`gzip -d`, `zcat`, Python's `gzip`, zlib): the file
/// stays one standard member. The subfield's data is a version byte (1), then for each entry
/// its compressed and its uncompressed byte count as little-endian 64-bit integers. The
/// entries are consecutive: the first starts right after the header, and the last ends where
/// the 8-byte trailer starts. An entry is one run, or several runs joined when they are small.
///
/// A reader trusts nothing in it: a part that does not end where the table says, or makes more
/// or fewer bytes, or a CRC-32 of the whole that does not match the trailer, sends the reader
/// back to inflating the member in one pass, which also names the damage exactly (see
/// ``Gzip/decodeInParts(_:header:limit:)``).
struct GzipRunTable: Equatable, Sendable {
    /// One entry: a run, or consecutive runs joined.
    struct Entry: Equatable, Sendable {
        /// Its bytes of deflate data in the file.
        var compressed: Int
        /// The bytes it inflates to.
        var uncompressed: Int
    }

    /// The entries, in file order.
    let entries: [Entry]

    /// The subfield's identifier: `G`, `S`.
    static let subfieldID: (UInt8, UInt8) = (UInt8(ascii: "G"), UInt8(ascii: "S"))

    /// The version of the subfield's layout.
    static let version: UInt8 = 1

    /// The bytes each entry takes in the subfield.
    static let entryLength = 16

    /// The most entries a table lists (the extra field holds at most 65,535 bytes): runs are
    /// joined two by two until there are no more.
    static let maxEntries = 256

    /// Consecutive runs are joined into one entry until it makes at least this many bytes: a
    /// part smaller than this is not worth a thread.
    static let minimumEntryBytes = 256 << 10

    init(entries: [Entry]) {
        self.entries = entries
    }

    /// The table of `runs` (each one's compressed and uncompressed byte count, in file order),
    /// small runs joined to the one before them so that every entry but the first makes at
    /// least ``minimumEntryBytes``, and at most ``maxEntries`` entries.
    ///
    /// - Complexity: O(runs).
    init(runs: [Entry]) {
        var entries: [Entry] = []
        for run in runs {
            if let last = entries.last, last.uncompressed < Self.minimumEntryBytes || run.uncompressed < Self.minimumEntryBytes {
                entries[entries.count - 1].compressed += run.compressed
                entries[entries.count - 1].uncompressed += run.uncompressed
            } else {
                entries.append(run)
            }
        }
        while entries.count > Self.maxEntries {
            entries = stride(from: 0, to: entries.count, by: 2).map { index in
                guard index + 1 < entries.count else { return entries[index] }
                return Entry(
                    compressed: entries[index].compressed + entries[index + 1].compressed,
                    uncompressed: entries[index].uncompressed + entries[index + 1].uncompressed)
            }
        }
        self.entries = entries
    }

    /// The header's extra field holding the table: its 2-byte length, then the subfield.
    ///
    /// - Complexity: O(entries).
    var extraField: [UInt8] {
        let dataLength = 1 + entries.count * Self.entryLength
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 + 4 + dataLength)
        func append16(_ value: Int) {
            bytes.append(UInt8(truncatingIfNeeded: value))
            bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        }
        func append64(_ value: Int) {
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: UInt64(value) >> UInt64(shift))) }
        }
        append16(4 + dataLength)
        bytes.append(Self.subfieldID.0)
        bytes.append(Self.subfieldID.1)
        append16(dataLength)
        bytes.append(Self.version)
        for entry in entries {
            append64(entry.compressed)
            append64(entry.uncompressed)
        }
        return bytes
    }

    /// The table in the extra field data `extra` (without its 2-byte length), or `nil` when it
    /// holds none this version reads: no `GS` subfield, subfields that overrun the field, another
    /// version, a length that is not a whole number of entries, or a count that does not fit in
    /// an `Int`. Other subfields are skipped.
    ///
    /// - Complexity: O(size of the field).
    init?(extraField extra: UnsafeRawBufferPointer) {
        var position = 0
        while position + 4 <= extra.count {
            let length = Int(GzipHeader.littleEndianUInt16(extra, at: position + 2))
            let data = position + 4
            guard data + length <= extra.count else { return nil }
            if extra[position] == Self.subfieldID.0, extra[position + 1] == Self.subfieldID.1 {
                guard length >= 1, extra[data] == Self.version, (length - 1) % Self.entryLength == 0 else { return nil }
                var entries: [Entry] = []
                for offset in stride(from: data + 1, to: data + length, by: Self.entryLength) {
                    let compressed = extra.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
                    let uncompressed = extra.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self).littleEndian
                    guard let compressed = Int(exactly: compressed), let uncompressed = Int(exactly: uncompressed) else { return nil }
                    entries.append(Entry(compressed: compressed, uncompressed: uncompressed))
                }
                self.entries = entries
                return
            }
            position = data + length
        }
        return nil
    }

    /// The entries cut into `jobs` consecutive groups (fewer when there are fewer entries)
    /// making about as many bytes each, each group with where its deflate data starts
    /// (counted from the first entry's start) and where its bytes go in the output: each cut
    /// is the boundary between entries nearest its share of the whole.
    ///
    /// - Complexity: O(entries × jobs).
    func groups(jobs: Int) -> [(compressed: Range<Int>, uncompressed: Range<Int>)] {
        let jobs = max(1, min(jobs, entries.count))
        // What the entries before each boundary hold: `ends[k]` after the first k entries.
        var ends = [(compressed: 0, uncompressed: 0)]
        for entry in entries {
            ends.append((ends[ends.count - 1].compressed + entry.compressed, ends[ends.count - 1].uncompressed + entry.uncompressed))
        }
        let total = Double(ends[ends.count - 1].uncompressed)
        var cuts = [0]
        for job in 1..<jobs {
            let share = total * Double(job) / Double(jobs)
            // After the last cut, leaving an entry for each group still to come.
            var best = cuts[cuts.count - 1] + 1
            for cut in best...(entries.count - (jobs - job)) where abs(Double(ends[cut].uncompressed) - share) < abs(Double(ends[best].uncompressed) - share) {
                best = cut
            }
            cuts.append(best)
        }
        cuts.append(entries.count)
        return zip(cuts, cuts.dropFirst()).map { start, end in
            (ends[start].compressed..<ends[end].compressed, ends[start].uncompressed..<ends[end].uncompressed)
        }
    }
}

// MARK: - Inflating in parts

extension Gzip {
    /// The member `input` (whose header is `header`) inflated on several threads, one group of
    /// the entries of its ``GzipRunTable`` each, with the CRC-32 and the length checked; `nil`
    /// when it cannot be decoded this way: one processor, no table, a table that does not tile
    /// the deflate data or the trailer's length, more than `limit` bytes (or than deflate can
    /// make of the file's bytes), fewer than two `jobs`, or any part that does
    /// not inflate to exactly what the table says (damage, or a table some other writer got
    /// wrong). The caller then inflates the member in one pass, which gives the same bytes for
    /// a sound file and the exact error for a damaged one.
    ///
    /// - Complexity: O(n + m) for n compressed and m decompressed bytes, on up to
    ///   `Processors.active` threads; m bytes of output allocated once, after the table was
    ///   checked against `limit`.
    static func decodeInParts(_ input: UnsafeRawBufferPointer, header: GzipHeader, limit: Int, jobs: Int = Processors.active) -> Data? {
        guard jobs > 1, let extra = header.extra,
              let table = GzipRunTable(extraField: UnsafeRawBufferPointer(rebasing: input[extra])),
              table.entries.count > 1
        else { return nil }
        let bodyEnd = input.count - GzipHeader.trailerLength
        var compressed = 0
        var total = 0
        for entry in table.entries {
            guard entry.compressed > 0 else { return nil }
            let (sum, overflow) = compressed.addingReportingOverflow(entry.compressed)
            let (bytes, overflowed) = total.addingReportingOverflow(entry.uncompressed)
            guard !overflow, !overflowed else { return nil }
            compressed = sum
            total = bytes
        }
        // No more than deflate can make of the compressed bytes (as the one-pass inflate's first
        // allocation): a small file whose table claims the limit does not allocate it.
        guard header.length <= bodyEnd, bodyEnd - header.length == compressed, total <= limit,
              total / maxDeflateRatio <= compressed,
              GzipHeader.littleEndianUInt32(input, at: bodyEnd + 4) == UInt32(truncatingIfNeeded: total)
        else { return nil }
        var buffer: GrowableByteBuffer
        do { buffer = try GrowableByteBuffer(capacity: total) } catch { return nil }
        let groups = table.groups(jobs: jobs)
        let target = InflateTarget(base: buffer.unusedBytes.baseAddress!)
        let source = InflateTarget(base: UnsafeMutableRawPointer(mutating: input.baseAddress! + header.length))
        let crcs = inJobs(groups.count, inParallel: true) { job -> UInt32? in
            let group = groups[job]
            return inflatePart(
                UnsafeRawBufferPointer(start: source.base + group.compressed.lowerBound, count: group.compressed.count),
                into: UnsafeMutableRawBufferPointer(start: target.base + group.uncompressed.lowerBound, count: group.uncompressed.count),
                isLast: job == groups.count - 1)
        }
        var crc: uLong = 0
        for (group, part) in zip(groups, crcs) {
            guard let part else { return nil }
            crc = crc32_combine(crc, uLong(part), .init(group.uncompressed.count))
        }
        guard GzipHeader.littleEndianUInt32(input, at: bodyEnd) == UInt32(truncatingIfNeeded: crc) else { return nil }
        buffer.commit(total)
        return buffer.takeData()
    }

    /// The most output a part's inflater is given at a time.
    static let inflateWindow = 256 << 10

    /// Inflates `input`, raw deflate data starting on a block boundary, into exactly `output`;
    /// returns the CRC-32 of the output, or `nil` unless the data fills `output` exactly and
    /// ends there: with the end of the stream when `isLast`, else with the end of `input`,
    /// between two blocks on a byte boundary, and no final block.
    private static func inflatePart(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, isLast: Bool) -> UInt32? {
        guard let stream = try? ZlibStream.rawInflater(), let base = input.baseAddress else { return nil }
        let z = stream.pointer
        var fed = 0
        var produced = 0
        // Once `output` is full, the rest of the input (an empty stored block) must make no
        // byte: any it makes lands here and fails the part.
        var spill: (UInt64, UInt64) = (0, 0)
        var crc: UInt32 = 0
        // Whether the last call that made progress stopped between two blocks, on a byte
        // boundary, before the final block (zlib's `data_type` is then exactly 128): where a
        // part other than the last must end, as a run ending in a sync flush does. A part that
        // ends inside a block would make the next part start on bytes one pass reads otherwise.
        var betweenBlocks = false
        return withUnsafeMutableBytes(of: &spill) { spill -> UInt32? in
            while true {
                feedNextSlice(z, from: base, count: input.count, fed: &fed)
                // A window at a time, whose CRC-32 is taken while it is still in the cache.
                let space = produced < output.count
                    ? UnsafeMutableRawBufferPointer(rebasing: output[produced..<min(output.count, produced + inflateWindow)])
                    : spill
                z.pointee.next_out = space.baseAddress!.assumingMemoryBound(to: Bytef.self)
                z.pointee.avail_out = uInt(space.count)
                let code = inflate(z, Z_NO_FLUSH)
                let made = space.count - Int(z.pointee.avail_out)
                if produced >= output.count, made > 0 { return nil }
                crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: space[..<made]), continuing: crc)
                produced += made
                let allRead = fed == input.count && z.pointee.avail_in == 0
                switch code {
                case Z_STREAM_END where isLast && allRead && produced == output.count:
                    return crc
                case Z_OK:
                    betweenBlocks = z.pointee.data_type == 128
                    continue
                case Z_BUF_ERROR where !isLast && allRead && produced == output.count && betweenBlocks:
                    return crc
                default:
                    return nil
                }
            }
        }
    }
}

/// Where the threads inflating a member in parts read and write. `@unchecked`: each thread
/// writes only its own range of the output buffer, which the caller reads only after every
/// thread has handed its result back under `inJobs`' lock, and the input is only read.
private struct InflateTarget: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
}
