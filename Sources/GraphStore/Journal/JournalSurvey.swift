import Foundation
internal import GraphStoreCoding

/// The distinct sets of stored field names among a journal's upserted objects, per entity: how
/// a field that only journal records hold is checked as the store file's fields are (see
/// ``UnkeptFields``). A field renamed without a new model version would otherwise read as `nil`
/// from the journal, and the next snapshot would drop its values.
///
/// Made where the records are decoded (on the prefetch thread when there is one); checked once
/// the store's file says which records are newer than it.
struct JournalSurvey: Sendable {
    /// The last upserted object holding a set of field names, and where it is.
    struct Holder: Sendable {
        /// The store version of its record.
        var version: UInt64
        /// The index of the object among its record's upserts of its entity.
        var index: Int
        var object: any Entity
    }

    /// Per entity index: each distinct signature of non-null stored field names, with the last
    /// object holding it (the last, so that a signature held by any record newer than the
    /// store's file has a holder among those records).
    private(set) var signatures: [Int: [MemberNameSignature: Holder]] = [:]

    /// The survey of `records`, decoded with their member names.
    ///
    /// - Complexity: O(parts); one hash of a signature per part and distinct signature in it.
    init(_ records: [JournalRecord]) {
        for record in records {
            for part in record.parts {
                for (signature, index) in part.signatures where index < part.upserts.count {
                    signatures[part.entity, default: [:]][signature] = Holder(version: record.version, index: index, object: part.upserts[index])
                }
            }
        }
    }

    /// Throws when a record newer than `storedNumber` holds a field whose values the app's
    /// types would lose.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` naming the journal at
    ///   `path`, the entity, an object holding the field and the record.
    /// - Complexity: one encoding of a typed object per distinct name set; for a candidate,
    ///   a generic decoding of its record.
    func check(after storedNumber: UInt64, contents: JournalContents, schema: Schema, path: String) throws {
        let encoder = SnapshotCodec.makeJSONEncoder()
        for entity in signatures.keys.sorted() {
            let description = schema.entities[entity]
            // In record order, so the error names the first record at fault.
            let holders = signatures[entity, default: [:]].filter { $0.value.version > storedNumber }.sorted { $0.value.version < $1.value.version }
            for (signature, holder) in holders {
                // An object that does not encode is left to the first save, which reports it.
                guard let kept = try? UnkeptFields.encodedFieldNames(holder.object, encoder: encoder) else { continue }
                let unkept = signature.names.sorted().filter { !kept.contains($0) }
                // The record is read generically once, for all its object's unkept fields.
                guard !unkept.isEmpty, let location = contents.scan.records.first(where: { $0.version == holder.version }),
                      let stored = storedObject(of: description.name, at: holder.index, in: location, contents: contents)
                else { continue }
                let candidates = unkept.map { UnkeptFields.Candidate(entity: description.name, field: $0, index: 0) }
                guard let lost = UnkeptFields.lost(candidates, stored: MigratingStore([description.name: [stored]]), schema: schema) else { continue }
                throw GraphStoreError.codingFailed(
                    path: path, entity: description.name, id: stored["id"].map(ModelMigrator.idText),
                    reason: UnkeptFields.reason(lost)
                        + " (the journal record of store version \(holder.version), byte \(location.start)). The file was left untouched")
            }
        }
    }

    /// Upserted object `index` of `entity` in the record at `location`, as generic values in
    /// the JSON snapshot conventions.
    private func storedObject(
        of entity: String, at index: Int, in location: JournalFormatV1.RecordLocation, contents: JournalContents
    ) -> [String: SnapshotValue]? {
        guard case .object(let parts)? = try? SnapshotCodec.makeJSONDecoder().decode(SnapshotValue.self, from: contents.data[location.document]),
              case .array(let upserts)? = parts[entity]?["upsert"], upserts.indices.contains(index)
        else { return nil }
        return MigratingStore(conventional: [(name: entity, objects: [upserts[index]])])[entity].first
    }
}
