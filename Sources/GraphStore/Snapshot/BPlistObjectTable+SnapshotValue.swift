import Foundation
internal import GraphStoreCoding

extension BPlistObjectTable {
    /// Adds `value` and everything it holds, as ``BPlistEncoder`` would encode it, without
    /// going through `Encoder`; returns its reference.
    ///
    /// - Complexity: O(size of `value`).
    func add(_ value: SnapshotValue) -> UInt32 {
        switch value {
        case .null: return null
        case .bool(let bool): return self.bool(bool)
        case .integer(let integer): return self.integer(integer)
        case .unsigned(let unsigned): return self.unsigned(unsigned)
        case .double(let double): return self.double(double)
        case .string(let string): return self.string(string)
        case .data(let data): return self.data(data)
        case .date(let date): return self.date(date)
        case .array(let values): return array(values.map(add))
        case .object(let fields):
            return dictionary(of: fields) { add($0) }
        }
    }

    /// A dictionary of `fields`, each value added by `add`.
    private func dictionary(of fields: [String: SnapshotValue], _ add: (SnapshotValue) throws -> UInt32) rethrows -> UInt32 {
        var keys: [UInt32] = [], values: [UInt32] = []
        keys.reserveCapacity(fields.count)
        values.reserveCapacity(fields.count)
        for (key, value) in fields {
            keys.append(string(key))
            values.append(try add(value))
        }
        return dictionary(keys: keys, values: values)
    }

    /// Adds `value` (an object, or one of its values) as ``add(_:)`` does, but each double
    /// that `numbers` (the object's) hold an integer for as that integer: a 16-byte integer
    /// object, as ``BPlistEncoder`` writes an `Int128` or `UInt128` beyond 64 bits (a negative
    /// one read from 16 bytes, as its 16 bytes: the bits of a `UInt128` above `Int128.max`).
    ///
    /// - Throws: `EncodingError.invalidValue` when two different numbers of the object rounded
    ///   to one of its doubles (see ``ExactNumbers/Bag/exact(for:codingPath:)``).
    /// - Complexity: O(size of `value`).
    func add(_ value: SnapshotValue, numbers: ExactNumbers.Bag?) throws -> UInt32 {
        guard let numbers else { return add(value) }
        switch value {
        case .double(let double):
            if let exact = try numbers.exact(for: double, codingPath: []) {
                // A long decimal stays the double it reads as: a property list holds decimals
                // as their parts, into which the field types' conversion has turned them.
                let text = exact.description
                if let integer = Int128(text) { return unsigned128(UInt128(truncatingIfNeeded: integer)) }
                if let integer = UInt128(text) { return unsigned128(integer) }
            }
            return self.double(double)
        case .array(let values):
            return array(try values.map { try add($0, numbers: numbers) })
        case .object(let fields):
            return try dictionary(of: fields) { try add($0, numbers: numbers) }
        default:
            return add(value)
        }
    }
}
