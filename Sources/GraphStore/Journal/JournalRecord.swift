import Foundation
internal import GraphStoreCoding
import HashTreeCollections

/// What one commit changed, as a journal record holds it: per entity, whether the whole table
/// was dropped, the deleted ids and the inserted or updated objects as the commit left them.
///
/// The record's document is JSON with the snapshot's conventions, keyed by entity name:
///
/// ```json
/// {"Note": {"upsert": [{"id": "…", "text": "hi", …}], "delete": ["…"]},
///  "Tag": {"clear": true}}
/// ```
///
/// Replaying applies, per entity, the clear, then the deletions, then the upserts.
struct JournalRecord: Sendable {
    struct Part: Sendable {
        var entity: Int
        var clear: Bool
        var deletes: [ObjectKey]
        var upserts: [any Entity]
        /// When decoded: each distinct signature of the non-null field names of the upserted
        /// objects as stored, with the index of the first object holding it (see ``JournalSurvey``).
        var signatures: [(signature: MemberNameSignature, firstIndex: Int)] = []
    }

    var version: UInt64
    var parts: [Part]

    /// The fewest objects of one entity a commit writes for its record to take the whole table
    /// (when they are at least half of it) instead of looking each id up.
    static let wholeTableThreshold = 1_024

    /// The record of the commit that made `version` with `change`.
    ///
    /// - Complexity: O(changed objects).
    init(_ version: GraphVersion, change: GraphChange, schema: Schema) {
        self.version = version.number
        parts = []
        // Only the entities the change names are visited (a save usually touches one), in
        // entity order; no entity description is copied.
        var entities: [Int] = []
        func visit(_ name: String) {
            if let index = schema.index(named: name), !entities.contains(index) { entities.append(index) }
        }
        change.inserted.keys.forEach(visit)
        change.updated.keys.forEach(visit)
        change.deleted.keys.forEach(visit)
        change.dropped.keys.forEach(visit)
        if entities.count > 1 { entities.sort() }
        parts.reserveCapacity(entities.count)
        for entity in entities {
            let name = schema.entities[entity].name
            let table = version.tables[entity]
            var part = Part(entity: entity, clear: change.dropped[name] != nil, deletes: [], upserts: [])
            for key in change.deleted[name] ?? [] where table[key] == nil { part.deletes.append(key) }
            let written = (change.inserted[name]?.count ?? 0) + (change.updated[name]?.count ?? 0)
            if written >= Self.wholeTableThreshold, written * 2 >= table.count {
                // Most of the table was written (a large import, say): every object of it is
                // upserted, read in the table's own order, without a hash lookup per id. An
                // unchanged object upserted again with its stored value changes nothing on
                // replay, and every id the commit removed is in `change.deleted` (taken above),
                // so replaying the record still gives exactly `version`'s table.
                part.upserts.reserveCapacity(table.count)
                for (_, stored) in table { part.upserts.append(stored.value) }
                parts.append(part)
                continue
            }
            func upsert(_ list: [ObjectKey]?) {
                guard let list else { return }
                part.upserts.reserveCapacity(part.upserts.count + list.count)
                for key in list {
                    if let stored = table[key] { part.upserts.append(stored.value) } else { part.deletes.append(key) }
                }
            }
            upsert(change.inserted[name])
            upsert(change.updated[name])
            parts.append(part)
        }
    }

    init(version: UInt64, parts: [Part]) {
        self.version = version
        self.parts = parts
    }

    // MARK: - Decoding

    /// The record whose JSON document is `document`.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` for an object that
    ///   does not decode as its entity or an entity the container does not register;
    ///   ``GraphStoreError/damagedFile(path:offset:reason:)`` for a document that is not JSON.
    /// - Complexity: O(size of the document).
    static func decode(version: UInt64, document: Data, schema: Schema, path: String, offset: Int) throws -> JournalRecord {
        do {
            let decoded = try FastJSONDecoder.decode(
                PayloadDecodable.self, from: document, userInfo: [DecodingContext.key: DecodingContext(schema: schema)])
            return JournalRecord(version: version, parts: decoded.parts)
        } catch let rejection as UnregisteredEntity {
            throw GraphStoreError.codingFailed(
                path: path, entity: rejection.name, id: nil,
                reason: "the journal record of store version \(version) (byte \(offset)) changes \(rejection.name), which the container does not register. The file was left untouched")
        } catch let error as DecodingError {
            let context: DecodingError.Context
            switch error {
            case .dataCorrupted(let c), .keyNotFound(_, let c), .typeMismatch(_, let c), .valueNotFound(_, let c): context = c
            @unknown default: throw GraphStoreError.damagedFile(path: path, offset: offset, reason: "\(error)")
            }
            let entity = context.codingPath.first?.stringValue
            guard let entity else {
                throw GraphStoreError.damagedFile(
                    path: path, offset: offset, reason: "the journal record of store version \(version) is not readable: \(context.debugDescription)")
            }
            throw GraphStoreError.codingFailed(
                path: path, entity: entity, id: nil,
                reason: "the journal record of store version \(version) (byte \(offset)) does not decode: \(context.debugDescription) (at \(context.codingPath.dotted))")
        }
    }

    /// The records at `locations` in the journal `data`: their upserted objects decoded per
    /// entity from one array (``decodeBatched(_:in:schema:parallel:)``), or, for documents of
    /// another shape, the documents read as one JSON array (large ones in parallel when
    /// `parallel`). When that fails, the records are decoded one by one, so the error names the
    /// record at fault.
    ///
    /// - Throws: as ``decode(version:document:schema:path:offset:)``.
    /// - Complexity: O(size of the records).
    static func decode(
        _ locations: [JournalFormatV1.RecordLocation], in data: Data, schema: Schema, path: String, parallel: Bool = true
    ) throws -> [JournalRecord] {
        guard locations.count > 1 else {
            return try locations.map { try decode(version: $0.version, document: data[$0.document], schema: schema, path: path, offset: $0.start) }
        }
        if let records = decodeBatched(locations, in: data, schema: schema, parallel: parallel) { return records }
        var array = Data(capacity: locations.reduce(2) { $0 + $1.document.count + 1 })
        array.append(UInt8(ascii: "["))
        for (index, location) in locations.enumerated() {
            if index > 0 { array.append(UInt8(ascii: ",")) }
            array.append(data[location.document])
        }
        array.append(UInt8(ascii: "]"))
        if let documents = try? FastJSONDecoder.decode(
            [PayloadDecodable].self, from: array, userInfo: [DecodingContext.key: DecodingContext(schema: schema)], parallel: parallel
        ), documents.count == locations.count {
            return zip(locations, documents).map { JournalRecord(version: $0.version, parts: $1.parts) }
        }
        return try locations.map { try decode(version: $0.version, document: data[$0.document], schema: schema, path: path, offset: $0.start) }
    }

    /// The part of the entity `entity` under `key`: its objects decoded one by one with the
    /// entity's own decoding function, as a snapshot's arrays are, so no generic type is made
    /// per record.
    private static func part(
        _ entity: EntityDescription, from container: KeyedDecodingContainer<EntityNameKey>, key: EntityNameKey
    ) throws -> Part {
        let members = try container.nestedContainer(keyedBy: PartKey.self, forKey: key)
        let clear = try members.decodeIfPresent(Bool.self, forKey: .clear) ?? false
        var upserts: [any Entity] = []
        if members.contains(.upsert), try !members.decodeNil(forKey: .upsert) {
            var array: any UnkeyedDecodingContainer = try members.nestedUnkeyedContainer(forKey: .upsert)
            if let count = array.count { upserts.reserveCapacity(count) }
            while !array.isAtEnd { upserts.append(try entity.decodeOne(&array)) }
        }
        var signatures: [(signature: MemberNameSignature, firstIndex: Int)] = []
        if !upserts.isEmpty, let survey = try members.nestedUnkeyedContainer(forKey: .upsert) as? any MemberNameSignatureSurvey {
            signatures = survey.distinctMemberNameSignatures()
        }
        let deletes = members.contains(.delete) ? try deletedKeys(entity.type, from: members) : []
        return Part(entity: entity.index, clear: clear, deletes: deletes, upserts: upserts, signatures: signatures)
    }

    private static func deletedKeys<E: Entity>(_ type: E.Type, from members: KeyedDecodingContainer<PartKey>) throws -> [ObjectKey] {
        (try members.decodeIfPresent([E.ID].self, forKey: .delete) ?? []).map { ObjectKey($0) }
    }

    // MARK: - Documents

    private struct UnregisteredEntity: Error {
        let name: String
    }

    private struct PayloadDecodable: Decodable {
        let parts: [Part]

        init(from decoder: any Decoder) throws {
            guard let context = decoder.userInfo[DecodingContext.key] as? DecodingContext else {
                preconditionFailure("GraphStore: journal decoding without a schema")
            }
            let container = try decoder.container(keyedBy: EntityNameKey.self)
            var parts: [Part] = []
            for key in container.allKeys {
                guard let index = context.schema.index(named: key.stringValue) else { throw UnregisteredEntity(name: key.stringValue) }
                parts.append(try JournalRecord.part(context.schema.entities[index], from: container, key: key))
            }
            self.parts = parts.sorted { $0.entity < $1.entity }
        }
    }
}

