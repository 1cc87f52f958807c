import Foundation
internal import GraphStoreCoding

/// A generic snapshot's document written as a store writes its own: header, then one array per
/// entity, with ``FastJSONEncoder`` or a ``BPlistObjectTable``, and large entities encoded in
/// parts on several threads, joined in order.
extension GenericSnapshot {
    /// The snapshot with the URLs and decimals of a property list in the shapes JSON (and the
    /// SQLite store's `json` columns) holds them, a string and a number (a URL with a base keeps
    /// its dictionary, its base a string: see ``SnapshotValue/propertyListURLInJSONShape``; a
    /// long decimal's exact value is recorded in ``exactNumbers``); dates and data stay native. Where the header's field
    /// types name them (``SnapshotHeaderV1/fieldTypesVersion`` 2), only the fields they name are
    /// converted; in an older snapshot, every dictionary of their shape is, and a top-level field
    /// that held one is then named in the field types. A JSON snapshot is returned as it is.
    ///
    /// - Complexity: O(size of the objects).
    package func withURLsAndDecimalsInJSONShape() -> GenericSnapshot {
        guard format == .binaryPropertyList, !urlsAndDecimalsInJSONShape else { return self }
        var shaped = self
        shaped.urlsAndDecimalsInJSONShape = true
        var numbers = exactNumbers
        var types = header.fieldTypes ?? [:]
        let hinted = (header.fieldTypesVersion ?? 0) >= 2
        /// `object` of `entity` as `convert` makes it, with the exact numbers of the decimals it
        /// converts added to the object's.
        func converting(
            _ object: SnapshotValue, of entity: String, _ convert: (inout ExactNumbers.Bag) -> SnapshotValue
        ) -> SnapshotValue {
            guard let id = object["id"] else { return object }
            var bag = numbers.bag(entity: entity, id: id) ?? ExactNumbers.Bag()
            let converted = convert(&bag)
            if !bag.isEmpty {
                bag.settle(with: converted)
                numbers.set(bag, entity: entity, id: id)
            }
            return converted
        }
        shaped.entities = entities.map { entity in
            if hinted {
                let paths = (types[entity.name] ?? [:]).filter { $0.value == "url" || $0.value == "decimal" }.map { SnapshotValue.pathComponents($0.key) }
                return (entity.name, entity.objects.map { object in
                    converting(object, of: entity.name) { bag in
                        let hintedShapes = paths.reduce(object) { value, path in value.jsonShaped(at: path, numbers: &bag) }
                        // Decimals the sample did not show (in a dictionary's values, in a field
                        // that was nil in the sampled objects) by their parts' shape, which nothing
                        // else has; a URL's shape is too common to be taken for one unhinted.
                        return hintedShapes.jsonShaped(numbers: &bag, keepingDatesAndData: true, convertingURLs: false)
                    }
                })
            }
            let objects = entity.objects.map { object -> SnapshotValue in
                guard case .object(let fields) = object else { return object }
                return converting(object, of: entity.name) { bag in
                    var converted: [String: SnapshotValue] = [:]
                    converted.reserveCapacity(fields.count)
                    for (key, value) in fields {
                        if value.propertyListURLInJSONShape != nil {
                            types[entity.name, default: [:]][key] = "url"
                        } else if value.decimalInPropertyListShape != nil {
                            types[entity.name, default: [:]][key] = "decimal"
                        }
                        converted[key] = value.jsonShaped(numbers: &bag, keepingDatesAndData: true)
                    }
                    return .object(converted)
                }
            }
            return (entity.name, objects)
        }
        shaped.exactNumbers = numbers
        shaped.header.fieldTypes = types.isEmpty ? nil : types
        return shaped
    }

    /// `{"header":…,"entities":{…}}`, the entities in the order given, each object's doubles
    /// that `numbers` (by object id, ``ExactNumbers/byID``) hold the exact value of written as
    /// that number.
    ///
    /// - Complexity: O(size of the document), on up to `activeProcessorCount` threads for
    ///   entities of ``SnapshotCodec/parallelEncodingThreshold`` objects or more.
    static func jsonDocument(
        header: SnapshotValue, entities: [(name: String, objects: [SnapshotValue])], numbers byID: ExactNumbers.ByID = ExactNumbers.ByID()
    ) throws -> Data {
        let objectCount = entities.reduce(0) { $0 + $1.objects.count }
        var buffer = FastJSONBuffer(capacity: 4_096 + objectCount * 256)
        buffer.append(contentsOf: "{\"header\":")
        try FastJSONEncoder.encode(header, into: &buffer)
        buffer.append(contentsOf: ",\"entities\":{")
        for (position, entity) in entities.enumerated() {
            if position > 0 { buffer.append(UInt8(ascii: ",")) }
            buffer.appendString(entity.name)
            buffer.append(contentsOf: ":[")
            let parts = partCount(entity.objects.count)
            if parts > 1 {
                for part in try jsonParts(entity.objects, entity: entity.name, parts: parts, numbers: byID) { buffer.append(contentsOf: part) }
            } else {
                try encodeJSON(entity.objects[...], entity: entity.name, startIndex: 0, numbers: byID, into: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        }
        buffer.append(contentsOf: "}}")
        return buffer.takeData()
    }

    /// `{header: …, entities: {…}}` as a binary property list, the entities in the order given,
    /// each object's doubles that `numbers` (by object id, ``ExactNumbers/byID``) hold an
    /// integer beyond 64 bits for written as that integer.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` (without a path) for
    ///   an object with two numbers that read as one double.
    /// - Complexity: as ``jsonDocument(header:entities:numbers:)``.
    static func propertyListDocument(
        header: SnapshotValue, entities: [(name: String, objects: [SnapshotValue])], numbers byID: ExactNumbers.ByID = ExactNumbers.ByID()
    ) throws -> Data {
        let table = BPlistObjectTable(expectedObjects: 1_024)
        let headerReference = table.add(header)
        var names: [UInt32] = [], arrays: [UInt32] = []
        for entity in entities {
            var elements: [UInt32] = []
            elements.reserveCapacity(entity.objects.count)
            let parts = try propertyListParts(entity.objects, entity: entity.name, parts: partCount(entity.objects.count), numbers: byID)
            for part in parts {
                let base = table.append(part.table)
                elements.append(contentsOf: part.elements.lazy.map { $0 + base })
            }
            names.append(table.string(entity.name))
            arrays.append(table.array(elements))
        }
        let entitiesReference = table.dictionary(keys: names, values: arrays)
        let root = table.dictionary(keys: [table.string("header"), table.string("entities")], values: [headerReference, entitiesReference])
        return table.serialized(top: root)
    }

    // MARK: - Private

    /// How many parts to encode `count` objects in: one per core (at most 8) for a large
    /// entity, as for a store's tables.
    private static func partCount(_ count: Int) -> Int {
        count >= SnapshotCodec.parallelEncodingThreshold ? min(Processors.active, 8) : 1
    }

    /// Appends `objects` as the elements from `startIndex` on of the array of `entity` (the
    /// coding path of an error starts `entities.<entity>[<index>]`).
    private static func encodeJSON(
        _ objects: ArraySlice<SnapshotValue>, entity: String, startIndex: Int, numbers: ExactNumbers.ByID,
        into buffer: inout FastJSONBuffer
    ) throws {
        let path = CodingPath(node: CodingPath.root.appending(.key(DocumentKey.entities)).appending(.key(EntityNameKey(entity))).materialized)
        try FastJSONEncoder.encodeElements(into: &buffer, path: path, startIndex: startIndex) { array in
            for object in objects {
                // An object with numbers a double rounds writes them whole.
                if !numbers.isEmpty, let id = object["id"], let bag = numbers[id] {
                    try array.encode(ExactlyEncoded(value: object, numbers: bag))
                } else {
                    try array.encode(object)
                }
            }
        }
    }

    /// `objects` in `parts` consecutive runs, each encoded on its own thread.
    private static func jsonParts(
        _ objects: [SnapshotValue], entity: String, parts: Int, numbers: ExactNumbers.ByID
    ) throws -> [Data] {
        let count = objects.count
        return try inConsecutiveParts(count: count, parts: parts) { (_, range) throws(any Error) -> Data in
            var buffer = FastJSONBuffer(capacity: 4_096 + range.count * 256)
            try encodeJSON(objects[range], entity: entity, startIndex: range.lowerBound, numbers: numbers, into: &buffer)
            return buffer.takeData()
        }
    }

    /// `objects` in `parts` consecutive runs, each added to an object table of its own (on its
    /// own thread when there are several).
    private static func propertyListParts(
        _ objects: [SnapshotValue], entity: String, parts: Int, numbers: ExactNumbers.ByID
    ) throws(GraphStoreError) -> [TablePart] {
        let count = objects.count
        if parts <= 1 { return [try propertyListRun(objects[...], entity: entity, numbers: numbers)] }
        // Each run's table is made, filled and handed back by one thread; the lock orders the
        // hand-over.
        return try inConsecutiveParts(count: count, parts: parts) { (_, range) throws(GraphStoreError) -> TablePart in
            try propertyListRun(objects[range], entity: entity, numbers: numbers)
        }
    }

    /// `objects` of `entity` added to an object table of their own.
    private static func propertyListRun(
        _ objects: ArraySlice<SnapshotValue>, entity: String, numbers: ExactNumbers.ByID
    ) throws(GraphStoreError) -> TablePart {
        let table = BPlistObjectTable(expectedObjects: objects.count * 16)
        guard !numbers.isEmpty else { return TablePart(table: table, elements: objects.map(table.add)) }
        var elements: [UInt32] = []
        elements.reserveCapacity(objects.count)
        for object in objects {
            let id = object["id"]
            do {
                elements.append(try table.add(object, numbers: id.flatMap { numbers[$0] }))
            } catch let EncodingError.invalidValue(_, context) {
                throw .codingFailed(path: nil, entity: entity, id: id.map(ModelMigrator.idText), reason: context.debugDescription)
            } catch {
                throw .codingFailed(path: nil, entity: entity, id: id.map(ModelMigrator.idText), reason: "\(error)")
            }
        }
        return TablePart(table: table, elements: elements)
    }
}

/// One run's object table, handed from the thread that made it to the one that joins the
/// runs. `@unchecked`: the table is written only by the thread that made it, before the
/// hand-over under `Guarded`'s lock, and only read after it.
private struct TablePart: @unchecked Sendable {
    let table: BPlistObjectTable
    let elements: [UInt32]
}

extension GenericSnapshot {
    /// The snapshot as JSON text for people and tools to read: the whole document
    /// (`{"entities":{…},"header":{…}}`), or, with `entity`, that entity's objects as an array.
    /// Values are written as the snapshot's own JSON writer writes them, so every number reads
    /// back as stored (`-0.0`, an integer beyond 64 bits, a double to the bit), and every
    /// object's members, the entities and the header are sorted by key, so the same snapshot
    /// always gives the same text. What `graphstore dump` prints (re-indented).
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` (without a path) for a
    ///   value JSON cannot hold, naming the entity and the id.
    /// - Complexity: O(size of the objects).
    public func sortedJSON(entity: String? = nil) throws -> Data {
        let source = withURLsAndDecimalsInJSONShape()
        let byID = source.exactNumbers.byID
        func objects(_ values: [SnapshotValue]) -> [ExactlyEncoded] {
            values.map { ExactlyEncoded(value: $0, numbers: $0["id"].flatMap { byID[$0] }, sortsKeys: true) }
        }
        do {
            if let entity {
                return try FastJSONEncoder.encode(objects(source.objects(of: entity)))
            }
            var header = source.header
            header.counts = Dictionary(uniqueKeysWithValues: source.entities.map { ($0.name, $0.objects.count) })
            let headerValue = try SnapshotCodec.makeJSONDecoder().decode(SnapshotValue.self, from: SnapshotCodec.makeJSONEncoder().encode(header))
            let document = SortedDocument(
                header: ExactlyEncoded(value: headerValue, numbers: nil, sortsKeys: true),
                entities: source.entities.map { ($0.name, objects($0.objects)) }.sorted { $0.0 < $1.0 })
            return try FastJSONEncoder.encode(document)
        } catch let error as EncodingError {
            throw Self.describe(error, entities: source.entities)
        } catch let error as GraphStoreError {
            throw error
        } catch {
            throw GraphStoreError.codingFailed(path: nil, entity: entity ?? "document", id: nil, reason: "\(error)")
        }
    }

    /// `{"entities":{<name>:[…],…},"header":{…}}`, in that order.
    private struct SortedDocument: Encodable {
        let header: ExactlyEncoded
        let entities: [(String, [ExactlyEncoded])]

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            var byName = container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("entities"))
            for (name, objects) in entities { try byName.encode(objects, forKey: AnyKey(name)) }
            try container.encode(header, forKey: AnyKey("header"))
        }
    }
}
