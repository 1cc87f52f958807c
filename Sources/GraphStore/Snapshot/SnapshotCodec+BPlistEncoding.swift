import Foundation
internal import GraphStoreCoding
import HashTreeCollections

/// The binary-plist snapshot document written with ``BPlistEncoder``: the document
/// `PropertyListEncoder` writes for it (header dictionary, then one array per entity), without
/// its losses, and large tables encoded in parts on several threads.
extension SnapshotCodec {
    /// The uncompressed binary property list: `{header: …, entities: {Post: […], …}}`.
    ///
    /// - Throws: `EncodingError` (or what an entity's `encode(to:)` throws) for the first
    ///   object, in document order, that cannot be encoded, with its coding path from the
    ///   document's root (`entities`, the entity name, the object's index, then inside it).
    /// - Complexity: O(objects), on up to `activeProcessorCount` threads for large tables.
    static func encodeBinaryPropertyListDocument(header: SnapshotHeaderV1, version: GraphVersion, schema: Schema) throws -> Data {
        // About 16 objects an object of the example model. The table ends up holding the whole
        // document: the first run of each large table and every small one are encoded into it,
        // the other runs appended. (The runs' own tables reserved as much in all before.)
        let table = BPlistObjectTable(expectedObjects: 64 + version.objectCount * 16)
        let headerReference = try BPlistEncoder.encode(header, into: table, path: CodingPath.root.appending(.key(DocumentKey.header)))
        var names: [UInt32] = [], arrays: [UInt32] = []
        for entity in schema.entities {
            let objects = version.tables[entity.index]
            let parts = objects.count >= parallelEncodingThreshold ? min(Processors.active, 8) : 1
            var elements: [UInt32] = []
            elements.reserveCapacity(objects.count)
            for (index, part) in try encodePlistParts(objects, parts: parts, entity: entity.name, first: table).enumerated() {
                // The first run was encoded into the document's table itself.
                let base = index == 0 ? 0 : table.append(part.table)
                elements.append(contentsOf: part.elements.lazy.map { $0 + base })
            }
            names.append(table.string(entity.name))
            arrays.append(table.array(elements))
        }
        let entities = table.dictionary(keys: names, values: arrays)
        let root = table.dictionary(
            keys: [table.string(DocumentKey.header.stringValue), table.string(DocumentKey.entities.stringValue)],
            values: [headerReference, entities])
        return table.serialized(top: root)
    }

    /// The table's objects in `parts` consecutive runs (on a thread each when there are
    /// several): the first into `first`, the others each into an object table of its own, so
    /// that only those are copied into `first` afterwards.
    ///
    /// - Throws: The error of the first run that failed, so the first object in document order
    ///   that cannot be encoded.
    private static func encodePlistParts(
        _ objects: TreeDictionary<ObjectKey, StoredObject>, parts: Int, entity: String, first: BPlistObjectTable
    ) throws -> [(table: BPlistObjectTable, elements: [UInt32])] {
        let count = objects.count
        if parts <= 1 { return [try encodePlistRun(objects.values[...], startIndex: 0, entity: entity, into: first)] }
        let bounds = (0...parts).map { part in objects.index(objects.startIndex, offsetBy: count * part / parts) }
        let shared = UncheckedTable(table: first)
        // Each run's table is made, filled and handed back by one thread (the first run's by the
        // thread that encodes it, while the caller waits); the lock orders the hand-over.
        return try inConsecutiveParts(count: count, parts: parts) { (part, range) throws(any Error) -> UncheckedPart in
            UncheckedPart(run: try encodePlistRun(
                objects.values[bounds[part]..<bounds[part + 1]], startIndex: range.lowerBound, entity: entity,
                into: part == 0 ? shared.table : BPlistObjectTable(expectedObjects: range.count * 16)))
        }.map(\.run)
    }

    /// `run`, elements `startIndex…` of the array of `entity`, encoded into `table`.
    private static func encodePlistRun(
        _ run: Slice<TreeDictionary<ObjectKey, StoredObject>.Values>, startIndex: Int, entity: String, into table: BPlistObjectTable
    ) throws -> (table: BPlistObjectTable, elements: [UInt32]) {
        // `entities.<name>`, as one shared node, so that paths inside objects rarely allocate.
        let path = CodingPath(node: CodingPath.root.appending(.key(DocumentKey.entities)).appending(.key(EntityNameKey(entity))).materialized)
        let encoder = BPlistTableEncoder(table: table, path: path)
        var elements: [UInt32] = []
        elements.reserveCapacity(run.count)
        var index = startIndex
        // The values alone: each key would be copied, and dropped, through its value witness.
        for stored in run {
            elements.append(try encoder.encode(stored.value, path: path.appending(.index(index))))
            index += 1
        }
        return (table, elements)
    }
}

/// The document's table, handed to the thread that encodes a table's first run into it.
/// `@unchecked`: while the runs are encoded, only that thread touches the table (the caller
/// waits for every run), and the lock that hands the runs back orders its writes before the
/// caller's next use.
private struct UncheckedTable: @unchecked Sendable {
    let table: BPlistObjectTable
}

/// One run's encoding, handed from the thread that made it to the one that joins the runs.
/// `@unchecked`: the table is written only by the thread that encoded the run (the document's
/// table, for a first run, while its owner waits; see ``UncheckedTable``), before the hand-over
/// under `Guarded`'s lock, and only read after it.
private struct UncheckedPart: @unchecked Sendable {
    let run: (table: BPlistObjectTable, elements: [UInt32])
}
