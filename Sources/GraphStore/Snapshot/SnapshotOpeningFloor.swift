import Foundation
internal import GraphStoreCoding

/// The first steps of opening a snapshot file, one at a time, so that the benchmark can set
/// the floor (read the bytes, gunzip, parse) beside the whole open (which also decodes the
/// objects, builds the tables and indexes, and fetches).
package enum SnapshotOpeningFloor {
    /// The bytes of the file at `url`, read as opening reads them (into memory, not mapped).
    ///
    /// - Throws: ``GraphStoreError/fileOperationFailed(path:operation:reason:)``, also for a
    ///   missing file.
    /// - Complexity: O(size of the file).
    package static func read(_ url: URL) throws -> Data {
        let raw: Data?
        do { raw = try FileReader.readFile(at: url) } catch { throw GraphStoreError(error, path: url.path) }
        guard let raw else { throw GraphStoreError.fileOperationFailed(path: url.path, operation: "open", reason: "no such file") }
        return raw
    }

    /// The document inside the gzip bytes `raw`, with the CRC and length checked: what opening
    /// does before parsing.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` for bytes that are not
    ///   gzip, or damaged.
    /// - Complexity: O(size of the document).
    package static func gunzip(_ raw: Data) throws -> Data {
        try SnapshotFileBackend.document(fromRaw: raw, path: "", limit: .max)
    }

    /// Parses the uncompressed `document` without decoding any object: JSON as opening
    /// parses it, the entity arrays in chunks of tokens and the rest into an outline; a binary
    /// property list into its object table, every object's marker and bounds checked as the
    /// decoder checks them. Returns the number of tokens or objects.
    ///
    /// - Throws: the parsers' syntax errors.
    /// - Complexity: O(size of the document).
    package static func parse(_ document: Data, format: SnapshotFormat) throws -> Int {
        switch format {
        case .json:
            return try FastJSONDecoder.withUTF8Representation(of: document) { bytes in
                let tokens = Counter()
                let outline = try FastJSONParser.parseChunked(
                    bytes, member: DocumentKey.entities.stringValue, tokensPerChunk: FastJSONChunkedDecoder.defaultTokensPerChunk
                ) { tokens.count += $0.tokenCount }
                return outline.tokenCount + tokens.count
            }
        case .binaryPropertyList:
            let table = try BPlistDocument(document)
            for reference in 0..<table.objectCount { _ = try table.object(reference) }
            return table.objectCount
        }
    }
}

/// Tokens counted by the parse floor's chunk handler, which runs on the parsing thread.
private final class Counter {
    var count = 0
}
