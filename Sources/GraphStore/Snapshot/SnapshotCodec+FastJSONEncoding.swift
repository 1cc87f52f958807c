import Foundation
internal import GraphStoreCoding
import HashTreeCollections

/// The JSON snapshot document written with ``FastJSONEncoder``: the same document as
/// `JSONEncoder` writes for it (header object, then one array per entity), with members in
/// their encoding order, and large tables encoded in parts on several threads.
extension SnapshotCodec {
    /// The fewest objects in a table worth encoding in parts on other threads: below this,
    /// handing the work over costs more than it saves.
    static let parallelEncodingThreshold = 4_096

    /// The uncompressed JSON document: `{"header":…,"entities":{"Post":[…],…}}`, entities in
    /// schema order.
    ///
    /// - Throws: What ``FastJSONEncoder`` throws for the first object (in document order)
    ///   that cannot be encoded, with its coding path from the document's root
    ///   (`entities`, the entity name, the object's index, then inside the object).
    /// - Complexity: O(objects), on up to `activeProcessorCount` threads for large tables.
    static func encodeJSONDocument(header: SnapshotHeaderV1, version: GraphVersion, schema: Schema) throws -> Data {
        Data(concatenating: try encodeJSONPieces(header: header, version: version, schema: schema, deflateLevel: nil).map(\.plainData))
    }

    /// The document of ``encodeJSONDocument(header:version:schema:)`` in consecutive pieces, as
    /// the threads that encoded large tables made them: a compressor takes them without their
    /// being copied into one buffer first.
    ///
    /// With a `deflateLevel`, each thread that encodes a part of a large table deflates its
    /// text a chunk at a time as it goes, into one small buffer it reuses: its part comes back
    /// as a ``GzipSegment/deflated(_:)`` run, the rest of the document as plain pieces.
    ///
    /// - Throws: As ``encodeJSONDocument(header:version:schema:)``; a ``FileLayerError`` when
    ///   deflating fails.
    static func encodeJSONPieces(header: SnapshotHeaderV1, version: GraphVersion, schema: Schema, deflateLevel: Int32?) throws -> [GzipSegment] {
        let objectCount = version.objectCount
        var pieces: [GzipSegment] = []
        // About 300 bytes an object, for the example model; growing later costs little.
        var buffer = FastJSONBuffer(capacity: 4_096 + objectCount * 256)
        buffer.append(contentsOf: "{\"header\":")
        try FastJSONEncoder.encode(header, into: &buffer, userInfo: [:], path: CodingPath.root.appending(.key(DocumentKey.header)))
        buffer.append(contentsOf: ",\"entities\":{")
        for (position, entity) in schema.entities.enumerated() {
            if position > 0 { buffer.append(UInt8(ascii: ",")) }
            buffer.appendString(entity.name)
            buffer.append(contentsOf: ":[")
            let table = version.tables[entity.index]
            let parts = table.count >= parallelEncodingThreshold ? min(Processors.active, 8) : 1
            if parts > 1 {
                let encoded = try encodeInParts(table, parts: parts, entity: entity.name, deflateLevel: deflateLevel)
                pieces.append(.plain(buffer.takeData()))
                pieces += encoded
                buffer = FastJSONBuffer(capacity: 4_096 + (objectCount - table.count) * 256)
            } else {
                try encodeObjects(table.values[...], startIndex: 0, entity: entity.name, into: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        }
        buffer.append(contentsOf: "}}")
        pieces.append(.plain(buffer.takeData()))
        return pieces
    }

    /// Appends `objects` as the elements from `startIndex` on of the array of `entity`.
    private static func encodeObjects(
        _ objects: Slice<TreeDictionary<ObjectKey, StoredObject>.Values>, startIndex: Int, entity: String, into buffer: inout FastJSONBuffer
    ) throws {
        // `entities.<name>`, as one shared node, so that paths inside objects rarely allocate.
        let path = CodingPath(node: CodingPath.root.appending(.key(DocumentKey.entities)).appending(.key(EntityNameKey(entity))).materialized)
        try FastJSONEncoder.encodeElements(into: &buffer, path: path, startIndex: startIndex) { array in
            // The values alone: each key would be copied, and dropped, through its value witness.
            for stored in objects { try array.encode(stored.value) }
        }
    }

    /// The table's elements in `parts` consecutive runs, each encoded on its own thread (and
    /// deflated there as it is encoded, with a `deflateLevel`).
    ///
    /// - Throws: The error of the first run that failed, so the first object (in document
    ///   order) that cannot be encoded, as when encoding on one thread.
    private static func encodeInParts(
        _ table: TreeDictionary<ObjectKey, StoredObject>, parts: Int, entity: String, deflateLevel: Int32?
    ) throws -> [GzipSegment] {
        let count = table.count
        let bounds = (0...parts).map { part in table.index(table.startIndex, offsetBy: count * part / parts) }
        return try inConsecutiveParts(count: count, parts: parts) { (part, range) throws(any Error) -> GzipSegment in
            let objects = table.values[bounds[part]..<bounds[part + 1]]
            guard let deflateLevel else {
                var buffer = FastJSONBuffer(capacity: 4_096 + (count / parts) * 256)
                try encodeObjects(objects, startIndex: range.lowerBound, entity: entity, into: &buffer)
                return .plain(buffer.takeData())
            }
            return .deflated(try encodeDeflating(objects, startIndex: range.lowerBound, entity: entity, level: deflateLevel))
        }
    }

    /// The objects of a chunk encoded into the buffer before it is deflated: about 300 KiB of
    /// text for the example model's posts, which stays in a processor's cache until zlib reads
    /// it.
    static let deflatingChunkObjects = 1_024

    /// `objects`, elements `startIndex…` of the array of `entity`, encoded a chunk at a time
    /// into one buffer, each chunk deflated before the next is encoded.
    private static func encodeDeflating(
        _ objects: Slice<TreeDictionary<ObjectKey, StoredObject>.Values>, startIndex: Int, entity: String, level: Int32
    ) throws -> DeflatedRun {
        var deflater = try RunDeflater(level: level, expectedBytes: objects.count * 256)
        var buffer = FastJSONBuffer(capacity: 4_096 + min(objects.count, deflatingChunkObjects) * 512)
        var start = objects.startIndex
        var index = startIndex
        var remaining = objects.count
        while remaining > 0 {
            let step = min(remaining, deflatingChunkObjects)
            let end = objects.index(start, offsetBy: step)
            buffer.removeAll()
            try encodeObjects(objects[start..<end], startIndex: index, entity: entity, into: &buffer)
            try buffer.withUnsafeBytes { (bytes) throws(FileLayerError) in try deflater.append(bytes) }
            index += step
            remaining -= step
            start = end
        }
        return try deflater.finish()
    }
}
