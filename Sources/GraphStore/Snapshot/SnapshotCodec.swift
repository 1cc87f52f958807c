import Foundation
internal import GraphStoreCoding

/// Encodes a graph version as a snapshot document (header, then one array per entity) and
/// decodes one back, checking the header, the counts and the graph's integrity.
package enum SnapshotCodec {
    // MARK: - Encoding

    /// The document for `version` in `format`, uncompressed.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` naming the object
    ///   that could not be encoded.
    /// - Complexity: O(objects).
    static func encode(
        _ version: GraphVersion, schema: Schema, format: SnapshotFormat, modelVersion: String, savedAt: Date, path: String,
        lineage: UUID? = nil
    ) throws -> Data {
        Data(concatenating: try encodePieces(
            version, schema: schema, format: format, modelVersion: modelVersion, savedAt: savedAt, path: path, lineage: lineage))
    }

    /// The document of ``encode(_:schema:format:modelVersion:savedAt:path:lineage:)`` in
    /// consecutive pieces (a JSON document as the threads that encoded it made it), for a
    /// compressor that takes them without their being joined first.
    ///
    /// - Throws: As ``encode(_:schema:format:modelVersion:savedAt:path:lineage:)``.
    /// - Complexity: O(objects).
    static func encodePieces(
        _ version: GraphVersion, schema: Schema, format: SnapshotFormat, modelVersion: String, savedAt: Date, path: String,
        lineage: UUID? = nil
    ) throws -> [Data] {
        try encodeSegments(
            version, schema: schema, format: format, modelVersion: modelVersion, savedAt: savedAt, path: path, lineage: lineage,
            deflateLevel: nil
        ).map(\.plainData)
    }

    /// The document of ``encodePieces(_:schema:format:modelVersion:savedAt:path:lineage:)`` on
    /// its way into a gzip file: with a `deflateLevel`, the parts of a JSON document that
    /// threads encoded come deflated already (see
    /// ``encodeJSONPieces(header:version:schema:deflateLevel:)``), for
    /// ``Gzip/compress(segments:level:parts:)``.
    ///
    /// - Throws: As ``encode(_:schema:format:modelVersion:savedAt:path:lineage:)``; a
    ///   ``FileLayerError`` when deflating fails.
    /// - Complexity: O(objects).
    static func encodeSegments(
        _ version: GraphVersion, schema: Schema, format: SnapshotFormat, modelVersion: String, savedAt: Date, path: String,
        lineage: UUID? = nil, deflateLevel: Int32?
    ) throws -> [GzipSegment] {
        var counts: [String: Int] = [:]
        var fieldTypes: [String: [String: String]] = [:]
        for entity in schema.entities {
            counts[entity.name] = version.tables[entity.index].count
            let types = FieldTypeProbe.fieldTypes(of: version.tables[entity.index].lazy.map(\.value.value))
            if !types.isEmpty { fieldTypes[entity.name] = types }
        }
        var header = SnapshotHeaderV1(
            modelVersion: modelVersion, savedAt: savedAt, storeVersion: version.number, counts: counts, fieldTypes: fieldTypes,
            lineage: lineage?.uuidString)
        header.fieldTypesVersion = SnapshotHeaderV1.currentFieldTypesVersion
        let document = EncodableDocument(header: header, version: version, schema: schema)
        do {
            switch format {
            case .json:
                do {
                    return try encodeJSONPieces(header: header, version: version, schema: schema, deflateLevel: deflateLevel)
                } catch let error as FileLayerError {
                    throw error  // Deflating failed (zlib, memory): not the encoder's to refuse.
                } catch {
                    // `FastJSONEncoder` refuses a few things `JSONEncoder` writes (containers used
                    // out of order). Otherwise its error stands: its coding path is complete,
                    // where `JSONEncoder`'s loses the entity and the document's root. What
                    // `JSONEncoder` writes is taken only if the opening parser reads it back:
                    // it writes a `Decimal.nan` as a bare `NaN`, which is not JSON, and such a
                    // file must not replace the last good one. (It also writes a URL with a base
                    // as its absolute string, without the base: a known loss on this rare path,
                    // for types whose `encode(to:)` uses containers out of order.)
                    if let data = try? makeJSONEncoder().encode(document), (try? SnapshotValue.readJSON(data)) != nil { return [.plain(data)] }
                    throw error
                }
            case .binaryPropertyList:
                // Lossless where `PropertyListEncoder` is not (see `BPlistObjectTable`), and
                // encoded in parts on several threads.
                return [.plain(try encodeBinaryPropertyListDocument(header: header, version: version, schema: schema))]
            }
        } catch let error as EncodingError {
            let context: EncodingError.Context
            switch error {
            case .invalidValue(_, let c): context = c
            @unknown default: throw GraphStoreError.codingFailed(path: path, entity: "?", id: nil, reason: "\(error)")
            }
            let (entity, index) = locate(context.codingPath)
            throw GraphStoreError.codingFailed(
                path: path, entity: entity ?? "header", id: index.map { "#\($0)" },
                reason: "\(context.debugDescription) (at \(pathText(context.codingPath)))")
        }
    }

    /// The snapshot's JSON encoding strategies; also what the SQLite store writes in JSON columns.
    package static func makeJSONEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        // `.deferredToDate` writes `timeIntervalSinceReferenceDate`: exact, and documented in
        // the header as `secondsSince2001`.
        encoder.dateEncodingStrategy = .deferredToDate
        encoder.dataEncodingStrategy = .base64
        encoder.nonConformingFloatEncodingStrategy = nonFinite.encodingStrategy
        return encoder
    }

    /// The decoding counterpart of ``makeJSONEncoder()``.
    package static func makeJSONDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        decoder.dataDecodingStrategy = .base64
        decoder.nonConformingFloatDecodingStrategy = nonFinite.decodingStrategy
        return decoder
    }

    /// How the snapshot's JSON spells the doubles JSON has no number for: one convention for
    /// the fast coders and Foundation's.
    private static var nonFinite: FastJSONDecoder.NonConformingFloatStrings { .snapshot }

    // MARK: - Decoding

    /// The format of an uncompressed document, told by its first bytes.
    static func detectFormat(_ data: Data) -> SnapshotFormat? {
        if data.starts(with: Array("bplist00".utf8)) { return .binaryPropertyList }
        if let first = data.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }), first == UInt8(ascii: "{") {
            return .json
        }
        return nil
    }

    /// The header and graph in `data`, an uncompressed document.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` (not a snapshot, bad
    ///   header, counts that do not match, duplicate or dangling objects),
    ///   ``GraphStoreError/unsupportedFormatVersion(path:found:supported:)``,
    ///   ``GraphStoreError/codingFailed(path:entity:id:reason:)`` (a value of the wrong type).
    /// - Parameters:
    ///   - modelVersion: The model version the app reads; a header naming another one stops
    ///     decoding with ``StoredModelVersion`` before any object is read. `nil`: any.
    ///   - reportingPositions: Whether an object that does not decode throws
    ///     ``TypedDecodingFailure`` (entity, index, field) instead of a `GraphStoreError`.
    /// - Complexity: O(size of the document).
    static func decode(
        _ data: consuming Data, schema: Schema, path: String, modelVersion: String? = nil, reportingPositions: Bool = false
    ) throws -> (SnapshotHeaderV1, GraphVersion) {
        let decoded = try decodeSurveying(consume data, schema: schema, path: path, modelVersion: modelVersion, reportingPositions: reportingPositions, survey: false)
        return (decoded.header, decoded.version)
    }

    /// As ``decode(_:schema:path:modelVersion:reportingPositions:)``; with `survey`, also the
    /// stored fields the app's types may not keep (``UnkeptFields/candidates(_:objects:schema:)``),
    /// for the caller to confirm against the stored objects.
    ///
    /// The document is let go once its objects are decoded, before the graph is built: a
    /// caller that passes its last reference (`consume`) does not hold the uncompressed
    /// document through the longest part of opening.
    ///
    /// - Complexity: O(size of the document); the survey adds a comparison of each object's
    ///   keys with the few key layouts met before it, and one encoding per distinct set of fields.
    static func decodeSurveying(
        _ data: consuming Data, schema: Schema, path: String, modelVersion: String? = nil, reportingPositions: Bool = false, survey: Bool
    ) throws -> (header: SnapshotHeaderV1, version: GraphVersion, unkept: [UnkeptFields.Candidate]) {
        let decoded = try decodeObjects(consume data, schema: schema, path: path, modelVersion: modelVersion, reportingPositions: reportingPositions, survey: survey)
        let version = try build(decoded.objects, number: decoded.header.storeVersion, schema: schema, path: path)
        return (decoded.header, version, decoded.unkept)
    }

    /// The graph of `objects` (per entity index) at store version `number`, indexed and checked.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` naming `path` for a
    ///   duplicate id, a unique value held twice, or a reference to a missing object.
    /// - Complexity: O(objects + references).
    static func build(_ objects: [[any Entity]], number: UInt64, schema: Schema, path: String) throws -> GraphVersion {
        do {
            return try GraphVersion.loaded(objects, number: number, schema: schema)
        } catch {
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: graphCheckReason + error.description)
        }
    }

    /// How the reason of a file whose objects do not form a graph under the app's model begins.
    static let graphCheckReason = "its objects do not fit the app's model (a unique constraint, or a relationship, that the release of the app which wrote the file may not have declared): "
    /// How the reason of a file one of whose objects a type's own `init(from:)` refused (with
    /// an error of its own, not a `DecodingError`) begins.
    static let decoderThrewReason = "a type's init(from:) refused an object: "

    /// Whether `reason`, of a ``GraphStoreError/damagedFile(path:offset:reason:)`` this codec
    /// threw, says the app's model refused objects the file holds, rather than that the file
    /// does not read: recovery tells a model mismatch from damage by it, with a generic read.
    static func isModelRefusal(_ reason: String) -> Bool {
        reason.hasPrefix(graphCheckReason) || reason.hasPrefix(decoderThrewReason)
    }

    /// As ``decodeSurveying(_:schema:path:modelVersion:reportingPositions:survey:)``, without
    /// building the graph: the header, the objects per entity index in stored order, and the
    /// survey's candidates.
    ///
    /// - Complexity: O(size of the document).
    static func decodeObjects(
        _ data: consuming Data, schema: Schema, path: String, modelVersion: String? = nil, reportingPositions: Bool = false, survey: Bool,
        limit: Int = .max
    ) throws -> (header: SnapshotHeaderV1, objects: [[any Entity]], unkept: [UnkeptFields.Candidate]) {
        let format = try SnapshotHeaderCheck.format(of: data, path: path)
        let context = DecodingContext(schema: schema, modelVersion: modelVersion, surveysMembers: survey)
        if format == .json, let chunked = decodeJSONInChunks(data, context: context, survey: survey) {
            _ = consume data
            let unkept = survey ? UnkeptFields.candidates(chunked.memberNames, objects: chunked.objects, schema: schema) : []
            return (chunked.header, chunked.objects, unkept)
        }
        let document: DecodableDocument
        // What a property list's shared values may expand to (see `BPlistExpansion`).
        let expansion = BPlistExpansion(limit: BPlistExpansion.budget(limit: limit, documentBytes: data.count))
        do {
            switch format {
            case .json:
                // Reads as `makeJSONDecoder()` does (two deliberate differences: see
                // `FastJSONDecoder`), several times faster; entities' `init(from:)` may run on two
                // threads for large arrays, with the same results and errors.
                document = try FastJSONDecoder.decode(DecodableDocument.self, from: data, userInfo: [DecodingContext.key: context], parallel: true)
            case .binaryPropertyList:
                // Reads as `PropertyListDecoder` does (differences: see `BPlistDecoder`), in
                // place and with large arrays decoded in two halves.
                // Its shared values may expand no further than `limit`, as a JSON file's bytes.
                document = try BPlistDecoder.decode(
                    DecodableDocument.self, from: data, userInfo: [DecodingContext.key: context, BPlistDecoder.jsonShapesKey: BPlistJSONShapes()],
                    parallel: true, expansion: expansion)
            }
        } catch _ where expansion.isExhausted {
            // First: whatever a type's `init(from:)` or the document's own reading (a key
            // dropped past the budget) made of the reader's error.
            throw GraphStoreError.decompressedSizeLimitExceeded(path: path, limit: limit)
        } catch let check as SnapshotHeaderCheck {
            throw check.error(path: path)
        } catch let unregistered as UnregisteredEntity {
            let name = unregistered.name
            throw GraphStoreError.codingFailed(
                path: path, entity: name, id: nil, reason: UnregisteredEntity.reason(name: name, count: unregistered.count))
        } catch let error as DecodingError {
            if reportingPositions, let failure = TypedDecodingFailure(error) { throw failure }
            throw describe(error, format: format, path: path)
        } catch let found as StoredModelVersion {
            throw found
        } catch {
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: decoderThrewReason + "\(error)")
        }
        // A type's `init(from:)` may have dropped the reader's error (`try?`).
        if expansion.isExhausted { throw GraphStoreError.decompressedSizeLimitExceeded(path: path, limit: limit) }
        _ = consume data
        let unkept = survey ? UnkeptFields.candidates(document.memberNames, objects: document.objects, schema: schema) : []
        return (document.header, document.objects, unkept)
    }

    private static func describe(_ error: DecodingError, format: SnapshotFormat, path: String) -> GraphStoreError {
        let context: DecodingError.Context
        switch error {
        case .dataCorrupted(let c), .keyNotFound(_, let c), .typeMismatch(_, let c), .valueNotFound(_, let c): context = c
        @unknown default: return .damagedFile(path: path, offset: nil, reason: "\(error)")
        }
        let (entity, index) = locate(context.codingPath)
        guard let entity, context.codingPath.first?.stringValue == DocumentKey.entities.stringValue else {
            let underlying = (context.underlyingError.map { " (\($0))" }) ?? ""
            let at = context.codingPath.isEmpty ? "" : " at \(pathText(context.codingPath))"
            // A damaged binary plist table names its byte (JSON syntax errors count bytes of
            // the UTF-8 text, which may not be the file's, so they stay in the reason).
            let offset = (context.underlyingError as? BPlistSyntaxError)?.offset
            return .damagedFile(path: path, offset: offset, reason: "not a readable \(format == .json ? "JSON" : "property list") snapshot\(at): \(context.debugDescription)\(underlying)")
        }
        // A missing field or a value of another kind may be a model change: name the step.
        var hint = ""
        switch error {
        case .keyNotFound, .typeMismatch, .valueNotFound: hint = TypedDecodingFailure(error).map { " (\($0.hint))" } ?? ""
        default: break
        }
        return .codingFailed(
            path: path, entity: entity, id: index.map { "#\($0) in the file" },
            reason: "\(context.debugDescription) (at \(pathText(context.codingPath)))\(hint)")
    }

    /// The entity name and array index in a coding path like `entities.Post[17].date`.
    fileprivate static func locate(_ path: [any CodingKey]) -> (entity: String?, index: Int?) {
        guard path.count >= 2, path[0].stringValue == DocumentKey.entities.stringValue else { return (nil, nil) }
        return (path[1].stringValue, path.count >= 3 ? path[2].intValue : nil)
    }

    private static func pathText(_ path: [any CodingKey]) -> String {
        path.abbreviatedForMessages.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined().trimmingPrefix(".").description
    }
}

// MARK: - Document

enum DocumentKey: String, CodingKey {
    case header, entities
}

struct EntityNameKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// The file holds objects of an entity the container does not register: opening would drop
/// them at the next write. Thrown before any object is decoded.
package struct UnregisteredEntity: Error {
    let name: String
    let count: Int

    /// What to tell the user about `count` stored objects of `name`, an entity the container
    /// does not register; also the SQLite store's words for such a table.
    package static func reason(name: String, count: Int) -> String {
        "the file holds \(count) \(name) object(s), but the container does not register \(name); register the type, or declare a new model version whose migration has .renameEntity(\"\(name)\", to: …) or .removeEntity(\"\(name)\"), so they are not lost. The file was left untouched"
    }
}

/// The header names a model version other than the app's: the store needs a migration (or
/// is refused). Thrown before any object is decoded.
struct StoredModelVersion: Error {
    let found: String
    let header: SnapshotHeaderV1
}

/// Where an object of a snapshot document failed to decode with the app's types.
struct TypedDecodingFailure: Error {
    let entity: String
    let index: Int?
    /// The top-level field at fault, when the failure is inside one.
    let field: String?
    let reason: String
    /// The migration step that would fix a missing field or a value of another kind.
    let hint: String

    init?(_ error: DecodingError) {
        let context: DecodingError.Context
        var missing: String?
        switch error {
        case .keyNotFound(let key, let c):
            context = c
            missing = key.stringValue
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): context = c
        @unknown default: return nil
        }
        let path = context.codingPath
        guard path.count >= 2, path[0].stringValue == DocumentKey.entities.stringValue else { return nil }
        let entity = path[1].stringValue
        let (_, index) = SnapshotCodec.locate(path)
        let field = missing.flatMap { path.count == 3 ? $0 : nil } ?? (path.count >= 4 ? path[3].stringValue : missing)
        self.entity = entity
        self.index = index
        self.field = field
        reason = context.debugDescription
        let name = field ?? "…"
        if let missing, path.count == 3 {
            hint = "if \(entity) gained the property \(missing), declare a new model version whose migration has .addField(\"\(missing)\", in: \"\(entity)\", default: …), or .renameField(…, to: \"\(missing)\", in: \"\(entity)\") if it was renamed"
        } else {
            hint = "if the type of \(entity).\(name) changed, declare a new model version whose migration converts it with .transform(\"\(entity)\") { … }"
        }
    }
}

/// Carries the schema into `Decodable` initializers.
final class DecodingContext: Sendable {
    static let key = CodingUserInfoKey(rawValue: "GraphStore.DecodingContext")!
    let schema: Schema
    /// The model version the app reads (`nil`: any).
    let modelVersion: String?
    /// Whether the document reports each entity's distinct sets of stored field names.
    let surveysMembers: Bool
    init(schema: Schema, modelVersion: String? = nil, surveysMembers: Bool = false) {
        self.schema = schema
        self.modelVersion = modelVersion
        self.surveysMembers = surveysMembers
    }
}

/// The snapshot document as `JSONEncoder` writes it: the fallback for what ``FastJSONEncoder``
/// refuses, and the reference its output is tested against.
struct EncodableDocument: Encodable {
    let header: SnapshotHeaderV1
    let version: GraphVersion
    let schema: Schema

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: DocumentKey.self)
        try container.encode(header, forKey: .header)
        var entities = container.nestedContainer(keyedBy: EntityNameKey.self, forKey: .entities)
        for entity in schema.entities {
            var objects = entities.nestedUnkeyedContainer(forKey: EntityNameKey(entity.name))
            for (_, stored) in version.tables[entity.index] {
                try objects.encode(stored.value)
            }
        }
    }
}

private struct DecodableDocument: Decodable {
    let header: SnapshotHeaderV1
    let objects: [[any Entity]]
    /// Per entity of the schema, when the context asks for it: the distinct sets of stored
    /// field names (see ``UnkeptFields``).
    let memberNames: [[MemberNames]]

    init(from decoder: any Decoder) throws {
        guard let context = decoder.userInfo[DecodingContext.key] as? DecodingContext else {
            preconditionFailure("GraphStore: snapshot decoding without a schema")
        }
        let container = try decoder.container(keyedBy: DocumentKey.self)
        header = try container.decode(SnapshotHeaderV1.self, forKey: .header)
        try SnapshotHeaderCheck.header(format: header.format, formatVersion: header.formatVersion)
        if let expected = context.modelVersion, header.modelVersion != expected {
            throw StoredModelVersion(found: header.modelVersion, header: header)
        }
        // A property list a tool wrote from JSON's values may hold them in JSON's shapes.
        if header.jsonShapedValues == true { (decoder.userInfo[BPlistDecoder.jsonShapesKey] as? BPlistJSONShapes)?.accept() }
        let entities = try container.nestedContainer(keyedBy: EntityNameKey.self, forKey: .entities)
        for key in entities.allKeys where context.schema.index(named: key.stringValue) == nil {
            let count = (try? entities.nestedUnkeyedContainer(forKey: key))?.count ?? header.counts[key.stringValue] ?? 0
            if count > 0 { throw UnregisteredEntity(name: key.stringValue, count: count) }
            try SnapshotHeaderCheck.count(of: key.stringValue, found: 0, in: header)
        }
        var objects: [[any Entity]] = []
        var memberNames: [[MemberNames]] = []
        for entity in context.schema.entities {
            let key = EntityNameKey(entity.name)
            var decoded: [any Entity] = []
            var names: [MemberNames] = []
            if entities.contains(key) {
                var array = try entities.nestedUnkeyedContainer(forKey: key)
                decoded.reserveCapacity(array.count ?? 0)
                while !array.isAtEnd { decoded.append(try entity.decodeOne(&array)) }
                if context.surveysMembers, let survey = try entities.nestedUnkeyedContainer(forKey: key) as? any MemberNameSurvey {
                    names = survey.distinctMemberNames()
                }
            }
            memberNames.append(names)
            try SnapshotHeaderCheck.count(of: entity.name, found: decoded.count, in: header)
            objects.append(decoded)
        }
        try SnapshotHeaderCheck.countedEntities(of: header) { entities.contains(EntityNameKey($0)) }
        self.objects = objects
        self.memberNames = memberNames
    }
}

extension FastJSONDecoder.NonConformingFloatStrings {
    /// These strings as `JSONEncoder`'s strategy.
    var encodingStrategy: JSONEncoder.NonConformingFloatEncodingStrategy {
        .convertToString(positiveInfinity: positiveInfinity, negativeInfinity: negativeInfinity, nan: nan)
    }

    /// These strings as `JSONDecoder`'s strategy.
    var decodingStrategy: JSONDecoder.NonConformingFloatDecodingStrategy {
        .convertFromString(positiveInfinity: positiveInfinity, negativeInfinity: negativeInfinity, nan: nan)
    }
}
