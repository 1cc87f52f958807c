import CZlib
import Foundation

/// Journal records framed as the journal's format 1 frames them (a 32-bit little-endian
/// payload length, the payload's CRC-32, then the payload: the 64-bit little-endian store
/// version and the JSON document), written with zlib's CRC here so that a test can append a
/// record no save would write, with checksums that match.
public enum JournalRecordFrame {
    /// The framed bytes of a record of store version `version` holding `document`.
    public static func frame(version: UInt64, document: String) -> Data {
        var payload = Data()
        withUnsafeBytes(of: version.littleEndian) { payload.append(contentsOf: $0) }
        payload.append(contentsOf: Array(document.utf8))
        let crc = payload.withUnsafeBytes { raw in
            UInt32(crc32(0, raw.bindMemory(to: Bytef.self).baseAddress, uInt(raw.count)))
        }
        var framed = Data()
        withUnsafeBytes(of: UInt32(payload.count).littleEndian) { framed.append(contentsOf: $0) }
        withUnsafeBytes(of: crc.littleEndian) { framed.append(contentsOf: $0) }
        return framed + payload
    }

    /// The 44-byte header of a journal of the store `lineage` that continues `baseVersion`.
    public static func header(lineage: UUID, baseVersion: UInt64) -> Data {
        var bytes = Data("GSJOURNL".utf8)
        withUnsafeBytes(of: UInt32(1).littleEndian) { bytes.append(contentsOf: $0) }  // format version
        withUnsafeBytes(of: UInt32(0).littleEndian) { bytes.append(contentsOf: $0) }  // JSON payloads
        withUnsafeBytes(of: lineage.uuid) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: baseVersion.littleEndian) { bytes.append(contentsOf: $0) }
        let crc = bytes.withUnsafeBytes { raw in
            UInt32(crc32(0, raw.bindMemory(to: Bytef.self).baseAddress, uInt(raw.count)))
        }
        withUnsafeBytes(of: crc.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Appends `frame(version:document:)` to the journal file at `url`.
    public static func append(version: UInt64, document: String, to url: URL) throws {
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: frame(version: version, document: document))
    }
}
