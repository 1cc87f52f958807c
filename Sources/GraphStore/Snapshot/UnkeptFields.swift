import Foundation
internal import GraphStoreCoding

/// Finds stored fields whose values the app's types would lose: a field that a stored object
/// holds with a non-null value, but that the app's type neither writes back nor reads. A
/// renamed optional field is the common case: the new name reads as `nil`, the old name is
/// not read, and the next write of the store would drop every old value.
///
/// Opening a store at its own model version, and migrating one from an older version, refuse
/// such a store (the file is left untouched) and name the entity, the field and an object;
/// the fix is a model version whose migration renames or removes the field.
///
/// Two stages keep the common case cheap:
/// 1. ``candidates(_:objects:schema:)``: the decoders report each distinct set of non-null
///    member names per entity (``MemberNameSurvey``, a comparison of keys with the previous
///    object's), and the first typed object holding each set is encoded again. A name that
///    the encoding lacks is a candidate. A store written by the same types has none.
/// 2. ``lost(_:stored:schema:)``: only for candidates, with the stored objects as generic
///    values: the candidate's object is decoded with and without the field. When the two
///    decode alike, the type does not read the field, and its values would be lost. A type
///    that reads an old name itself (a fallback in a custom `init(from:)`) passes.
///
/// Fields inside nested values are not compared; only an entity's own fields are.
package enum UnkeptFields {
    /// A stored field that the app's type did not write back for the object at `index`.
    struct Candidate: Equatable {
        let entity: String
        let field: String
        /// The index, in the stored order of `entity`, of an object holding the field.
        let index: Int
    }

    /// The fields that some stored object holds with a non-null value and that the app's type
    /// does not encode for the first object holding exactly that set of fields.
    ///
    /// - Parameters:
    ///   - names: per entity of `schema`, the distinct member-name sets of its stored objects.
    ///   - objects: per entity of `schema`, the typed objects in stored order.
    /// - Complexity: one encoding of a typed object per distinct name set.
    static func candidates(_ names: [[MemberNames]], objects: [[any Entity]], schema: Schema) -> [Candidate] {
        var candidates: [Candidate] = []
        let encoder = SnapshotCodec.makeJSONEncoder()
        for entity in schema.entities where entity.index < names.count {
            var reported: Set<String> = []
            for set in names[entity.index] {
                guard set.firstIndex < objects[entity.index].count else { continue }
                // An object that does not encode is left to the first save, which reports it.
                guard let kept = try? encodedFieldNames(objects[entity.index][set.firstIndex], encoder: encoder) else { continue }
                for field in set.names.sorted() where !kept.contains(field) && reported.insert(field).inserted {
                    candidates.append(Candidate(entity: entity.name, field: field, index: set.firstIndex))
                }
            }
        }
        return candidates
    }

    /// The first candidate whose values the app's type would lose: decoding its object
    /// without the field gives the same object as decoding it with the field.
    ///
    /// - Parameter stored: the stored objects as generic values in the JSON snapshot
    ///   conventions (``MigratingStore/init(conventional:)``).
    /// - Complexity: four encodings or decodings of one object per candidate.
    static func lost(_ candidates: [Candidate], stored: MigratingStore, schema: Schema) -> Candidate? {
        let encoder = SnapshotCodec.makeJSONEncoder()
        for candidate in candidates {
            guard let entity = schema.entities.first(where: { $0.name == candidate.entity }) else { continue }
            let objects = stored[candidate.entity]
            guard objects.indices.contains(candidate.index) else { continue }
            let object = objects[candidate.index]
            var without = object
            without[candidate.field] = nil
            do {
                let with = try roundTrip(object, as: entity.type, encoder: encoder)
                // Required by the type: it reads the field.
                guard let withoutField = try? roundTrip(without, as: entity.type, encoder: encoder) else { continue }
                if with == withoutField { return candidate }
            } catch {
                continue
            }
        }
        return nil
    }

    /// What to tell the user about a field whose values would be lost.
    static func reason(_ candidate: Candidate) -> String {
        reason(entity: candidate.entity, field: candidate.field)
    }

    /// What to tell the user about the field `field` of `entity`, stored with values that the
    /// app's type neither reads nor writes; also the SQLite store's words for such a column.
    package static func reason(entity: String, field: String) -> String {
        "the file holds \(entity).\(field), which the app's \(entity) neither reads nor writes: its values would be lost at the next save. If the field was renamed or removed, declare a new model version whose migration has .renameField(\"\(field)\", to: …, in: \"\(entity)\") or .removeField(\"\(field)\", in: \"\(entity)\")"
    }

    // MARK: - Helpers

    /// The names of the fields `object` encodes.
    static func encodedFieldNames(_ object: some Entity, encoder: JSONEncoder) throws -> Set<String> {
        let fields = try JSONSerialization.jsonObject(with: encoder.encode(object)) as? [String: Any] ?? [:]
        return Set(fields.keys)
    }

    /// `object` decoded as `type` and encoded again, as a Foundation value to compare.
    ///
    /// Decoded by ``FastJSONDecoder``, as a store's objects are: it reads a URL with a base in
    /// the form a JSON snapshot and a journal hold it, `{"relative": …, "base": …}`, which
    /// `JSONDecoder` refuses (so an object holding one would pass unchecked). Encoded again by
    /// `JSONEncoder`: only the comparison of the two objects counts, and it accepts every type.
    private static func roundTrip<E: Entity>(_ object: [String: SnapshotValue], as type: E.Type, encoder: JSONEncoder) throws -> NSDictionary {
        let value = try FastJSONDecoder.decode(E.self, from: encoder.encode(SnapshotValue.object(object)))
        return try JSONSerialization.jsonObject(with: encoder.encode(value)) as? NSDictionary ?? [:]
    }
}
