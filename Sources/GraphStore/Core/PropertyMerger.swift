import Foundation

/// Merges two versions of an object property by property, for ``MergePolicy/mergeByProperty``:
/// the top-level properties (`Codable` keys) the saving context changed relative to its base
/// take its values, the others keep the stored ones.
///
/// Runs only on a conflict, so it works on the objects' `Codable` form: each side is encoded as
/// a keyed JSON object, the keys are compared one by one, and the merged object is decoded
/// back. A nested value or an array is one property: it is taken whole from one side.
enum PropertyMerger {
    /// `stored` with every top-level property in which `mine` differs from `base` taken from
    /// `mine` (a property `mine` no longer encodes, such as an optional set to `nil`, is removed).
    ///
    /// ```swift
    /// // base: (text "a", archived false); mine: (text "b", archived false);
    /// // stored: (text "a", archived true) → merged: (text "b", archived true)
    /// ```
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` when a side does not
    ///   encode as a keyed object or the merged properties do not decode.
    /// - Complexity: O(size of the three encoded objects).
    static func merge<E: Entity>(base: E, mine: E, stored: E) throws -> E {
        do {
            let encoder = KeyedCodableForm.makeEncoder()
            let baseFields = try fields(of: base, encoder)
            let mineFields = try fields(of: mine, encoder)
            var merged = try fields(of: stored, encoder)
            for key in Set(baseFields.keys).union(mineFields.keys) where try !isSame(baseFields[key], mineFields[key]) {
                merged[key] = mineFields[key]
            }
            return try KeyedCodableForm.makeDecoder().decode(E.self, from: JSONSerialization.data(withJSONObject: merged))
        } catch let error as GraphStoreError {
            throw error
        } catch {
            throw GraphStoreError.codingFailed(path: nil, entity: E.entityName, id: "\(mine.id)", reason: "merging its properties with the stored object failed: \(error)")
        }
    }

    private static func fields<E: Entity>(of object: E, _ encoder: JSONEncoder) throws -> [String: Any] {
        guard let fields = try JSONSerialization.jsonObject(with: encoder.encode(object)) as? [String: Any] else {
            throw GraphStoreError.codingFailed(path: nil, entity: E.entityName, id: "\(object.id)", reason: "it does not encode as an object with keyed properties, so it cannot be merged by property")
        }
        return fields
    }

    /// Whether two decoded JSON values are the same, compared in their canonical encoding.
    private static func isSame(_ a: Any?, _ b: Any?) throws -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case let (a?, b?):
            return try JSONSerialization.data(withJSONObject: [a], options: [.sortedKeys])
                == JSONSerialization.data(withJSONObject: [b], options: [.sortedKeys])
        }
    }
}

/// The `Codable` form in which an object's top-level properties are compared and rewritten
/// (``PropertyMerger``, ``IdentityRewriter``): JSON, with dates written by their bit pattern so
/// that a date survives the trip through `JSONSerialization` exactly.
///
/// Known limit, not yet fixed: `JSONEncoder` writes a `URL` with a base as its absolute string,
/// so an object merged by property or moved to another id by a unique constraint comes back with
/// such a URL (in any of its properties) without its base, not `==` to the one saved. The store's
/// own coders keep it (`FastJSONEncoder` writes the URL's `Codable` form); this form would need
/// a coder that keeps both that and the dates' bit patterns.
enum KeyedCodableForm {
    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.timeIntervalSinceReferenceDate.bitPattern)
        }
        encoder.dataEncodingStrategy = .base64
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            Date(timeIntervalSinceReferenceDate: Double(bitPattern: try decoder.singleValueContainer().decode(UInt64.self)))
        }
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }
}
