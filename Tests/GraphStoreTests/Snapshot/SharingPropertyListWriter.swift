import Foundation

@testable import GraphStore

/// Writes a ``SnapshotValue`` as a binary property list in which every value is written once and
/// equal values are shared by reference, strings, arrays and dictionaries alike, as Python's
/// `plistlib` and Foundation's writer may share them. Written independently of the library's
/// writer (which shares short strings only), to make files whose shared values expand: a long
/// string held by every object, or a reference bomb.
enum SharingPropertyListWriter {
    /// - Parameter repeatedKey: A dictionary key written `times` times wherever it occurs (the
    ///   same key and value objects each time), as no writer would: a bomb in the keys.
    static func write(_ root: SnapshotValue, repeating repeatedKey: String? = nil, times: Int = 1) -> Data {
        var writer = Writer()
        writer.repeatedKey = repeatedKey
        writer.times = times
        let top = writer.reference(root)
        return writer.finish(top: top)
    }

    private struct Writer {
        /// The objects' encodings, in reference order.
        var objects: [[UInt8]] = []
        var references: [SnapshotValue: Int] = [:]
        var repeatedKey: String?
        var times = 1

        /// The reference of `value`, written (with what it holds) the first time it is met.
        mutating func reference(_ value: SnapshotValue) -> Int {
            if let known = references[value] { return known }
            let slot = objects.count
            objects.append([])
            references[value] = slot
            objects[slot] = encode(value)
            return slot
        }

        private mutating func encode(_ value: SnapshotValue) -> [UInt8] {
            switch value {
            case .null: return encode(.string("$null"))
            case .bool(let flag): return [flag ? 0x09 : 0x08]
            case .integer(let number): return [0x13] + Self.bigEndian(UInt64(bitPattern: number))
            case .unsigned(let number): return [0x14] + Self.bigEndian(0) + Self.bigEndian(number)
            case .double(let number): return [0x23] + Self.bigEndian(number.bitPattern)
            case .date(let date): return [0x33] + Self.bigEndian(date.timeIntervalSinceReferenceDate.bitPattern)
            case .data(let data): return Self.marker(0x40, count: data.count) + Array(data)
            case .string(let text):
                if text.utf8.allSatisfy({ $0 < 0x80 }) { return Self.marker(0x50, count: text.utf8.count) + Array(text.utf8) }
                let units = Array(text.utf16)
                return Self.marker(0x60, count: units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            case .array(let elements):
                let refs = elements.map { reference($0) }
                return Self.marker(0xA0, count: refs.count) + refs.flatMap(Self.ref)
            case .object(let fields):
                let names = fields.keys.sorted().flatMap { $0 == repeatedKey ? Array(repeating: $0, count: times) : [$0] }
                let keys = names.map { reference(.string($0)) }
                let values = names.map { reference(fields[$0]!) }
                return Self.marker(0xD0, count: names.count) + keys.flatMap(Self.ref) + values.flatMap(Self.ref)
            }
        }

        /// The file: header, objects, offset table (8-byte offsets) and trailer (4-byte references).
        func finish(top: Int) -> Data {
            var bytes = Array("bplist00".utf8)
            var offsets: [Int] = []
            for object in objects {
                offsets.append(bytes.count)
                bytes += object
            }
            let table = bytes.count
            for offset in offsets { bytes += Self.bigEndian(UInt64(offset)) }
            bytes += [0, 0, 0, 0, 0, 0, 8, 4]
            bytes += Self.bigEndian(UInt64(objects.count)) + Self.bigEndian(UInt64(top)) + Self.bigEndian(UInt64(table))
            return Data(bytes)
        }

        static func bigEndian(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
        static func ref(_ reference: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(reference).bigEndian) { Array($0) } }

        /// An object's marker byte with its count: in the low nibble, or 0xF then an integer.
        static func marker(_ kind: UInt8, count: Int) -> [UInt8] {
            count < 15 ? [kind | UInt8(count)] : [kind | 0x0F, 0x13] + bigEndian(UInt64(count))
        }
    }
}
