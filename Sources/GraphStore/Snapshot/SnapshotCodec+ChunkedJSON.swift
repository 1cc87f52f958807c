import Foundation
import Synchronization
internal import GraphStoreCoding

/// Opening a JSON snapshot without a token tape of the whole document: each entity array is
/// parsed in chunks of a few thousand tokens, and each chunk is decoded (on worker threads
/// and the parsing one) while the parse goes on. The tapes alive at once are a few small ones,
/// where a whole-document tape takes about twice the document's size.
///
/// Only the way that succeeds: anything that would be an error (bytes that are not JSON, a
/// value of the wrong type, a header or count that does not check, an unregistered entity,
/// an unusual layout) gives `nil`, and the caller reads the document the whole-tape way,
/// which finds the same problem and reports it exactly as before (file, entity, element,
/// offset).
extension SnapshotCodec {
    /// Entity objects and their member-name survey, per entity of the schema.
    struct ChunkedObjects {
        let header: SnapshotHeaderV1
        let objects: [[any Entity]]
        let memberNames: [[MemberNames]]
    }

    /// What one chunk decoded to.
    private enum ChunkOutcome: Sendable {
        case decoded([any Entity], [MemberNames])
        /// Not decoded: an entity the schema does not register, or after another chunk failed.
        case skipped
        case failed
    }

    /// The header and objects of the JSON document in `data`, decoded in chunks, or `nil`
    /// when the document must be read the whole-tape way (see above).
    ///
    /// - Parameter tokensPerChunk: The chunks' size (tests make them small).
    /// - Complexity: O(size of the document), plus the decoding.
    static func decodeJSONInChunks(
        _ data: Data, context: DecodingContext, survey: Bool, tokensPerChunk: Int = FastJSONChunkedDecoder.defaultTokensPerChunk,
        workers: Int = FastJSONChunkedDecoder.defaultWorkers
    ) -> ChunkedObjects? {
        let schema = context.schema
        // A header that does not check, or names another model version, stops opening before
        // any object is decoded: leave that to the whole-tape way, without decoding anything.
        if let leading = leadingHeader(data), !headerPasses(leading, context: context) { return nil }
        let failed = FailureFlag()
        let userInfo: [CodingUserInfoKey: any Sendable] = [DecodingContext.key: context]
        let output: FastJSONChunkedDecoder.Output<ChunkOutcome>
        let decodedOutline: DocumentOutline?
        do {
            // The outline points into the bytes parsed, which for a document not in UTF-8 are a
            // converted copy that lives only inside this closure: it is decoded here.
            (output, decodedOutline) = try FastJSONDecoder.withUTF8Representation(of: data) { bytes in
                let output = try FastJSONChunkedDecoder.decode(bytes, member: DocumentKey.entities.stringValue, tokensPerChunk: tokensPerChunk, workers: workers) { chunk -> ChunkOutcome in
                    guard !failed.value.load(ordering: .relaxed), let index = schema.index(named: chunk.array) else { return .skipped }
                    let entity = schema.entities[index]
                    do {
                        let objects = try chunk.withElements(userInfo: userInfo, path: [DocumentKey.entities, EntityNameKey(chunk.array)]) { array in
                            var objects: [any Entity] = []
                            objects.reserveCapacity(array.count ?? 0)
                            while !array.isAtEnd { objects.append(try entity.decodeOne(&array)) }
                            return objects
                        }
                        return .decoded(objects, survey ? chunk.distinctMemberNames() : [])
                    } catch {
                        failed.value.store(true, ordering: .relaxed)
                        return .failed
                    }
                }
                return (output, try? output.outline.decode(DocumentOutline.self))
            }
        } catch {
            return nil
        }
        guard !failed.value.load(ordering: .relaxed), let outline = decodedOutline else { return nil }
        let header = outline.header
        let names = output.outline.arrayNames
        guard output.outline.chunkedObjects == 1, headerPasses(header, context: context),
              Set(names).count == names.count, Set(names) == Set(outline.counts.keys) else { return nil }
        for (name, count) in outline.counts where schema.index(named: name) == nil {
            guard count == 0, (try? SnapshotHeaderCheck.count(of: name, found: 0, in: header)) != nil else { return nil }
        }
        // Per entity: its chunks' objects and survey, in document order.
        var objects = Array(repeating: [any Entity](), count: schema.entities.count)
        var memberNames = Array(repeating: [MemberNames](), count: schema.entities.count)
        var seenNames = Array(repeating: Set<Set<String>>(), count: schema.entities.count)
        for entity in schema.entities {
            objects[entity.index].reserveCapacity(outline.counts[entity.name] ?? 0)
        }
        for chunk in output.chunks {
            guard let index = schema.index(named: chunk.array) else { continue }
            guard case .decoded(let decoded, let names) = chunk.result, objects[index].count == chunk.firstIndex else { return nil }
            objects[index].append(contentsOf: decoded)
            for found in names where seenNames[index].insert(found.names).inserted { memberNames[index].append(found) }
        }
        for entity in schema.entities {
            guard objects[entity.index].count == outline.counts[entity.name] ?? 0,
                  (try? SnapshotHeaderCheck.count(of: entity.name, found: objects[entity.index].count, in: header)) != nil else { return nil }
        }
        guard (try? SnapshotHeaderCheck.countedEntities(of: header, present: { outline.counts[$0] != nil })) != nil else { return nil }
        return ChunkedObjects(header: header, objects: objects, memberNames: memberNames)
    }

    /// Whether `header` passes the checks made before any object is decoded.
    private static func headerPasses(_ header: SnapshotHeaderV1, context: DecodingContext) -> Bool {
        guard (try? SnapshotHeaderCheck.header(format: header.format, formatVersion: header.formatVersion)) != nil else { return false }
        if let expected = context.modelVersion, header.modelVersion != expected { return false }
        return true
    }

    /// The header of a document that starts with it as written (`{"header":{…}`), decoded
    /// from its own bytes; `nil` when the document starts otherwise or the header does not
    /// decode.
    ///
    /// - Complexity: O(size of the header).
    static func leadingHeader(_ data: Data) -> SnapshotHeaderV1? {
        let prefix = Array(#"{"header":{"#.utf8)
        guard data.count > prefix.count, data.starts(with: prefix) else { return nil }
        let end: Int? = data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var depth = 0, i = prefix.count - 1, inString = false
            while i < bytes.count {
                let c = bytes[i]
                if inString {
                    if c == UInt8(ascii: "\\") { i += 1 } else if c == UInt8(ascii: "\"") { inString = false }
                } else if c == UInt8(ascii: "\"") {
                    inString = true
                } else if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                    depth += 1
                } else if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                    depth -= 1
                    if depth == 0 { return i + 1 }
                }
                i += 1
            }
            return nil
        }
        guard let end else { return nil }
        let start = data.startIndex + prefix.count - 1
        return try? FastJSONDecoder.decode(SnapshotHeaderV1.self, from: data[start..<(data.startIndex + end)])
    }
}

/// Set once a chunk fails to decode: the other chunks are not decoded any more.
private final class FailureFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// The document around its entity arrays: the header, and each entity array's element count.
private struct DocumentOutline: Decodable {
    let header: SnapshotHeaderV1
    let counts: [String: Int]

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DocumentKey.self)
        header = try container.decode(SnapshotHeaderV1.self, forKey: .header)
        let entities = try container.nestedContainer(keyedBy: EntityNameKey.self, forKey: .entities)
        var counts: [String: Int] = [:]
        for key in entities.allKeys {
            // Only the count: a chunked array's elements are not in the outline.
            let array = try entities.nestedUnkeyedContainer(forKey: key)
            guard let count = array.count, counts.updateValue(count, forKey: key.stringValue) == nil else {
                throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: entities.codingPath, debugDescription: "repeated entity"))
            }
        }
        self.counts = counts
    }
}
