import Foundation
import Testing

@testable import GraphStore
import GraphStoreTestSupport

/// One damaged variant of a real snapshot file and the error opening it must give.
struct DamagedSnapshot: Sendable, CustomStringConvertible {
    /// The `GraphStoreError` case (and its telling values) the file must be refused with.
    enum Refusal: Sendable, Equatable {
        case damagedFile
        case unsupportedFormatVersion(found: Int)
        case decompressedSizeLimitExceeded(limit: Int)
        case codingFailed
    }

    let name: String
    let bytes: Data
    let refusal: Refusal

    var description: String { "\(name) (\(bytes.count) bytes)" }
}

/// Makes damaged files from real snapshots: truncated, bit-flipped, wrong magic, newer format
/// version, empty, counts that do not match, broken graphs, and gzip bombs.
enum DamagedSnapshotFactory {
    // MARK: - Truncation

    /// `file` cut at every length below 64 bytes, every length within 64 bytes of the end,
    /// and about `samples` lengths in between.
    static func truncations(of file: Data, samples: Int = 40) -> [DamagedSnapshot] {
        let count = file.count
        var cuts = Set(0..<min(64, count))
        cuts.formUnion(max(0, count - 64)..<count)
        if count > 128 {
            let step = max(1, (count - 128) / samples)
            cuts.formUnion(stride(from: 64, to: count - 64, by: step))
        }
        return cuts.sorted().map { cut in
            DamagedSnapshot(name: "truncated to \(cut) of \(count) bytes", bytes: file.prefix(cut), refusal: .damagedFile)
        }
    }

    // MARK: - Bit flips (gzip)

    /// Single-bit flips in a gzip snapshot: the magic, method and flag bytes of the header,
    /// the deflate body, the CRC-32 and the ISIZE of the trailer.
    ///
    /// Not included, because no gzip reader can notice them: MTIME, XFL and OS (header bytes
    /// 4–9) and the FTEXT flag are informational, and the last deflate byte may end in
    /// padding bits that inflate ignores. ``harmlessGzipHeaderFlips(of:)`` makes those. A body
    /// flip that zlib reads back to the very same document is left out too.
    static func bitFlips(ofGzip file: Data, bodySamples: Int = 48) -> [DamagedSnapshot] {
        precondition(file.count > 20 && file.starts(with: [0x1F, 0x8B]) && file[3] == 0, "a gzip member without optional header fields")
        var flips: [(offset: Int, bit: Int, part: String)] = []
        for offset in 0...2 { for bit in 0..<8 { flips.append((offset, bit, "header")) } }
        for bit in 1..<8 { flips.append((3, bit, "header flags")) }
        let bodyStart = 10, bodyEnd = file.count - 8  // The body is bodyStart..<bodyEnd.
        let step = max(1, (bodyEnd - 1 - bodyStart) / bodySamples)
        let document = ReferenceGzip.inflate(file)
        precondition(document != nil, "zlib reads the original file")
        for (index, offset) in stride(from: bodyStart, to: bodyEnd - 1, by: step).enumerated() {
            var flipped = file
            flipped[offset] ^= 1 << UInt8(index % 8)
            // Deflate has more than one encoding of a document: a flipped distance bit may point
            // at another copy of the same bytes (about one flip in 40,000). Such a file holds
            // the same document, CRC included, so it is not damaged and opening it is right.
            if ReferenceGzip.inflate(flipped) == document { continue }
            flips.append((offset, index % 8, "deflate body"))
        }
        for bit in 0..<32 { flips.append((bodyEnd + bit / 8, bit % 8, "CRC-32")) }
        for bit in 0..<32 { flips.append((bodyEnd + 4 + bit / 8, bit % 8, "ISIZE")) }
        return flips.map { flip in
            var bytes = file
            bytes[flip.offset] ^= 1 << UInt8(flip.bit)
            return DamagedSnapshot(name: "bit \(flip.bit) of byte \(flip.offset) flipped (\(flip.part))", bytes: bytes, refusal: .damagedFile)
        }
    }

    /// Flips a gzip reader cannot detect: MTIME, XFL, OS and the FTEXT flag.
    static func harmlessGzipHeaderFlips(of file: Data) -> [(name: String, bytes: Data)] {
        var flips = [(name: String, bytes: Data)]()
        for (offset, bit) in [(3, 0), (4, 0), (5, 3), (6, 7), (7, 7), (8, 1), (9, 0), (9, 7)] {
            var bytes = file
            bytes[offset] ^= 1 << UInt8(bit)
            flips.append(("bit \(bit) of header byte \(offset)", bytes))
        }
        return flips
    }

    // MARK: - Wrong magic

    /// The PNG signature.
    static let pngSignature = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])

    /// A complete 1×1 PNG image.
    static let tinyPNG = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==")!

    /// Files that are something else: a PNG (whole, or its signature over a snapshot's first
    /// bytes), a ZIP header, a gzip-compressed PNG, JSON and property lists that are not
    /// snapshots.
    static func wrongMagic(of file: Data) throws -> [DamagedSnapshot] {
        var pngHeaded = file
        pngHeaded.replaceSubrange(0..<8, with: pngSignature)
        let xmlPlist = try PropertyListSerialization.data(fromPropertyList: ["header": ["format": "GraphStore"]], format: .xml, options: 0)
        let otherPlist = try PropertyListSerialization.data(fromPropertyList: ["hello": "world"], format: .binary, options: 0)
        let cases: [(String, Data)] = [
            ("a PNG image", tinyPNG),
            ("the PNG signature over the first 8 bytes", pngHeaded),
            ("a ZIP header", Data([0x50, 0x4B, 0x03, 0x04]) + file.dropFirst(4)),
            ("a gzip-compressed PNG", try Gzip.compress(tinyPNG)),
            ("a JSON array", Data("[1, 2, 3]".utf8)),
            ("JSON that is not a snapshot", Data(#"{"hello": "world"}"#.utf8)),
            ("JSON naming another format", Data(#"{"header": {"format": "Other", "formatVersion": 1, "modelVersion": "1", "savedAt": 0, "storeVersion": 0, "counts": {}, "dateEncoding": "secondsSince2001"}, "entities": {}}"#.utf8)),
            ("an XML property list", xmlPlist),
            ("a binary property list that is not a snapshot", otherPlist),
            ("text", Data("GraphStore snapshot, honest\n".utf8)),
        ]
        return cases.map { DamagedSnapshot(name: $0.0, bytes: $0.1, refusal: .damagedFile) }
    }

    // MARK: - Edits of the document

    /// The uncompressed document of a snapshot as a mutable tree, and how to write it back.
    struct EditableDocument {
        var tree: [String: Any]
        let format: SnapshotFormat

        init(_ document: Data) throws {
            if document.starts(with: Array("bplist00".utf8)) {
                format = .binaryPropertyList
                var plistFormat = PropertyListSerialization.PropertyListFormat.binary
                tree = try #require(try PropertyListSerialization.propertyList(from: document, options: [], format: &plistFormat) as? [String: Any])
            } else {
                format = .json
                tree = try #require(try JSONSerialization.jsonObject(with: document) as? [String: Any])
            }
        }

        var header: [String: Any] {
            get { tree["header"] as! [String: Any] }
            set { tree["header"] = newValue }
        }

        func entities(_ name: String) -> [[String: Any]] {
            ((tree["entities"] as! [String: Any])[name] as? [Any] ?? []).map { $0 as! [String: Any] }
        }

        mutating func setEntities(_ name: String, _ objects: [[String: Any]]) {
            var entities = tree["entities"] as! [String: Any]
            entities[name] = objects
            tree["entities"] = entities
        }

        mutating func setCount(_ name: String, _ count: Int) {
            var counts = header["counts"] as! [String: Any]
            counts[name] = count
            header["counts"] = counts
        }

        func data() throws -> Data {
            switch format {
            case .json: try JSONSerialization.data(withJSONObject: tree)
            case .binaryPropertyList: try PropertyListSerialization.data(fromPropertyList: tree, format: .binary, options: 0)
            }
        }
    }

    /// `document` (uncompressed) edited by `edit`, written plain and gzip-compressed.
    static func edited(
        _ document: Data, _ name: String, refusal: DamagedSnapshot.Refusal, _ edit: (inout EditableDocument) throws -> Void
    ) throws -> [DamagedSnapshot] {
        var editable = try EditableDocument(document)
        try edit(&editable)
        let plain = try editable.data()
        let label = editable.format == .json ? "JSON" : "binary plist"
        return [
            DamagedSnapshot(name: "\(name) (\(label))", bytes: plain, refusal: refusal),
            DamagedSnapshot(name: "\(name) (\(label), gzip)", bytes: try Gzip.compress(plain), refusal: refusal),
        ]
    }

    /// A header with format version 99 (and an entity this version does not know).
    static func newerVersion(of document: Data) throws -> [DamagedSnapshot] {
        try edited(document, "format version 99", refusal: .unsupportedFormatVersion(found: 99)) { document in
            document.header["formatVersion"] = 99
            document.setEntities("Comment", [["id": 1, "text": "from the future"]])
        }
    }

    /// Headers whose counts do not match the arrays, in both directions; the typed and the
/// generic reader refuse the same ones.
    static func countMismatches(of document: Data) throws -> [DamagedSnapshot] {
        let notes = try EditableDocument(document).entities("Note").count
        precondition(notes > 0, "the document needs notes")
        return try edited(document, "header counts one note more", refusal: .damagedFile) { document in
            document.setCount("Note", notes + 1)
        } + edited(document, "a note missing from the array", refusal: .damagedFile) { document in
            document.setEntities("Note", Array(document.entities("Note").dropLast()))
        } + edited(document, "no counts at all", refusal: .damagedFile) { document in
            document.header["counts"] = [String: Any]()
        } + edited(document, "counts objects of an entity the file has no array for", refusal: .damagedFile) { document in
            document.setCount("Comment", 2)
        }
    }

    /// Documents whose objects do not form a valid graph, or hold values of the wrong type.
    static func brokenGraphs(of document: Data) throws -> [DamagedSnapshot] {
        try edited(document, "a note twice", refusal: .damagedFile) { document in
            let notes = document.entities("Note")
            document.setEntities("Note", notes + [notes[0]])
            document.setCount("Note", notes.count + 1)
        } + edited(document, "a referenced tag missing", refusal: .damagedFile) { document in
            let tags = document.entities("Tag")
            document.setEntities("Tag", Array(tags.dropFirst()))
            document.setCount("Tag", tags.count - 1)
        } + edited(document, "two tags with one name", refusal: .damagedFile) { document in
            var tags = document.entities("Tag")
            tags[1]["name"] = tags[0]["name"]
            document.setEntities("Tag", tags)
        } + edited(document, "a note's text is a number", refusal: .codingFailed) { document in
            var notes = document.entities("Note")
            notes[0]["text"] = 42
            document.setEntities("Note", notes)
        }
    }

    /// An empty file, and a gzip member holding nothing.
    static func empties() throws -> [DamagedSnapshot] {
        [
            DamagedSnapshot(name: "empty file", bytes: Data(), refusal: .damagedFile),
            DamagedSnapshot(name: "gzip of nothing", bytes: try Gzip.compress(Data()), refusal: .damagedFile),
        ]
    }

    // MARK: - Gzip bomb

    /// Writes a valid gzip member that inflates to `zeros` zero bytes, streaming it to `url`
    /// without ever holding the zeros: one fixed-Huffman deflate block of a literal 0 and
    /// length-258, distance-1 matches. Eight matches are exactly 13 bytes, so the middle of
    /// the block is one 13-byte pattern repeated. About 6.5 MB for 1 GiB.
    ///
    /// - Returns: The file's size.
    @discardableResult
    static func writeGzipBomb(to url: URL, zeros: Int) throws -> Int {
        precondition(zeros >= 4)
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var written = 0
        var pending = Data()
        func emit(_ bytes: Data) throws {
            pending.append(bytes)
            if pending.count >= 1 << 20 {
                try handle.write(contentsOf: pending)
                written += pending.count
                pending.removeAll(keepingCapacity: true)
            }
        }

        // Header: magic, deflate, no flags, MTIME 0, XFL 0, OS 3 (Unix).
        try emit(Data([0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03]))
        var bits = DeflateBitWriter()
        bits.write(1, count: 1)  // BFINAL
        bits.write(1, count: 2)  // BTYPE 01: fixed Huffman
        bits.writeCode(0x30, length: 8)  // Literal 0.
        let afterLiteral = zeros - 1
        var matches258 = afterLiteral / 258
        var tail = afterLiteral % 258
        if tail > 0 && tail < 3 {  // A match is at least 3 bytes: shorten one 258-match.
            matches258 -= 1
            tail += 258
        }
        func writeMatch(_ bits: inout DeflateBitWriter, length: Int) {
            // Length symbols for 3...258 in the fixed code; distance 1 is code 0 (5 bits).
            let (symbol, extraBits, extra) = DeflateBitWriter.lengthSymbol(length)
            if symbol < 280 {
                bits.writeCode(UInt32(symbol - 256), length: 7)
            } else {
                bits.writeCode(UInt32(0xC0 + symbol - 280), length: 8)
            }
            bits.write(UInt32(extra), count: extraBits)
            bits.writeCode(0, length: 5)
        }
        // Warm up until the bit phase repeats, capture one 8-match period, repeat it.
        var remaining = matches258
        for _ in 0..<min(8, remaining) { writeMatch(&bits, length: 258) }
        remaining -= min(8, remaining)
        try emit(bits.takeBytes())
        if remaining >= 8 {
            for _ in 0..<8 { writeMatch(&bits, length: 258) }
            remaining -= 8
            let period = bits.takeBytes()
            precondition(period.count == 13)
            try emit(period)
            let periods = remaining / 8
            remaining -= periods * 8
            var block = Data(capacity: 4096 * 13)
            for _ in 0..<4096 { block.append(period) }
            var left = periods
            while left > 0 {
                let now = min(left, 4096)
                try emit(now == 4096 ? block : block.prefix(now * 13))
                left -= now
            }
        }
        for _ in 0..<remaining { writeMatch(&bits, length: 258) }
        var left = tail
        while left > 0 {
            let length = left > 258 ? (left - 258 >= 3 ? 258 : left - 3) : left
            writeMatch(&bits, length: length)
            left -= length
        }
        bits.writeCode(0, length: 7)  // End of block.
        try emit(bits.finish())

        // Trailer: CRC-32 of the zeros and ISIZE.
        let chunk = [UInt8](repeating: 0, count: 16 << 20)
        var crc: UInt32 = 0
        var counted = 0
        while counted < zeros {
            let now = min(chunk.count, zeros - counted)
            crc = chunk.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<now]), continuing: crc) }
            counted += now
        }
        var trailer = Data()
        withUnsafeBytes(of: crc.littleEndian) { trailer.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: zeros).littleEndian) { trailer.append(contentsOf: $0) }
        try emit(trailer)
        try handle.write(contentsOf: pending)
        written += pending.count
        return written
    }
}

/// Writes deflate bits: fields least significant bit first, Huffman codes most significant
/// bit first (RFC 1951, 3.1.1).
struct DeflateBitWriter {
    private var accumulator: UInt64 = 0
    private var count = 0
    private var bytes = Data()

    mutating func write(_ value: UInt32, count bitCount: Int) {
        accumulator |= UInt64(value) << UInt64(count)
        count += bitCount
        while count >= 8 {
            bytes.append(UInt8(truncatingIfNeeded: accumulator))
            accumulator >>= 8
            count -= 8
        }
    }

    mutating func writeCode(_ code: UInt32, length: Int) {
        var reversed: UInt32 = 0
        for bit in 0..<length where code & (1 << UInt32(length - 1 - bit)) != 0 {
            reversed |= 1 << UInt32(bit)
        }
        write(reversed, count: length)
    }

    /// The complete bytes so far; the bits of an unfinished byte stay.
    mutating func takeBytes() -> Data {
        defer { bytes.removeAll(keepingCapacity: true) }
        return bytes
    }

    /// Everything, the last byte padded with zero bits.
    mutating func finish() -> Data {
        if count > 0 { write(0, count: 8 - count) }
        return takeBytes()
    }

    /// The fixed-code length symbol for a match of `length` (3...258), with its extra bits.
    static func lengthSymbol(_ length: Int) -> (symbol: Int, extraBits: Int, extra: Int) {
        precondition((3...258).contains(length))
        if length == 258 { return (285, 0, 0) }
        let bases = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227]
        let extras = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5]
        let index = bases.lastIndex { $0 <= length }!
        return (257 + index, extras[index], length - bases[index])
    }
}
