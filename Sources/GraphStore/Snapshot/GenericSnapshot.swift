import Foundation
internal import GraphStoreCoding

/// A snapshot file read as generic values: its header and, per entity, its objects, without
/// the app's Swift types. The basis of the `graphstore` tool's `inspect`, `dump`, `verify`,
/// `convert` and `migrate`.
///
/// ```swift
/// let snapshot = try GenericSnapshot.read(from: url)
/// print(snapshot.header.counts)
/// try snapshot.write(to: other, format: .binaryPropertyList, compression: .gzip)
/// ```
public struct GenericSnapshot: Sendable {
    /// The header; ``write(to:format:compression:)`` recomputes its counts.
    public var header: SnapshotHeaderV1
    /// Objects per entity name, in the order the file holds them.
    public var entities: [(name: String, objects: [SnapshotValue])]
    /// The document format the file was read in.
    public var format: SnapshotFormat
    /// The compression the file was read with.
    public var compression: Compression
    /// The numbers read that a double holds only rounded (JSON's long numbers, a property
    /// list's integers beyond 64 bits): writing gives them back with every digit.
    package var exactNumbers = ExactNumbers()
    /// Whether the objects' URLs and decimals are in their JSON shapes whatever ``format``
    /// says: set when they were read from a SQLite store, which keeps them as JSON (and so
    /// the values nested in its `json` columns: dates as numbers, data as Base64). Writing a
    /// property list then converts them as the header's field types say, as from JSON.
    package var urlsAndDecimalsInJSONShape = false
    /// Per entity, the top-level fields read from a SQLite store's `json` columns where the
    /// store records no field types (one written before they were recorded): their values may
    /// hold URLs, decimals, dates or data that nothing tells from strings and numbers, which a
    /// property list would hold in other shapes than the app's types read. Writing a property
    /// list refuses the first such value instead of guessing.
    package var unhintedJSONFields: [String: [String]] = [:]

    /// A snapshot of `entities` under `header`, to be written in `format` with `compression`
    /// (JSON and gzip by default). Nothing is checked until it is written or converted.
    public init(header: SnapshotHeaderV1, entities: [(name: String, objects: [SnapshotValue])], format: SnapshotFormat = .json, compression: Compression = .gzip) {
        self.header = header
        self.entities = entities
        self.format = format
        self.compression = compression
    }

    /// The objects of the entity `name`, or an empty array.
    public func objects(of name: String) -> [SnapshotValue] {
        entities.first { $0.name == name }?.objects ?? []
    }

    // MARK: - Reading

    /// Reads and checks the snapshot at `url`: gzip CRC and length, header, format version,
    /// counts, and that each object has an `id` that is unique within its entity.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)``,
    ///   ``GraphStoreError/unsupportedFormatVersion(path:found:supported:)``,
    ///   ``GraphStoreError/decompressedSizeLimitExceeded(path:limit:)``,
    ///   ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` (including a missing file,
    ///   and a journal beside the file that holds newer saves: see ``UnreplayedSaves``),
    ///   ``GraphStoreError/storeLocked(path:)`` while a container (in any process) has the store
    ///   open: its file may lack saves the app was told are saved.
    /// - Complexity: O(file size + journal size).
    public static func read(from url: URL, maxDecompressedBytes: Int = 4 << 30) throws -> GenericSnapshot {
        try StoreFileLock.checkNotHeld(storeAt: url)
        let raw: Data?
        do { raw = try FileReader.readFile(at: url) } catch { throw GraphStoreError(error, path: url.path) }
        guard let raw else {
            throw GraphStoreError.fileOperationFailed(path: url.path, operation: "open", reason: "no such file")
        }
        let document = try SnapshotFileBackend.document(fromRaw: raw, path: url.path, limit: maxDecompressedBytes)
        let snapshot = try decode(document, compression: Gzip.isGzip(raw) ? .gzip : .none, path: url.path, limit: maxDecompressedBytes)
        if let saves = try UnreplayedSaves.find(
            forStoreAt: url, fileVersion: snapshot.header.storeVersion, lineage: snapshot.header.lineage.flatMap(UUID.init(uuidString:))) {
            throw saves.error(reading: url.path)
        }
        return snapshot
    }

    /// Decodes an uncompressed document; a property list's shared values may expand to at most
    /// `limit` bytes (see ``SnapshotOptions/maxDecompressedBytes``).
    static func decode(_ document: Data, compression: Compression, path: String, limit: Int) throws -> GenericSnapshot {
        let format = try SnapshotHeaderCheck.format(of: document, path: path)
        let root: SnapshotValue
        var numbers = ExactNumbers()
        do {
            // The parsers that open a store, so that `verify` refuses what an app refuses.
            switch format {
            case .json: root = try SnapshotValue.readJSON(document, objectsIn: .snapshot, numbers: &numbers)
            case .binaryPropertyList:
                root = try SnapshotValue.readPropertyList(document, objectsIn: .snapshot, numbers: &numbers, expansionLimit: limit)
            }
        } catch is BPlistExpansionExceeded {
            throw GraphStoreError.decompressedSizeLimitExceeded(path: path, limit: limit)
        } catch let failure as SnapshotValue.ReadingFailure {
            throw GraphStoreError.damagedFile(
                path: path, offset: failure.offset, reason: "not readable as \(format == .json ? "JSON" : "a property list"): \(failure)")
        }
        guard case .object(let fields) = root, let headerValue = fields["header"] else {
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "the document has no header")
        }
        let header = try decodeHeader(headerValue, format: format, path: path)
        guard case .object(let entityFields)? = fields["entities"] else {
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "the document has no entities object")
        }
        var entities: [(name: String, objects: [SnapshotValue])] = []
        for name in entityFields.keys.sorted() {
            guard case .array(let objects) = entityFields[name]! else {
                throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "entities.\(name) is not an array")
            }
            do {
                try SnapshotHeaderCheck.count(of: name, found: objects.count, in: header)
            } catch {
                throw error.error(path: path)
            }
            var ids = Set<SnapshotValue>()
            for (index, object) in objects.enumerated() {
                guard let id = object["id"] else {
                    throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "entities.\(name)[\(index)] has no id")
                }
                guard ids.insert(id).inserted else {
                    throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "\(name) id \(id.jsonObject) appears twice")
                }
            }
            // The hints tell a string "NaN" from a double's where a field is declared `String`.
            if format == .json, let types = header.fieldTypes?[name], case let paths = SnapshotValue.stringPaths(of: types), !paths.isEmpty {
                entities.append((name, objects.map { $0.withNonFiniteStringsRestored(at: paths) }))
            } else {
                entities.append((name, objects))
            }
        }
        do {
            try SnapshotHeaderCheck.countedEntities(of: header) { entityFields[$0] != nil }
        } catch {
            throw error.error(path: path)
        }
        var snapshot = GenericSnapshot(header: header, entities: entities, format: format, compression: compression)
        snapshot.exactNumbers = numbers
        return snapshot
    }

    private static func decodeHeader(_ value: SnapshotValue, format: SnapshotFormat, path: String) throws -> SnapshotHeaderV1 {
        do {
            let data = try SnapshotCodec.makeJSONEncoder().encode(value)
            // The name and version first: a newer layout may not decode as this one.
            let probe = try JSONDecoder().decode(VersionProbe.self, from: data)
            try SnapshotHeaderCheck.header(format: probe.format, formatVersion: probe.formatVersion)
            return try SnapshotCodec.makeJSONDecoder().decode(SnapshotHeaderV1.self, from: data)
        } catch let check as SnapshotHeaderCheck {
            throw check.error(path: path)
        } catch {
            throw GraphStoreError.damagedFile(path: path, offset: nil, reason: "the header is not readable: \(error)")
        }
    }

    private struct VersionProbe: Decodable {
        let format: String
        let formatVersion: Int
    }

    // MARK: - Writing

    /// The document, uncompressed, in `format`, with the header's counts recomputed.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)``, also for a property
    ///   list of a snapshot read from a SQLite store that records no field types while one of
    ///   its `json` columns holds a value (naming the entity, the object and the field).
    public func encoded(as format: SnapshotFormat) throws -> Data {
        // A JSON document's dates are numbers, its data strings, its URLs strings (a URL with a
        // base a dictionary whose base is a string) and its decimals numbers, and so are a
        // SQLite store's in its `json` columns: a property list holds dates and data natively
        // and URLs and decimals as dictionaries, where the header says they are. The other way,
        // the property list's shapes become JSON's (and the header then names the fields that
        // held them).
        let source = format == .json ? withURLsAndDecimalsInJSONShape() : self
        var header = source.header
        header.counts = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.objects.count) })
        let byID = source.exactNumbers.byID
        if format == .binaryPropertyList { try refuseUnhintedJSONFields() }
        // Values in JSON's shapes: read from JSON, or from a SQLite store (whose dates and data
        // outside `json` columns are native already, which the conversion leaves as they are).
        let inJSONShape = self.format == .json || urlsAndDecimalsInJSONShape
        // Values the hints do not name keep their JSON shapes: the app is told so.
        header.jsonShapedValues = format == .binaryPropertyList && (inJSONShape || header.jsonShapedValues == true) ? true : nil
        let entities: [(name: String, objects: [SnapshotValue])] = try source.entities.map { entity in
            if format == .binaryPropertyList, inJSONShape, let types = header.fieldTypes?[entity.name],
               case let paths = SnapshotValue.typedPaths(types), !paths.isEmpty {
                return (entity.name, try entity.objects.map { object in
                    do {
                        return try object.typed(by: paths, numbers: object["id"].flatMap { byID[$0] })
                    } catch let EncodingError.invalidValue(_, context) {
                        throw GraphStoreError.codingFailed(
                            path: nil, entity: entity.name, id: object["id"].map(ModelMigrator.idText), reason: context.debugDescription)
                    }
                })
            }
            return entity
        }
        let headerValue: SnapshotValue
        do {
            headerValue = try SnapshotCodec.makeJSONDecoder().decode(SnapshotValue.self, from: SnapshotCodec.makeJSONEncoder().encode(header))
        } catch {
            throw GraphStoreError.codingFailed(path: nil, entity: "header", id: nil, reason: "\(error)")
        }
        var headerFields: [String: SnapshotValue] = [:]
        if case .object(let fields) = headerValue { headerFields = fields }
        if format == .binaryPropertyList { headerFields["savedAt"] = .date(header.savedAt) }
        do {
            // The writers a store uses: the same text as `JSONEncoder` writes, and a lossless
            // binary property list.
            switch format {
            case .json: return try Self.jsonDocument(header: .object(headerFields), entities: entities, numbers: byID)
            case .binaryPropertyList: return try Self.propertyListDocument(header: .object(headerFields), entities: entities, numbers: byID)
            }
        } catch let error as EncodingError {
            throw Self.describe(error, entities: entities)
        } catch let error as GraphStoreError {
            throw error
        } catch {
            throw GraphStoreError.codingFailed(path: nil, entity: "document", id: nil, reason: "\(error)")
        }
    }

    /// Throws for the first value of ``unhintedJSONFields``, which a property list cannot be
    /// trusted to hold as the app's types read it.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` (without a path)
    ///   naming the entity, the object and the field.
    /// - Complexity: O(objects of the entities named) when none holds a value there.
    private func refuseUnhintedJSONFields() throws {
        for entity in entities {
            guard let fields = unhintedJSONFields[entity.name], !fields.isEmpty else { continue }
            for object in entity.objects {
                for field in fields {
                    guard let value = object[field], value != .null else { continue }
                    throw GraphStoreError.codingFailed(
                        path: nil, entity: entity.name, id: object["id"].map(ModelMigrator.idText),
                        reason: "\(field): the SQLite store records no field types (it was written before GraphStore recorded them), so the JSON in this column may hold URLs, decimals, dates or data that cannot be told from strings and numbers, which a property list holds in other shapes than the app reads. Migrate the store to JSON instead, or open it once with the app (which records its field types) and migrate it again.")
                }
            }
        }
    }

    /// An encoding error of the JSON writer, naming the entity and the id of the object at
    /// fault (its coding path starts `entities.<entity>[<index>]`).
    static func describe(_ error: EncodingError, entities: [(name: String, objects: [SnapshotValue])]) -> GraphStoreError {
        guard case .invalidValue(_, let context) = error, context.codingPath.count >= 3,
              context.codingPath[0].stringValue == DocumentKey.entities.stringValue, let index = context.codingPath[2].intValue
        else {
            return .codingFailed(path: nil, entity: "document", id: nil, reason: "\(error)")
        }
        let name = context.codingPath[1].stringValue
        let id = entities.first { $0.name == name }.flatMap { $0.objects.indices.contains(index) ? $0.objects[index]["id"] : nil }
        let field = Array(context.codingPath.dropFirst(3)).abbreviatedForMessages.dotted
        return .codingFailed(
            path: nil, entity: name, id: id.map(ModelMigrator.idText),
            reason: "\(field.isEmpty ? "" : field + ": ")\(context.debugDescription)")
    }

    /// Writes the snapshot to `url` atomically (temporary file, fsync, rename, fsync of the
    /// directory), in `format` and `compression`.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)``,
    ///   ``GraphStoreError/fileOperationFailed(path:operation:reason:)``.
    /// - Complexity: O(objects) to encode, O(bytes) to compress and write.
    public func write(to url: URL, format: SnapshotFormat, compression: Compression) throws {
        let document: Data
        do {
            document = try encoded(as: format)
        } catch GraphStoreError.codingFailed(nil, let entity, let id, let reason) {
            throw GraphStoreError.codingFailed(path: url.path, entity: entity, id: id, reason: reason)
        }
        do {
            let bytes = compression == .gzip ? try Gzip.compress(document, level: SnapshotTarget.compressionLevel, parts: Processors.active) : document
            try AtomicFile.write(bytes, to: url)
        } catch {
            throw GraphStoreError(error, path: url.path)
        }
    }
}
