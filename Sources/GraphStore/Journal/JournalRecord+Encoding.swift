import Foundation
internal import GraphStoreCoding

extension JournalRecord {
    /// The fewest objects in one entity's part worth encoding in runs on several threads.
    static let parallelEncodingThreshold = 4_096

    /// The framed record, ready to append: its JSON document written by ``FastJSONEncoder``
    /// (a large part's objects in runs on several threads) after room for the frame's fields,
    /// which are then filled in (no copy of the document).
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` naming the entity and
    ///   the id of the object that does not encode.
    /// - Complexity: O(size of the changed objects).
    func framed(schema: Schema, path: String) throws -> FastJSONBuffer {
        var json = FastJSONBuffer(capacity: 256)
        JournalFormatV1.beginRecord(version: version, in: &json)
        json.append(UInt8(ascii: "{"))
        for (position, part) in parts.enumerated() {
            // Only the name and the type: a whole description is many references to copy.
            let name = schema.entities[part.entity].name
            if position > 0 { json.append(UInt8(ascii: ",")) }
            json.appendString(name)
            json.append(contentsOf: ":{")
            var separator: StaticString = ""
            if part.clear {
                json.append(contentsOf: "\"clear\":true")
                separator = ","
            }
            do {
                if !part.deletes.isEmpty {
                    json.append(contentsOf: separator)
                    json.append(contentsOf: "\"delete\":")
                    try Self.encodeIDs(part.deletes, schema.entities[part.entity].type, entity: name, into: &json)
                    separator = ","
                }
                if !part.upserts.isEmpty {
                    json.append(contentsOf: separator)
                    json.append(contentsOf: "\"upsert\":[")
                    try Self.encodeUpserts(part.upserts, entity: name, into: &json)
                    json.append(UInt8(ascii: "]"))
                }
            } catch let error as EncodingError {
                throw Self.describe(error, part: part, entity: schema.entities[part.entity], path: path)
            }
            json.append(UInt8(ascii: "}"))
        }
        json.append(UInt8(ascii: "}"))
        JournalFormatV1.endRecord(in: &json)
        return json
    }

    /// Appends the ids as the entity's `delete` array (at that path, so that their nesting
    /// counts from the record's root).
    private static func encodeIDs<E: Entity>(_ keys: [ObjectKey], _ type: E.Type, entity: String, into json: inout FastJSONBuffer) throws {
        let path = CodingPath.root.appending(.key(EntityNameKey(entity))).appending(.key(PartKey.delete))
        try FastJSONEncoder.encode(keys.compactMap { $0.value(as: E.ID.self) }, into: &json, userInfo: [:], path: path)
    }

    /// Appends the objects as the elements of the entity's `upsert` array.
    private static func encodeUpserts(_ objects: [any Entity], entity: String, into json: inout FastJSONBuffer) throws {
        let runs = objects.count >= parallelEncodingThreshold ? min(Processors.active, 8) : 1
        guard runs > 1 else {
            try FastJSONEncoder.encodeElements(into: &json, path: upsertPath(entity), startIndex: 0) { array in
                for object in objects { try array.encode(object) }
            }
            return
        }
        // The first run that failed holds the first object (in order) that cannot be encoded.
        let encoded = try inConsecutiveParts(count: objects.count, parts: runs) { (_, range) throws(any Error) -> Data in
            var buffer = FastJSONBuffer(capacity: 4_096 + range.count * 128)
            try FastJSONEncoder.encodeElements(into: &buffer, path: upsertPath(entity), startIndex: range.lowerBound) { array in
                for object in objects[range] { try array.encode(object) }
            }
            return buffer.takeData()
        }
        for part in encoded { json.append(contentsOf: part) }
    }

    /// `<entity>.upsert`, as one shared node, so that paths inside objects rarely allocate.
    private static func upsertPath(_ entity: String) -> CodingPath {
        CodingPath(node: CodingPath.root.appending(.key(EntityNameKey(entity))).appending(.key(PartKey.upsert)).materialized)
    }

    private static func describe(_ error: EncodingError, part: Part, entity: EntityDescription, path: String) -> GraphStoreError {
        guard case .invalidValue(_, let context) = error else {
            return .codingFailed(path: path, entity: entity.name, id: nil, reason: "\(error)")
        }
        let codingPath = context.codingPath
        let index = codingPath.count > 2 && codingPath[1].stringValue == PartKey.upsert.stringValue ? codingPath[2].intValue : nil
        let id = index.flatMap { part.upserts.indices.contains($0) ? entity.key(part.upserts[$0]).description : nil }
        let at = codingPath.abbreviatedForMessages.dotted
        return .codingFailed(
            path: path, entity: entity.name, id: id,
            reason: "a saved object does not encode for the journal: \(context.debugDescription) (at \(at)); nothing was saved")
    }

    /// The members of an entity's part of a record.
    enum PartKey: String, CodingKey {
        case clear, delete, upsert
    }
}
