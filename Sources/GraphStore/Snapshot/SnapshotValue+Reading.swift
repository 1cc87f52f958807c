import Foundation
internal import GraphStoreCoding

/// Snapshot documents read straight into ``SnapshotValue``s with the parsers that open a store
/// (``FastJSONParser``'s tape, ``BPlistDocument``), so that what the tools read is what an app
/// reads, at the same speed.
///
/// The values are those `SnapshotValue`'s `init(from:)` gives through `JSONDecoder` (with the
/// snapshot's strategies) or `PropertyListDecoder`, with the differences of the fast decoders:
/// a JSON number is an integer only when it denotes one exactly, invalid UTF-8 or unpaired
/// surrogates are refused, and in a property list only the ASCII string `"$null"` is `nil`
/// (our writer keeps the text `"$null"` as UTF-16). As there, a property-list real that holds
/// an integer exactly reads as ``integer(_:)``. A key an object or dictionary holds twice
/// keeps its first value, as the app's typed decoding and `JSONDecoder` keep it.
extension SnapshotValue {
    /// Why a document does not read as generic values, and where (a byte offset in the
    /// uncompressed binary property list; JSON offsets, which count the UTF-8 text, stay in
    /// the reason).
    struct ReadingFailure: Error, CustomStringConvertible {
        let offset: Int?
        let description: String
    }

    /// The root of a JSON snapshot document.
    ///
    /// - Throws: ``ReadingFailure``.
    /// - Complexity: O(size of the document).
    package static func readJSON(_ data: Data) throws -> SnapshotValue {
        var numbers = ExactNumbers(), bag = ExactNumbers.Bag()
        return try readJSON(data, objectsIn: .none, numbers: &numbers, unscoped: &bag)
    }

    /// Where a document's objects stand, whose numbers are recorded per object (by entity name
    /// and id): the elements of `entities.<name>` in a snapshot, of `<name>.upsert` in a
    /// journal record.
    package enum ObjectArrays: Sendable {
        case none, snapshot, journalRecord

        /// The entity whose objects the array being read at `depth`, under the member names
        /// `keys` from the root, holds, if it is one of the document's object arrays.
        func entity(ofArrayAt depth: Int, keys: [String]) -> String? {
            guard depth == 2, keys.count == 2 else { return nil }
            switch self {
            case .none: return nil
            case .snapshot: return keys[0] == "entities" ? keys[1] : nil
            case .journalRecord: return keys[1] == "upsert" ? keys[0] : nil
            }
        }
    }

    /// The root of a JSON document whose objects stand in `arrays`, with the numbers of each
    /// object that a double holds only rounded set in `numbers`.
    ///
    /// - Throws: ``ReadingFailure``.
    /// - Complexity: O(size of the document).
    package static func readJSON(_ data: Data, objectsIn arrays: ObjectArrays, numbers: inout ExactNumbers) throws -> SnapshotValue {
        var bag = ExactNumbers.Bag()
        return try readJSON(data, objectsIn: arrays, numbers: &numbers, unscoped: &bag)
    }

    /// The root of a JSON value that is one object's field (a SQLite `json` column), with its
    /// numbers that a double holds only rounded added to `bag`, the object's.
    ///
    /// - Throws: ``ReadingFailure``.
    /// - Complexity: O(size of the document).
    package static func readJSON(_ data: Data, into bag: inout ExactNumbers.Bag) throws -> SnapshotValue {
        var numbers = ExactNumbers()
        return try readJSON(data, objectsIn: .none, numbers: &numbers, unscoped: &bag)
    }

    private static func readJSON(
        _ data: Data, objectsIn arrays: ObjectArrays, numbers: inout ExactNumbers, unscoped: inout ExactNumbers.Bag
    ) throws -> SnapshotValue {
        do {
            return try FastJSONDecoder.withUTF8Representation(of: data) { bytes in
                let document: FastJSONDocument
                do {
                    document = try FastJSONParser.parse(bytes)
                } catch {
                    throw ReadingFailure(offset: nil, description: "\(error)")
                }
                var reader = JSONReader(document: document, arrays: arrays, numbers: numbers, unscoped: unscoped)
                let root = try reader.value(at: 0, depth: 0)
                numbers = reader.numbers
                unscoped = reader.unscoped
                return root
            }
        } catch let failure as ReadingFailure {
            throw failure
        } catch {
            // The document is not UTF-8, UTF-16 or UTF-32.
            throw ReadingFailure(offset: nil, description: "\(error)")
        }
    }

    /// The root of a binary-plist snapshot document, whose strings, data and elements may take
    /// at most `expansionLimit` bytes (see ``BPlistExpansion``).
    ///
    /// - Throws: ``ReadingFailure``; ``BPlistExpansionExceeded`` past the limit.
    /// - Complexity: O(size of the document).
    static func readPropertyList(_ data: Data, expansionLimit: Int = .max) throws -> SnapshotValue {
        var numbers = ExactNumbers()
        return try readPropertyList(data, objectsIn: .none, numbers: &numbers, expansionLimit: expansionLimit)
    }

    /// The root of a binary-plist document whose objects stand in `arrays`, with each object's
    /// integers beyond 64 bits (16-byte integers, which a ``SnapshotValue`` holds only as a
    /// rounded ``double(_:)``) set in `numbers`, as ``readJSON(_:objectsIn:numbers:)`` sets a
    /// JSON document's long numbers.
    ///
    /// - Throws: ``ReadingFailure``; ``BPlistExpansionExceeded`` past the limit.
    /// - Complexity: O(size of the document).
    static func readPropertyList(
        _ data: Data, objectsIn arrays: ObjectArrays, numbers: inout ExactNumbers, expansionLimit: Int = .max
    ) throws -> SnapshotValue {
        do {
            let document = try BPlistDocument(data)
            let expansion = BPlistExpansion(limit: BPlistExpansion.budget(limit: expansionLimit, documentBytes: data.count))
            var reader = try PropertyListReader(document: document, expansion: BPlistSpending(expansion), arrays: arrays, numbers: numbers)
            let root = try reader.value(document.topObject, depth: 0)
            numbers = reader.numbers
            return root
        } catch let error as BPlistSyntaxError {
            throw ReadingFailure(offset: error.offset, description: error.description)
        }
    }
}

// MARK: - JSON

private struct JSONReader {
    let document: FastJSONDocument
    let tokens: UnsafeMutablePointer<FastJSONToken>
    /// Where the document's objects stand.
    let arrays: SnapshotValue.ObjectArrays
    /// The numbers of the objects read so far that a double holds only rounded.
    var numbers: ExactNumbers
    /// Those of numbers outside the objects.
    var unscoped: ExactNumbers.Bag
    /// Those of the object being read, when inside one.
    private var current: ExactNumbers.Bag?
    /// The keys of the members being read, from the root.
    private var keys: [String] = []

    init(document: FastJSONDocument, arrays: SnapshotValue.ObjectArrays, numbers: ExactNumbers, unscoped: ExactNumbers.Bag) {
        self.document = document
        self.arrays = arrays
        self.numbers = numbers
        self.unscoped = unscoped
        tokens = document.tokens
    }

    /// The value whose token is at `index`, `depth` containers down; the parser has checked
    /// the syntax and depth.
    mutating func value(at index: Int, depth: Int) throws -> SnapshotValue {
        let token = tokens[index]
        switch token.kind {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .number: return try number(at: index)
        case .string:
            let text = string(at: index)
            switch text {
            // The snapshot's non-finite doubles, as `JSONDecoder` reads them into a `Double`.
            case "NaN": return .double(.nan)
            case "Infinity": return .double(.infinity)
            case "-Infinity": return .double(-.infinity)
            default: return .string(text)
            }
        case .array:
            var values: [SnapshotValue] = []
            values.reserveCapacity(token.count)
            var element = index + 1
            let entity = current == nil ? arrays.entity(ofArrayAt: depth, keys: keys) : nil
            for _ in 0..<token.count {
                if let entity {
                    // One of the document's objects: its numbers are its own.
                    current = ExactNumbers.Bag()
                    let object = try value(at: element, depth: depth + 1)
                    if var bag = current, !bag.isEmpty, let id = object["id"] {
                        bag.settle(with: object)
                        numbers.set(bag, entity: entity, id: id)
                    }
                    current = nil
                    values.append(object)
                } else {
                    values.append(try value(at: element, depth: depth + 1))
                }
                element = document.skip(element)
            }
            return .array(values)
        case .object:
            var fields: [String: SnapshotValue] = [:]
            fields.reserveCapacity(token.count)
            var member = index + 1
            for _ in 0..<token.count {
                // A repeated key: the first one counts, as in `JSONDecoder` and the app's
                // typed decoding. A later value is still read, so a damaged one is refused,
                // but its numbers are not kept: nothing writes them.
                let key = string(at: member)
                keys.append(key)
                if fields[key] == nil {
                    fields[key] = try value(at: member + 1, depth: depth + 1)
                } else {
                    let kept = (numbers, unscoped, current)
                    _ = try value(at: member + 1, depth: depth + 1)
                    (numbers, unscoped, current) = kept
                }
                keys.removeLast()
                member = document.skip(member + 1)
            }
            return .object(fields)
        }
    }

    private mutating func number(at index: Int) throws -> SnapshotValue {
        let tag = tokens[index].tag, text = document.span(index)
        if let value = FastJSONNumbers.int64(text, tag: tag) {
            // `-0` (or `-0.0`) is the double -0.0, its sign kept.
            if value == 0, tag & FastJSONFlag.negative != 0 { return .double(-0.0) }
            return .integer(value)
        }
        if let value = FastJSONNumbers.uint64(text, tag: tag) { return .unsigned(value) }
        if let value = FastJSONNumbers.double(text, tag: tag) {
            if current != nil { current!.record(text, as: value) } else { unscoped.record(text, as: value) }
            return .double(value)
        }
        throw SnapshotValue.ReadingFailure(
            offset: nil, description: "the number \(String(decoding: text, as: UTF8.self)) at byte \(tokens[index].offset) does not fit in a Double")
    }

    private func string(at index: Int) -> String {
        let span = document.span(index)
        if tokens[index].tag & FastJSONFlag.escaped == 0 { return String(decoding: span, as: UTF8.self) }
        return FastJSONStrings.unescape(span)
    }
}

// MARK: - Property list

private struct PropertyListReader {
    let document: BPlistDocument
    /// How many more elements of arrays and dictionaries may be read. Objects are shared by
    /// reference, so a few hundred bytes of arrays holding the next one twice would expand to
    /// 2⁴⁰ values. Writers share values, not arrays and dictionaries (ours and Apple's), so a
    /// file expands to about the elements its containers hold: reading four times that (at
    /// least a million) is refused, not expanded.
    private var budget: Int
    /// What the values read take (see ``BPlistExpansion``): also the bytes of strings, data and
    /// keys, which the element count misses (a 1 MiB string held a million times).
    private let expansion: BPlistSpending
    /// Where the document's objects stand.
    private let arrays: SnapshotValue.ObjectArrays
    /// The integers beyond 64 bits of the objects read so far.
    private(set) var numbers: ExactNumbers
    /// Those of the object being read, when inside one.
    private var current: ExactNumbers.Bag?
    /// The keys of the members being read, from the root.
    private var keys: [String] = []

    /// - Throws: ``BPlistSyntaxError`` for an object the file's table points outside of.
    /// - Complexity: O(objects), a look at each.
    init(document: BPlistDocument, expansion: BPlistSpending, arrays: SnapshotValue.ObjectArrays, numbers: ExactNumbers) throws {
        self.document = document
        self.expansion = expansion
        self.arrays = arrays
        self.numbers = numbers
        var elements = 0
        for reference in 0..<document.objectCount {
            let object = try document.object(reference)
            switch object.kind {
            case .array, .set, .dictionary: elements &+= object.count
            default: break
            }
        }
        budget = max(1 << 20, elements > Int.max / 4 ? Int.max : 4 * elements)
    }

    mutating func value(_ reference: Int, depth: Int) throws -> SnapshotValue {
        let object = try document.object(reference)
        switch object.kind {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .integer where object.count == 16:
            // Read as signed, as CoreFoundation and Python read it. From 0 to `UInt64.max`,
            // the value a shorter integer object would hold (what CoreFoundation writes).
            let value = document.integer128(object)
            if let unsigned = UInt64(exactly: value) { return Int64(exactly: unsigned).map(SnapshotValue.integer) ?? .unsigned(unsigned) }
            // Beyond 64 bits, or negative (which only a `UInt128` above `Int128.max` is written
            // as in 16 bytes, see `BPlistObjectTable.unsigned128(_:)`): a rounded double, whose
            // exact value the object's numbers keep, so that writing the object as a property
            // list gives the same 16 bytes back.
            let double = Double(value)
            current?.record(integer: value, as: double)
            return .double(double)
        case .integer:
            let value = try document.integer(object)
            if let signed = value.signed { return .integer(signed) }
            return .unsigned(value.unsigned!)
        case .real:
            // `PropertyListDecoder` reads a real that holds an integer exactly as one (the
            // sign of -0.0 kept), and `init(from:)` tries integers first.
            let value = document.real(object)
            if let integer = Int64(exactly: value) { return integer == 0 && value.sign == .minus ? .double(value) : .integer(integer) }
            if let unsigned = UInt64(exactly: value) { return .unsigned(unsigned) }
            return .double(value)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: document.real(object)))
        case .data:
            try expansion.spend(object, elements: false)
            return .data(Data(document.span(object, byteCount: object.count)))
        case .asciiString, .utf16String:
            if document.isNull(object) { return .null }
            try expansion.spend(object, elements: false)
            return .string(try document.string(object))
        case .uid:
            throw BPlistSyntaxError(offset: object.payload - 1, reason: "a UID, which a snapshot does not hold")
        case .array, .set:
            try checkDepth(depth, at: object)
            try spend(object.count, at: object)
            var values: [SnapshotValue] = []
            values.reserveCapacity(object.count)
            let entity = current == nil ? arrays.entity(ofArrayAt: depth, keys: keys) : nil
            for index in 0..<object.count {
                let reference = document.reference(at: object.payload, index: index)
                guard let entity else {
                    values.append(try value(reference, depth: depth + 1))
                    continue
                }
                // One of the document's objects: its numbers are its own.
                current = ExactNumbers.Bag()
                let element = try value(reference, depth: depth + 1)
                if var bag = current, !bag.isEmpty, let id = element["id"] {
                    bag.settle(with: element)
                    numbers.set(bag, entity: entity, id: id)
                }
                current = nil
                values.append(element)
            }
            return .array(values)
        case .dictionary:
            try checkDepth(depth, at: object)
            try spend(object.count, at: object)
            var fields: [String: SnapshotValue] = [:]
            fields.reserveCapacity(object.count)
            for index in 0..<object.count {
                let key = try document.object(document.reference(at: object.payload, index: index))
                guard key.kind == .asciiString || key.kind == .utf16String else {
                    throw BPlistSyntaxError(offset: key.payload - 1, reason: "a dictionary key is \(key.kind.debugDescription), not a string")
                }
                let valueReference = document.reference(at: object.payload, index: object.count + index)
                try expansion.spend(key, elements: false)
                let name = try document.string(key)
                keys.append(name)
                defer { keys.removeLast() }
                // A repeated key: the first one counts, as in the app's typed decoding. A later
                // value is still read, so a damaged one is refused, but its numbers are not kept.
                if fields[name] == nil {
                    fields[name] = try value(valueReference, depth: depth + 1)
                } else {
                    let kept = (numbers, current)
                    _ = try value(valueReference, depth: depth + 1)
                    (numbers, current) = kept
                }
            }
            return .object(fields)
        }
    }

    private mutating func spend(_ elements: Int, at object: BPlistObject) throws {
        try expansion.spend(object, elements: true)
        budget -= elements
        guard budget >= 0 else {
            throw BPlistSyntaxError(
                offset: object.payload - 1,
                reason: "the property list's shared arrays and dictionaries expand to more than four times the elements they hold (a reference bomb?)")
        }
    }

    /// A property list can hold cycles: deeper nesting than the decoder takes is refused.
    private func checkDepth(_ depth: Int, at object: BPlistObject) throws {
        guard depth < BPlistDecoder.maximumDepth else {
            throw BPlistSyntaxError(offset: object.payload - 1, reason: "the property list nests deeper than \(BPlistDecoder.maximumDepth) levels (a cycle?)")
        }
    }
}
