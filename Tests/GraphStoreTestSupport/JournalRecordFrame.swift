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

    /// Appends `frame(version:document:)` to the journal file at `url`.
    public static func append(version: UInt64, document: String, to url: URL) throws {
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: frame(version: version, document: document))
    }
}
