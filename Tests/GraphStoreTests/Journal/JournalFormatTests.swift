import Foundation
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// The journal's framing: header, length- and CRC-framed records, torn tails and damage.
@Suite struct JournalFormatTests {
    static let header = JournalFormatV1.Header(lineage: UUID(), baseVersion: 7)

    /// A journal with `count` records of versions 8, 9, … and documents of varied sizes.
    static func journal(records count: Int) -> [UInt8] {
        var bytes = JournalFormatV1.encodeHeader(header)
        for index in 0..<count {
            let document = Array("{\"Note\":{\"delete\":[\"\(String(repeating: "x", count: index * 7))\"]}}".utf8)
            bytes += JournalFormatV1.frameRecord(version: 8 + UInt64(index), document: document)
        }
        return bytes
    }

    static func scan(_ bytes: [UInt8]) throws -> JournalFormatV1.Scan {
        try bytes.withUnsafeBytes { try JournalFormatV1.scan($0, path: "/tmp/store.journal") }
    }

    static func damage(_ bytes: [UInt8]) throws -> JournalFormatV1.Damage {
        do {
            let scan = try scan(bytes)
            Issue.record("scanned without damage: \(scan.records.count) records")
            throw CancellationError()
        } catch let damage as JournalFormatV1.Damage {
            return damage
        }
    }

    /// A record framed where it was written (as saves frame theirs) is byte for byte the
    /// record framed from a separate document, so journals written either way read the same.
    @Test func recordFramedInPlaceMatchesFramedCopy() throws {
        for document in ["{}", "{\"Note\":{\"upsert\":[{\"id\":1,\"text\":\"h\u{e9}llo\"}]}}", String(repeating: "y", count: 5_000)] {
            var buffer = FastJSONBuffer()
            JournalFormatV1.beginRecord(version: 42, in: &buffer)
            buffer.appendString(document)
            JournalFormatV1.endRecord(in: &buffer)
            var quoted = FastJSONBuffer()
            quoted.appendString(document)
            #expect(buffer.bytes == JournalFormatV1.frameRecord(version: 42, document: quoted.bytes))
        }
    }

    @Test func recordsReadBackInOrder() throws {
        let bytes = Self.journal(records: 5)
        let scan = try Self.scan(bytes)
        #expect(scan.header == Self.header)
        #expect(scan.records.map(\.version) == [8, 9, 10, 11, 12])
        #expect(scan.validEnd == bytes.count && !scan.hasTornTail)
        #expect(scan.lastVersion == 12)
        let last = try #require(scan.records.last)
        #expect(String(decoding: bytes[last.document], as: UTF8.self).hasPrefix("{\"Note\""))
    }

    @Test func anEmptyFileHoldsNothing() throws {
        let scan = try Self.scan([])
        #expect(scan.header == nil && scan.records.isEmpty && scan.lastVersion == nil)
    }

    /// A crash mid-append leaves the last record cut short, at any byte: it is ignored, and
    /// every record before it is kept.
    @Test func aTornLastRecordIsCutOffAtEveryLength() throws {
        let whole = Self.journal(records: 3)
        let intact = try Self.scan(Array(whole))
        let lastStart = intact.records[2].start
        for cut in lastStart..<whole.count {
            let scan = try Self.scan(Array(whole[0..<cut]))
            #expect(scan.records.map(\.version) == [8, 9], "cut at \(cut)")
            #expect(scan.validEnd == lastStart, "cut at \(cut)")
            #expect(scan.hasTornTail == (cut > lastStart), "cut at \(cut)")
        }
    }

    /// A last record whose bytes were garbled (a crash while the page was written), or zero
    /// bytes after the last record (a file extended but not written), is a torn append too.
    @Test func aGarbledLastRecordOrZeroFillIsATornAppend() throws {
        var garbled = Self.journal(records: 3)
        garbled[garbled.count - 3] ^= 0x40
        #expect(try Self.scan(garbled).records.count == 2)
        let zeroFilled = Self.journal(records: 3) + [UInt8](repeating: 0, count: 4096)
        let scan = try Self.scan(zeroFilled)
        #expect(scan.records.count == 3 && scan.hasTornTail)
    }

    /// A flipped byte in any record but the last is damage, reported at that record's byte.
    @Test func aFlippedByteInAMiddleRecordIsDamageAtItsOffset() throws {
        let whole = Self.journal(records: 4)
        let records = try Self.scan(whole).records
        for victim in 0..<3 {
            let record = records[victim]
            for position in [record.start + 9, record.document.lowerBound, record.end - 1] {
                var bytes = whole
                bytes[position] ^= 0x01
                let damage = try Self.damage(bytes)
                #expect(damage.offset == record.start, "flip at \(position)")
                #expect(damage.reason.contains("byte \(record.start)"), "\(damage.reason)")
                #expect(damage.intact.records.map(\.version) == Array(records.prefix(victim).map(\.version)))
            }
        }
    }

    /// A flipped bit in a middle record's length that points past the end of the file looks
    /// like a torn last record, but the intact records after it say otherwise: it is damage at
    /// that record, not a tail to cut off with every later save. (The scan ended there, and
    /// opening cut the file, records and all.)
    @Test func aMiddleRecordsLengthPointingPastTheEndIsDamage() throws {
        let whole = Self.journal(records: 4)
        let records = try Self.scan(whole).records
        for victim in 0..<3 {
            let record = records[victim]
            for bit in [UInt8(0x80), 0x08] {
                var bytes = whole
                bytes[record.start + 2] ^= bit
                let damage = try Self.damage(bytes)
                #expect(damage.offset == record.start, "bit \(bit)")
                #expect(damage.reason.contains("byte \(record.start)") && damage.reason.contains("length is damaged"), "\(damage.reason)")
                #expect(damage.intact.records.map(\.version) == Array(records.prefix(victim).map(\.version)))
            }
        }
    }

    /// The last whole record's length pointing past the end, with nothing after it or only the
    /// torn start of the next record (a crash during the next save), is damage too: a torn
    /// append leaves a payload short, never whole under a wrong length, and cutting it off
    /// would drop a save that returned. Before, it was cut off silently.
    @Test(arguments: [0, 5, 8, 16, 17, 40])
    func theLastWholeRecordsLengthPointingPastTheEndIsDamage(tornBytesAfter: Int) throws {
        let whole = Self.journal(records: 4)
        let records = try Self.scan(whole).records
        let next = JournalFormatV1.frameRecord(version: 12, document: Array("{\"Note\":{\"delete\":[\"next\"]}}".utf8))
        for bit in [UInt8(0x80), 0x08, 0x01] {
            var bytes = Array(whole[..<records[3].end]) + next.prefix(tornBytesAfter)
            let start = records[3].start
            let length = Int(bytes.withUnsafeBytes { $0.loadLittleEndian(UInt32.self, at: start) })
            // Bit 0 only where it lengthens the record past the end.
            guard bit != 0x01 || (length & 1 == 0 && start + 8 + length + 1 > bytes.count) else { continue }
            bytes[start + (bit == 0x01 ? 0 : 2)] ^= bit
            let damage = try Self.damage(bytes)
            #expect(damage.offset == start, "bit \(bit)")
            #expect(damage.reason.contains("length is damaged") && damage.reason.contains("byte \(records[3].end)"), "\(damage.reason)")
            #expect(damage.intact.records.map(\.version) == [8, 9, 10])
        }
    }

    /// A record whose length and version are whole but whose payload a crash left short is a
    /// torn append at every cut, even when its version's bytes are there: no shorter payload
    /// matches its checksum.
    @Test func aTornLastRecordWithItsVersionIsStillCutOff() throws {
        let whole = Self.journal(records: 3) + JournalFormatV1.frameRecord(version: 11, document: Array(String(repeating: "{\"z\":1}", count: 300).utf8))
        let last = try Self.scan(whole).records[3]
        for cut in stride(from: last.start + 16, to: whole.count, by: 7) {
            let scan = try Self.scan(Array(whole[..<cut]))
            #expect(scan.records.count == 3 && scan.hasTornTail, "cut at \(cut)")
        }
    }

    @Test func aFlippedHeaderByteIsDamage() throws {
        let whole = Self.journal(records: 1)
        for position in 0..<JournalFormatV1.headerSize {
            var bytes = whole
            bytes[position] ^= 0x10
            #expect(throws: JournalFormatV1.Damage.self, "flip at \(position)") { _ = try Self.scan(bytes) }
        }
    }

    @Test func anotherKindOfFileIsDamage() throws {
        #expect(throws: JournalFormatV1.Damage.self) { _ = try Self.scan(Array("{\"header\": {}}".utf8)) }
        #expect(throws: JournalFormatV1.Damage.self) { _ = try Self.scan(Array("GSJOU".utf8) + [0x20]) }
        let damage = try Self.damage(Array("GSJOURNL".utf8))
        #expect(damage.reason.contains("cut short"))
    }

    @Test func aNewerLayoutIsRefused() throws {
        var bytes = Self.journal(records: 1)
        bytes[8] = 2
        let crc = bytes.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<40])) }
        withUnsafeBytes(of: crc.littleEndian) { for (offset, byte) in $0.enumerated() { bytes[40 + offset] = byte } }
        #expect {
            _ = try Self.scan(bytes)
        } throws: { error in
            guard case .unsupportedFormatVersion(_, let found, let supported)? = error as? GraphStoreError else { return false }
            return found == 2 && supported == 1
        }
    }

    /// Versions must follow the header's base, one by one.
    @Test func aGapBetweenVersionsIsDamage() throws {
        var bytes = JournalFormatV1.encodeHeader(Self.header)
        bytes += JournalFormatV1.frameRecord(version: 8, document: Array("{}".utf8))
        let gapStart = bytes.count
        bytes += JournalFormatV1.frameRecord(version: 10, document: Array("{}".utf8))
        let damage = try Self.damage(bytes)
        #expect(damage.offset == gapStart)
        #expect(damage.reason.contains("version 10") && damage.reason.contains("version 9"))
    }
}
