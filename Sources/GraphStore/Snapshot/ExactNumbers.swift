import Foundation

/// The numbers of a store's objects that a `Double` holds only rounded, with their exact
/// values, so that generic values (``SnapshotValue/double(_:)``) carry every digit through a
/// migration or a conversion.
///
/// A `Decimal` of more than 15 significant digits (`12345678901234567890.12`) or an `Int128` /
/// `UInt128` beyond 64 bits is a JSON number that reads as a rounded ``SnapshotValue/double(_:)``;
/// so is an `Int128` beyond 64 bits in a property list (a 16-byte integer object, read as
/// signed). Reading records the number under the object that holds it (by id) and the double it
/// rounds to; writing JSON writes the recorded number wherever that double still stands in that
/// object (a property list, a recorded integer as a 16-byte integer object),
/// so a field left alone, renamed or copied within the object keeps its digits, and an object
/// that a later journal record replaced leaves no numbers behind. A double a step computed that
/// happens to equal one its object held is written with the recorded digits, which read back
/// as that same double.
///
/// Two different numbers of one object that round to the same double (a long one and another,
/// long or short) cannot both be kept: writing that double in that object throws rather than
/// pick one. An object whose id a step changed loses its numbers (its doubles are written as
/// doubles).
package struct ExactNumbers: Sendable {
    /// The numbers of one object.
    package struct Bag: Sendable {
        /// The exact values of each rounded double, by the double's bit pattern: more than one
        /// when different numbers rounded to it.
        fileprivate var values: [UInt64: [Decimal]] = [:]
        /// How many long numbers of the object rounded to each double.
        fileprivate var longCounts: [UInt64: Int] = [:]
        /// The bit patterns of rounded doubles that the object also holds as a number a double
        /// holds exactly: such a number cannot take the long one's digits. Found by
        /// ``settle(with:)`` once the object is read, so objects without a long number cost
        /// nothing.
        fileprivate var plain: Set<UInt64> = []

        package init() {}

        package var isEmpty: Bool { values.isEmpty }

        /// Records the number whose JSON text is `text`, read as `double`, if the double lost
        /// some of its digits and a `Decimal` holds them all.
        ///
        /// - Complexity: O(1) for a text of at most 15 significant digits (every such number
        ///   survives a `Double`); O(length of the text) otherwise.
        mutating func record(_ text: some Collection<UInt8>, as double: Double) {
            guard double.isFinite, ExactNumbers.significantDigits(text) > 15 else { return }
            let string = String(decoding: text, as: UTF8.self)
            let posix = Locale(identifier: "en_US_POSIX")
            guard let exact = Decimal(string: string, locale: posix), !exact.isNaN,
                  // A Decimal holds up to 38 or 39 digits; a longer number is not kept whole,
                  // and no Swift type wrote it.
                  ExactNumbers.significantDigits(Array(exact.description.utf8)) == ExactNumbers.significantDigits(text),
                  Decimal(string: "\(double)", locale: posix) != exact
            else { return }
            add(exact, as: double)
        }

        /// Records `value`, a property list's 16-byte integer beyond 64 bits (or negative),
        /// read as `double`. Always, even when the double's shortest text reads back as `value`:
        /// a property list writes a double as a real, whose binary value is what an integer type
        /// reads from it.
        ///
        /// - Complexity: O(1).
        mutating func record(integer value: Int128, as double: Double) {
            let text = String(value)
            // A Decimal's 128-bit mantissa holds every Int128.
            guard let exact = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), exact.description == text else { return }
            add(exact, as: double)
        }

        /// Adds `exact`, a number read as the double `double` that rounds it.
        private mutating func add(_ exact: Decimal, as double: Double) {
            let key = double.bitPattern
            longCounts[key, default: 0] += 1
            if let held = values[key] {
                if !held.contains(exact) { values[key] = held + [exact] }
            } else {
                values[key] = [exact]
            }
        }

        /// Finds, in `object` (the object whose numbers these are, as read), the rounded
        /// doubles that it also holds as numbers a double holds exactly: more of them than long
        /// numbers rounded to them.
        ///
        /// - Complexity: O(1) without a long number; O(size of the object) otherwise.
        package mutating func settle(with object: SnapshotValue) {
            guard !longCounts.isEmpty else { return }
            var seen: [UInt64: Int] = [:]
            func visit(_ value: SnapshotValue) {
                switch value {
                case .double(let number) where longCounts[number.bitPattern] != nil: seen[number.bitPattern, default: 0] += 1
                case .array(let values): values.forEach(visit)
                case .object(let fields): fields.values.forEach(visit)
                default: break
                }
            }
            visit(object)
            for (bits, count) in seen where count > longCounts[bits] ?? 0 { plain.insert(bits) }
        }

        /// Takes in another bag's numbers (of an object with the same id).
        mutating func merge(_ other: Bag) {
            values.merge(other.values) { held, new in held + new.filter { !held.contains($0) } }
            longCounts.merge(other.longCounts, uniquingKeysWith: +)
            plain.formUnion(other.plain)
        }

        /// The exact value to write for `double`, or `nil` to write the double itself.
        ///
        /// - Throws: `EncodingError.invalidValue` when two different numbers of the object
        ///   rounded to `double`.
        package func exact(for double: Double, codingPath: [any CodingKey]) throws -> Decimal? {
            guard let recorded = values[double.bitPattern] else { return nil }
            guard recorded.count == 1, !plain.contains(double.bitPattern) else {
                var numbers = recorded.sorted().map(\.description)
                if plain.contains(double.bitPattern) { numbers.insert("\(double)", at: 0) }
                throw EncodingError.invalidValue(double, EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "the numbers \(numbers.joined(separator: " and ")) of one object all read as the double \(double); writing it would lose the digits of all but one"))
            }
            return recorded[0]
        }
    }

    /// Per entity name, per object id (its ``SnapshotValue/idMatchingKey``: a `Date` id read
    /// as a date and found again as a double, or a whole-number one written by a journal as an
    /// integer, is one object's), the object's numbers; only objects with a long number.
    private var objects: [String: [SnapshotValue: Bag]] = [:]

    package init() {}

    package var isEmpty: Bool { objects.isEmpty }

    /// Sets the numbers of the object `id` of `entity` (none when `bag` holds no long number).
    package mutating func set(_ bag: Bag, entity: String, id: SnapshotValue) {
        if bag.isEmpty {
            objects[entity]?[id.idMatchingKey] = nil
        } else {
            objects[entity, default: [:]][id.idMatchingKey] = bag
        }
    }

    /// Forgets the numbers of the object `id` of `entity`.
    package mutating func remove(entity: String, id: SnapshotValue) {
        objects[entity]?[id.idMatchingKey] = nil
    }

    /// Forgets the numbers of every object of `entity`.
    package mutating func removeAll(entity: String) {
        objects[entity] = nil
    }

    /// The numbers of the object `id` of `entity`.
    package func bag(entity: String, id: SnapshotValue) -> Bag? {
        objects[entity]?[id.idMatchingKey]
    }

    /// The numbers by object id alone, whatever the entity (so that a step that renames an
    /// entity keeps them); objects of two entities with one id pool theirs.
    package var byID: ByID {
        var pooled: [SnapshotValue: Bag] = [:]
        for bags in objects.values {
            for (id, bag) in bags { pooled[id, default: Bag()].merge(bag) }
        }
        return ByID(bags: pooled)
    }

    /// The numbers of objects by id alone (``byID``), looked up as they are kept: by the id's
    /// ``SnapshotValue/idMatchingKey``, so that an object whose `Date` id was read as a date
    /// finds its numbers once the id is a double.
    package struct ByID: Sendable {
        fileprivate var bags: [SnapshotValue: Bag] = [:]

        package init() {}

        fileprivate init(bags: [SnapshotValue: Bag]) {
            self.bags = bags
        }

        package var isEmpty: Bool { bags.isEmpty }

        /// The numbers of the object whose id is `id`, in whatever kind it was read.
        package subscript(id: SnapshotValue) -> Bag? {
            bags[id.idMatchingKey]
        }
    }

    /// The significant digits of a JSON number's text: its mantissa's digits without the
    /// leading and trailing zeros.
    fileprivate static func significantDigits(_ text: some Collection<UInt8>) -> Int {
        var first: Int?, last = 0, position = 0
        for byte in text {
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { break }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { continue }
            if byte != UInt8(ascii: "0") {
                if first == nil { first = position }
                last = position
            }
            position += 1
        }
        guard let first else { return 0 }
        return last - first + 1
    }
}

/// A generic value encoded with the exact numbers of the object it belongs to: a double its
/// object's numbers hold the exact value of is written as that number. With `sortsKeys`, an
/// object's members are written sorted by key, as `JSONEncoder` does with `.sortedKeys` (the
/// SQLite store's `json` columns); everything else as ``SnapshotValue`` encodes it.
package struct ExactlyEncoded: Encodable {
    let value: SnapshotValue
    let numbers: ExactNumbers.Bag?
    let sortsKeys: Bool

    package init(value: SnapshotValue, numbers: ExactNumbers.Bag?, sortsKeys: Bool = false) {
        self.value = value
        self.numbers = numbers
        self.sortsKeys = sortsKeys
    }

    package func encode(to encoder: any Encoder) throws {
        switch value {
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(Self(value: value, numbers: numbers, sortsKeys: sortsKeys)) }
        case .object(let fields):
            var container = encoder.container(keyedBy: AnyKey.self)
            func member(_ key: String, _ value: SnapshotValue) throws {
                try container.encode(Self(value: value, numbers: numbers, sortsKeys: sortsKeys), forKey: AnyKey(key))
            }
            if sortsKeys {
                for key in fields.keys.sorted() { try member(key, fields[key]!) }
            } else {
                for (key, value) in fields { try member(key, value) }
            }
        case .double(let number):
            if let exact = try numbers?.exact(for: number, codingPath: encoder.codingPath) {
                var container = encoder.singleValueContainer()
                try container.encode(exact)
            } else {
                try value.encode(to: encoder)
            }
        default:
            try value.encode(to: encoder)
        }
    }
}
