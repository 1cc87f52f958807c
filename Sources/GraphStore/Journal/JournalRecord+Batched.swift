import Foundation
internal import GraphStoreCoding

/// Decoding many journal records at once: the records' documents are only outlined (which
/// entity, which members, where each upserted object's text is), then every upserted object of
/// an entity, across all records, is decoded from one JSON array, as a snapshot's objects are.
/// Decoding each record's document as a `Decodable` of its own costs about twice as much: most
/// of it goes to the containers and keys of the small documents, not to the objects.
extension JournalRecord {
    /// The records at `locations` in the journal `bytes`, when every document has the plain
    /// shape the journal writes (``JournalRecord``): an object of entity names without escapes,
    /// each an object of `clear`, `upsert` and `delete` at most once. `nil` when a document has
    /// another shape, names an entity the schema lacks, or anything fails to decode: the caller
    /// then decodes the records one by one, which reports what is wrong.
    ///
    /// The parts' member-name signatures are those the survey uses (``JournalSurvey``): each
    /// distinct signature is given to the last part holding it, at its first object there.
    ///
    /// - Complexity: O(size of the records).
    static func decodeBatched(
        _ locations: [JournalFormatV1.RecordLocation], in data: Data, schema: Schema, parallel: Bool
    ) -> [JournalRecord]? {
        guard let outlines = data.withUnsafeBytes({ bytes in outline(locations, in: bytes, schema: schema) }) else { return nil }
        var records = zip(locations, outlines).map { location, parts in
            JournalRecord(version: location.version, parts: parts.map {
                Part(entity: $0.entity, clear: $0.clear, deletes: [], upserts: [])
            })
        }
        var entities: [Int] = []
        for parts in outlines {
            for part in parts where !entities.contains(part.entity) { entities.append(part.entity) }
        }
        for entity in entities {
            let description = schema.entities[entity]
            // Upserts newest record first, so that the first object of each distinct signature
            // in the array is the first in the newest part holding it.
            var upsertSegments: [(record: Int, part: Int, range: Range<Int>, count: Int)] = []
            var deleteSegments: [(record: Int, part: Int, range: Range<Int>, count: Int)] = []
            for record in outlines.indices.reversed() {
                for (index, part) in outlines[record].enumerated() where part.entity == entity && part.upsertCount > 0 {
                    upsertSegments.append((record, index, part.upserts, part.upsertCount))
                }
            }
            for record in outlines.indices {
                for (index, part) in outlines[record].enumerated() where part.entity == entity && part.deleteCount > 0 {
                    deleteSegments.append((record, index, part.deletes, part.deleteCount))
                }
            }
            if !upsertSegments.isEmpty {
                let array = joinedArray(upsertSegments.map(\.range), in: data)
                let userInfo: [CodingUserInfoKey: any Sendable] = [
                    DecodingContext.key: DecodingContext(schema: schema), BatchedObjects.entityKey: entity,
                ]
                guard let decoded = try? FastJSONDecoder.decode(BatchedObjects.self, from: array, userInfo: userInfo, parallel: parallel),
                      decoded.objects.count == upsertSegments.reduce(0, { $0 + $1.count })
                else { return nil }
                var start = 0
                var signatures = decoded.signatures[...]
                for segment in upsertSegments {
                    let end = start + segment.count
                    records[segment.record].parts[segment.part].upserts = Array(decoded.objects[start..<end])
                    while let first = signatures.first, first.firstIndex < end {
                        records[segment.record].parts[segment.part].signatures.append((first.signature, first.firstIndex - start))
                        signatures = signatures.dropFirst()
                    }
                    start = end
                }
            }
            if !deleteSegments.isEmpty {
                let array = joinedArray(deleteSegments.map(\.range), in: data)
                guard let keys = try? deletedKeys(description.type, from: array),
                      keys.count == deleteSegments.reduce(0, { $0 + $1.count })
                else { return nil }
                var start = 0
                for segment in deleteSegments {
                    records[segment.record].parts[segment.part].deletes = Array(keys[start..<(start + segment.count)])
                    start += segment.count
                }
            }
        }
        return records
    }

    /// A JSON array of the elements in `ranges` of `data`, in order.
    private static func joinedArray(_ ranges: [Range<Int>], in data: Data) -> Data {
        var array = Data(count: ranges.reduce(1) { $0 + $1.count + 1 })
        array.withUnsafeMutableBytes { array in
            data.withUnsafeBytes { source in
                array[0] = UInt8(ascii: "[")
                var at = 1
                for (index, range) in ranges.enumerated() {
                    if index > 0 {
                        array[at] = UInt8(ascii: ",")
                        at += 1
                    }
                    UnsafeMutableRawBufferPointer(rebasing: array[at..<(at + range.count)]).copyMemory(from: UnsafeRawBufferPointer(rebasing: source[range]))
                    at += range.count
                }
                array[at] = UInt8(ascii: "]")
            }
        }
        return array
    }

    private static func deletedKeys<E: Entity>(_ type: E.Type, from array: Data) throws -> [ObjectKey] {
        try FastJSONDecoder.decode([E.ID].self, from: array).map { ObjectKey($0) }
    }

    /// Every object of one entity, decoded from an array with the entity's own decoding
    /// function, and the array's distinct member-name signatures.
    private struct BatchedObjects: Decodable {
        static let entityKey = CodingUserInfoKey(rawValue: "GraphStore.JournalBatchedEntity")!
        var objects: [any Entity] = []
        var signatures: [(signature: MemberNameSignature, firstIndex: Int)] = []

        init(from decoder: any Decoder) throws {
            guard let context = decoder.userInfo[DecodingContext.key] as? DecodingContext,
                  let entity = decoder.userInfo[Self.entityKey] as? Int
            else { preconditionFailure("GraphStore: journal decoding without a schema") }
            let description = context.schema.entities[entity]
            var array: any UnkeyedDecodingContainer = try decoder.unkeyedContainer()
            if let count = array.count { objects.reserveCapacity(count) }
            while !array.isAtEnd { objects.append(try description.decodeOne(&array)) }
            if !objects.isEmpty, let survey = try decoder.unkeyedContainer() as? any MemberNameSignatureSurvey {
                signatures = survey.distinctMemberNameSignatures()
            }
        }
    }

    // MARK: - Outlines

    /// One part of a record's document, as outlined: the byte ranges of the elements of its
    /// arrays (between the brackets) and how many there are.
    private struct PartOutline {
        var entity: Int
        var clear = false
        var upserts: Range<Int> = 0..<0
        var upsertCount = 0
        var deletes: Range<Int> = 0..<0
        var deleteCount = 0
    }

    /// The parts of each record, sorted by entity; `nil` when a document is not of the plain
    /// shape.
    private static func outline(
        _ locations: [JournalFormatV1.RecordLocation], in bytes: UnsafeRawBufferPointer, schema: Schema
    ) -> [[PartOutline]]? {
        var names: [[UInt8]: Int] = [:]
        for entity in schema.entities { names[Array(entity.name.utf8)] = entity.index }
        var outlines: [[PartOutline]] = []
        outlines.reserveCapacity(locations.count)
        for location in locations {
            var scanner = OutlineScanner(bytes: bytes, at: location.document.lowerBound, end: location.document.upperBound)
            guard let parts = scanner.record(names: names) else { return nil }
            outlines.append(parts)
        }
        return outlines
    }

    /// Reads the structure of one record's document. Only the structure is checked here: the
    /// texts of the elements are checked by the decoding of the arrays they are joined into,
    /// whose parse rejects anything that is not JSON.
    private struct OutlineScanner {
        let bytes: UnsafeRawBufferPointer
        var at: Int
        let end: Int

        mutating func record(names: [[UInt8]: Int]) -> [PartOutline]? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var parts: [PartOutline] = []
            if !take(UInt8(ascii: "}")) {
                repeat {
                    guard let name = plainString(), take(UInt8(ascii: ":")),
                          let entity = names[Array(UnsafeRawBufferPointer(rebasing: bytes[name]))],
                          !parts.contains(where: { $0.entity == entity }),
                          let part = part(entity)
                    else { return nil }
                    parts.append(part)
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "}")) else { return nil }
            }
            skipSpace()
            guard at == end else { return nil }
            return parts.count > 1 ? parts.sorted { $0.entity < $1.entity } : parts
        }

        private mutating func part(_ entity: Int) -> PartOutline? {
            var part = PartOutline(entity: entity)
            var seen = (clear: false, upsert: false, delete: false)
            guard take(UInt8(ascii: "{")) else { return nil }
            if take(UInt8(ascii: "}")) { return part }
            repeat {
                guard let key = plainString(), take(UInt8(ascii: ":")) else { return nil }
                let name = UnsafeRawBufferPointer(rebasing: bytes[key])
                if name.elementsEqual("clear".utf8), !seen.clear {
                    seen.clear = true
                    if word("true") { part.clear = true } else if !word("false") && !word("null") { return nil }
                } else if name.elementsEqual("upsert".utf8), !seen.upsert {
                    seen.upsert = true
                    if !word("null") {
                        guard let (range, count) = arrayElements() else { return nil }
                        (part.upserts, part.upsertCount) = (range, count)
                    }
                } else if name.elementsEqual("delete".utf8), !seen.delete {
                    seen.delete = true
                    if !word("null") {
                        guard let (range, count) = arrayElements() else { return nil }
                        (part.deletes, part.deleteCount) = (range, count)
                    }
                } else {
                    return nil
                }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "}")) ? part : nil
        }

        private mutating func skipSpace() {
            while at < end {
                switch bytes[at] {
                case 0x20, 0x09, 0x0A, 0x0D: at += 1
                default: return
                }
            }
        }

        /// Takes `byte` after any white space, when it is next.
        private mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard at < end, bytes[at] == byte else { return false }
            at += 1
            return true
        }

        /// Takes the literal `text` after any white space, when it is next.
        private mutating func word(_ text: String) -> Bool {
            skipSpace()
            let count = text.utf8.count
            guard end - at >= count, UnsafeRawBufferPointer(rebasing: bytes[at..<(at + count)]).elementsEqual(text.utf8) else { return false }
            let after = at + count
            if after < end, !Self.endsValue(bytes[after]) { return false }
            at = after
            return true
        }

        /// The bytes between the quotes of a string without escapes.
        private mutating func plainString() -> Range<Int>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = at
            while at < end {
                let byte = bytes[at]
                if byte == UInt8(ascii: "\"") {
                    at += 1
                    return start..<(at - 1)
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                at += 1
            }
            return nil
        }

        /// The range of an array's elements (without the brackets) and their number.
        private mutating func arrayElements() -> (Range<Int>, Int)? {
            guard take(UInt8(ascii: "[")) else { return nil }
            skipSpace()
            let start = at
            if take(UInt8(ascii: "]")) { return (start..<start, 0) }
            var count = 0
            var last = start
            repeat {
                skipSpace()
                guard skipValue() else { return nil }
                last = at
                count += 1
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "]")) else { return nil }
            return (start..<last, count)
        }

        /// Skips one value: a string, an object or array (to its matching closer, counting
        /// depth), or anything else up to the byte that ends a value.
        private mutating func skipValue() -> Bool {
            guard at < end else { return false }
            switch bytes[at] {
            case UInt8(ascii: "\""):
                return skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while at < end {
                    switch bytes[at] {
                    case UInt8(ascii: "\""):
                        guard skipString() else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            at += 1
                            return true
                        }
                    default:
                        break
                    }
                    at += 1
                }
                return false
            default:
                let start = at
                while at < end, !Self.endsValue(bytes[at]) { at += 1 }
                return at > start
            }
        }

        private mutating func skipString() -> Bool {
            at += 1
            while at < end {
                switch bytes[at] {
                case UInt8(ascii: "\\"): at += 2
                case UInt8(ascii: "\""):
                    at += 1
                    return true
                default: at += 1
                }
            }
            return false
        }

        private static func endsValue(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D: true
            default: false
            }
        }
    }
}
