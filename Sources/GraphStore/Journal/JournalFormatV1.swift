import Foundation
internal import GraphStoreCoding

/// The journal's on-disk layout, version 1: a header, then length- and CRC-framed records.
///
/// ```
/// header (44 bytes)   "GSJOURNL"  formatVersion u32  payloadFormat u32  lineage (16-byte UUID)
///                     baseVersion u64  CRC-32 of the 40 bytes before it (u32)
/// record              payload length u32  CRC-32 of the payload u32  payload
/// payload             store version u64, then a JSON document (see ``JournalRecord``)
/// ```
///
/// Integers are little-endian. The lineage names the store the journal belongs to: every
/// snapshot of the store carries the same one in its header. `baseVersion` is the store version
/// the journal continues: its first record is version `baseVersion + 1`, and each record is the
/// next version.
enum JournalFormatV1 {
    static let magic: [UInt8] = Array("GSJOURNL".utf8)
    static let formatVersion: UInt32 = 1
    /// The payload's document format: 0 is JSON, with the snapshot's JSON conventions.
    static let jsonPayload: UInt32 = 0
    static let headerSize = 44
    static let recordHeaderSize = 8
    /// A record's payload starts with its store version.
    static let minimumPayloadSize = 8

    struct Header: Sendable, Equatable {
        var lineage: UUID
        var baseVersion: UInt64
    }

    /// The 44 header bytes.
    static func encodeHeader(_ header: Header) -> [UInt8] {
        var bytes = magic
        bytes.appendLittleEndian(formatVersion)
        bytes.appendLittleEndian(jsonPayload)
        withUnsafeBytes(of: header.lineage.uuid) { bytes.append(contentsOf: $0) }
        bytes.appendLittleEndian(header.baseVersion)
        let crc = bytes.withUnsafeBytes { CRC32.checksum($0) }
        bytes.appendLittleEndian(crc)
        return bytes
    }

    /// A framed record: length, CRC, then `version` and `document`.
    static func frameRecord(version: UInt64, document: some Collection<UInt8>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(recordHeaderSize + minimumPayloadSize + document.count)
        bytes.appendLittleEndian(UInt32(0))
        bytes.appendLittleEndian(UInt32(0))
        bytes.appendLittleEndian(version)
        bytes.append(contentsOf: document)
        let payloadCount = bytes.count - recordHeaderSize
        precondition(payloadCount <= Int(UInt32.max), "GraphStore: a journal record of \(payloadCount) bytes is larger than 4 GiB")
        let crc = bytes.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[recordHeaderSize...])) }
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt32(payloadCount).littleEndian, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: crc.littleEndian, toByteOffset: 4, as: UInt32.self)
        }
        return bytes
    }

    /// Starts a record in `buffer`, which must be empty: room for the length and the CRC, then
    /// `version`. The record's document follows; ``endRecord(in:)`` fills the two fields in, so
    /// the record is framed where it was written, without a copy.
    ///
    /// - Complexity: O(1).
    static func beginRecord(version: UInt64, in buffer: inout FastJSONBuffer) {
        precondition(buffer.isEmpty, "GraphStore: a journal record starts an empty buffer")
        withUnsafeBytes(of: (UInt64(0), version.littleEndian)) { buffer.append(contentsOf: $0) }
    }

    /// Fills in the length and the CRC of the record ``beginRecord(version:in:)`` started.
    ///
    /// - Complexity: O(record size), for the CRC.
    static func endRecord(in buffer: inout FastJSONBuffer) {
        buffer.withUnsafeMutableBytes { raw in
            let payloadCount = raw.count - recordHeaderSize
            precondition(payloadCount <= Int(UInt32.max), "GraphStore: a journal record of \(payloadCount) bytes is larger than 4 GiB")
            let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: raw[recordHeaderSize...]))
            raw.storeBytes(of: UInt32(payloadCount).littleEndian, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: crc.littleEndian, toByteOffset: 4, as: UInt32.self)
        }
    }

    /// One intact record found by ``scan(_:path:)``.
    struct RecordLocation: Sendable, Equatable {
        var version: UInt64
        /// Offset of the record's length field.
        var start: Int
        /// The JSON document after the version.
        var document: Range<Int>
        var end: Int { document.upperBound }
    }

    /// What a journal file holds.
    struct Scan: Sendable {
        /// `nil` when the file is shorter than a header and starts like one: a journal whose
        /// creation was cut short, holding nothing.
        var header: Header?
        var records: [RecordLocation]
        /// Where the last intact record ends: the bytes after it are a torn append.
        var validEnd: Int
        var fileSize: Int
        var hasTornTail: Bool { validEnd < fileSize }
        /// The version the last record (or the header) brings the store to.
        var lastVersion: UInt64? { records.last?.version ?? header?.baseVersion }
    }

    /// Why a journal cannot be used, with the byte where it went wrong.
    struct Damage: Error, Sendable {
        var offset: Int
        var reason: String
        /// The records before the damage, in order (what recovery can keep).
        var intact: Scan
    }

    /// Reads the header and frames every record of `bytes`, checking each CRC and that the
    /// versions follow each other.
    ///
    /// A last record that is cut short, fails its CRC, or is followed only by zero bytes (a
    /// file extended but not written before a crash) is a torn append: it ends the scan
    /// without an error. A record whose length runs past the end of the file but which an
    /// intact record of the next version follows is not torn: its length is damaged. Anything
    /// else wrong is ``Damage`` at its byte.
    ///
    /// - Throws: ``Damage``, or ``GraphStoreError/unsupportedFormatVersion(path:found:supported:)``
    ///   for a newer layout.
    /// - Complexity: O(file size) for the CRCs.
    static func scan(_ bytes: UnsafeRawBufferPointer, path: String) throws -> Scan {
        let size = bytes.count
        var scan = Scan(header: nil, records: [], validEnd: 0, fileSize: size)
        guard size >= headerSize else {
            // Created under a temporary name and renamed whole, so a short header is foreign.
            guard size < magic.count ? bytes.elementsEqual(magic.prefix(size)) : bytes.prefix(magic.count).elementsEqual(magic) else {
                throw Damage(offset: 0, reason: "not a GraphStore journal (it does not start with \"GSJOURNL\")", intact: scan)
            }
            guard size == 0 else {
                throw Damage(offset: 0, reason: "the journal header is cut short: \(size) of \(headerSize) bytes", intact: scan)
            }
            return scan
        }
        guard bytes.prefix(magic.count).elementsEqual(magic) else {
            throw Damage(offset: 0, reason: "not a GraphStore journal (it does not start with \"GSJOURNL\")", intact: scan)
        }
        let version = bytes.loadLittleEndian(UInt32.self, at: 8)
        let storedHeaderCRC = bytes.loadLittleEndian(UInt32.self, at: 40)
        guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<40])) == storedHeaderCRC else {
            throw Damage(offset: 0, reason: "the journal header fails its checksum", intact: scan)
        }
        guard version <= formatVersion else {
            throw GraphStoreError.unsupportedFormatVersion(path: path, found: Int(version), supported: Int(formatVersion))
        }
        let payloadFormat = bytes.loadLittleEndian(UInt32.self, at: 12)
        guard payloadFormat == jsonPayload else {
            throw Damage(offset: 12, reason: "unknown journal payload format \(payloadFormat)", intact: scan)
        }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[16..<32])) }
        let header = Header(lineage: UUID(uuid: uuid), baseVersion: bytes.loadLittleEndian(UInt64.self, at: 32))
        scan.header = header
        scan.validEnd = headerSize

        var offset = headerSize
        var expected = header.baseVersion + 1
        while offset < size {
            let isTorn = { (reason: String) throws -> Void in
                // A bad record with only zero bytes, or nothing, after it is a torn append.
                if bytes[offset...].allSatisfy({ $0 == 0 }) { return }
                throw Damage(offset: offset, reason: reason, intact: scan)
            }
            guard size - offset >= recordHeaderSize else { return scan }
            let length = Int(bytes.loadLittleEndian(UInt32.self, at: offset))
            let end = offset + recordHeaderSize + length
            guard end <= size else {
                // A record longer than what follows is a torn append, unless a whole record
                // of the next version follows it: then its length is damaged, and cutting it
                // off would drop that record and every later one.
                if let next = intactRecord(of: expected + 1, in: bytes, after: offset) {
                    throw Damage(
                        offset: offset,
                        reason: "the journal record at byte \(offset) claims \(length) bytes, past the end of the file, but the intact record of store version \(expected + 1) follows at byte \(next): its length is damaged",
                        intact: scan)
                }
                // Nor is it torn if the record is all there: its version and checksum match
                // the bytes up to a shorter end (a torn append leaves its payload short, not
                // its length wrong), with nothing after it but the start of the next version's
                // record, itself torn. Cutting it off would drop a save that returned.
                if let payloadEnd = wholePayloadEnd(at: offset, version: expected, in: bytes) {
                    throw Damage(
                        offset: offset,
                        reason: "the journal record at byte \(offset) claims \(length) bytes, past the end of the file, but its store version \(expected) and checksum match the \(payloadEnd - offset - recordHeaderSize) bytes up to byte \(payloadEnd): its length is damaged",
                        intact: scan)
                }
                return scan
            }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(offset + recordHeaderSize)..<end])
            guard length >= minimumPayloadSize else {
                if end == size { return scan }
                try isTorn("the journal record at byte \(offset) is \(length) bytes long, too short to hold a store version")
                return scan
            }
            guard CRC32.checksum(payload) == bytes.loadLittleEndian(UInt32.self, at: offset + 4) else {
                if end == size { return scan }
                try isTorn("the journal record at byte \(offset) fails its checksum")
                return scan
            }
            let recordVersion = bytes.loadLittleEndian(UInt64.self, at: offset + recordHeaderSize)
            guard recordVersion == expected else {
                throw Damage(
                    offset: offset,
                    reason: "the journal record at byte \(offset) holds store version \(recordVersion), but version \(expected) comes next",
                    intact: scan)
            }
            scan.records.append(RecordLocation(
                version: recordVersion, start: offset, document: (offset + recordHeaderSize + minimumPayloadSize)..<end))
            scan.validEnd = end
            expected += 1
            offset = end
        }
        return scan
    }
}

extension JournalFormatV1 {
    /// The start of a record of store `version` with a matching checksum after byte `offset`
    /// of `bytes`, if there is one: found by its version's bytes, so a torn tail (shorter than
    /// one record) costs a pass over those few bytes.
    ///
    /// - Complexity: O(bytes after `offset`), plus a checksum per candidate.
    static func intactRecord(of version: UInt64, in bytes: UnsafeRawBufferPointer, after offset: Int) -> Int? {
        let size = bytes.count
        var candidate = offset + 1
        while candidate + recordHeaderSize + minimumPayloadSize <= size {
            defer { candidate += 1 }
            guard bytes.loadLittleEndian(UInt64.self, at: candidate + recordHeaderSize) == version else { continue }
            let length = Int(bytes.loadLittleEndian(UInt32.self, at: candidate))
            let end = candidate + recordHeaderSize + length
            guard length >= minimumPayloadSize, end <= size else { continue }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(candidate + recordHeaderSize)..<end])
            if CRC32.checksum(payload) == bytes.loadLittleEndian(UInt32.self, at: candidate + 4) { return candidate }
        }
        return nil
    }
}

extension JournalFormatV1 {
    /// Where the record at `offset`, of store `version`, ends if its checksum holds for a
    /// payload shorter than what follows it: the record is whole and only its length field is
    /// wrong. What follows that end must be nothing, or the start of a record of the next
    /// version (its version's bytes, when enough of it is there to hold them).
    ///
    /// `nil` when the record does not start with `version`, or no such end exists (a torn
    /// append, whose payload is short).
    ///
    /// - Complexity: O(bytes after `offset`): one pass for the candidate ends (the last few
    ///   bytes, and those followed by the next version's bytes), one checksum of the payload up
    ///   to the last candidate, taken in pieces between candidates.
    static func wholePayloadEnd(at offset: Int, version: UInt64, in bytes: UnsafeRawBufferPointer) -> Int? {
        let size = bytes.count
        let payloadStart = offset + recordHeaderSize
        guard size - payloadStart >= minimumPayloadSize,
              bytes.loadLittleEndian(UInt64.self, at: payloadStart) == version
        else { return nil }
        let stored = bytes.loadLittleEndian(UInt32.self, at: offset + 4)
        var crc: UInt32 = 0
        var checked = payloadStart
        for end in (payloadStart + minimumPayloadSize)...size {
            let after = size - end
            guard after < recordHeaderSize + minimumPayloadSize || bytes.loadLittleEndian(UInt64.self, at: end + recordHeaderSize) == version + 1
            else { continue }
            crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[checked..<end]), continuing: crc)
            checked = end
            if crc == stored { return end }
        }
        return nil
    }
}

extension [UInt8] {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}

extension UnsafeRawBufferPointer {
    func loadLittleEndian<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
