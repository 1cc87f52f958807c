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
            var keys: [UInt32] = [], values: [UInt32] = []
            keys.reserveCapacity(fields.count)
            values.reserveCapacity(fields.count)
            for (key, value) in fields {
                keys.append(string(key))
                values.append(add(value))
            }
            return dictionary(keys: keys, values: values)
        }
    }
}
