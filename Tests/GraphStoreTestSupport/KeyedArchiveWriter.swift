import Foundation

/// Writes `NSKeyedArchiver` archives as binary property lists, the way Foundation lays them
/// out: `$archiver`, `$version`, `$top` and `$objects`, where `$objects[0]` is `$null` and
/// objects refer to each other by UID.
///
/// Written independently of the library's reader, so a test that round-trips through both
/// checks the reader against the format rather than against itself.
public final class KeyedArchiveWriter {
    /// A property-list value; ``uid(_:)`` refers to an entry of `$objects`.
    public indirect enum Value: Equatable, Sendable {
        case uid(Int)
        case string(String)
        case integer(Int64)
        case real(Double)
        case bool(Bool)
        case data(Data)
        case array([Value])
        case dictionary([String: Value])
    }

    private var objects: [Value] = [.string("$null")]
    private var classRecords: [String: Int] = [:]

    public init() {}

    /// The UID of `$null`.
    public static let null = Value.uid(0)

    /// Adds `value` to `$objects` and returns its UID.
    public func add(_ value: Value) -> Value {
        objects.append(value)
        return .uid(objects.count - 1)
    }

    /// A slot in `$objects` to fill later with ``fill(_:with:)``, for objects that refer to each
    /// other.
    public func reserve() -> Value { add(.string("$null")) }

    /// Puts `value` into the slot `uid` names.
    public func fill(_ uid: Value, with value: Value) {
        guard case .uid(let index) = uid else { preconditionFailure("fill needs a UID") }
        objects[index] = value
    }

    /// An archived object of class `name` (its class record shared by all such objects) with
    /// `members`; returns its UID.
    public func object(_ name: String, superclasses: [String] = ["NSObject"], _ members: [String: Value]) -> Value {
        add(objectValue(name, superclasses: superclasses, members))
    }

    /// The dictionary of an archived object of class `name`, for ``fill(_:with:)``.
    public func objectValue(_ name: String, superclasses: [String] = ["NSObject"], _ members: [String: Value]) -> Value {
        var members = members
        members["$class"] = classRecord(name, superclasses: superclasses)
        return .dictionary(members)
    }

    /// An archived `NSString`.
    public func string(_ text: String) -> Value { add(.string(text)) }

    /// An archived `NSDictionary` with string keys.
    public func dictionary(_ entries: [(String, Value)]) -> Value {
        object("NSDictionary", [
            "NS.keys": .array(entries.map { string($0.0) }),
            "NS.objects": .array(entries.map(\.1)),
        ])
    }

    /// An archived `NSArray`.
    public func array(_ elements: [Value]) -> Value {
        object("NSArray", ["NS.objects": .array(elements)])
    }

    /// The archive as a binary property list, with `top` as `$top`.
    public func archive(top: [String: Value]) -> Data {
        BinaryPropertyList.serialize(.dictionary([
            "$archiver": .string("NSKeyedArchiver"),
            "$version": .integer(100_000),
            "$top": .dictionary(top),
            "$objects": .array(objects),
        ]))
    }

    private func classRecord(_ name: String, superclasses: [String]) -> Value {
        if let known = classRecords[name] { return .uid(known) }
        let uid = add(.dictionary(["$classname": .string(name), "$classes": .array(([name] + superclasses).map { .string($0) })]))
        if case .uid(let index) = uid { classRecords[name] = index }
        return uid
    }
}

/// A minimal `bplist00` writer: every value is an object of its own, references are 2 bytes
/// and offsets 4.
enum BinaryPropertyList {
    static func serialize(_ root: KeyedArchiveWriter.Value) -> Data {
        var encoded: [[UInt8]] = []
        var references: [[Int]] = []
        func flatten(_ value: KeyedArchiveWriter.Value) -> Int {
            let index = encoded.count
            encoded.append([])
            references.append([])
            switch value {
            case .array(let elements):
                let children = elements.map(flatten)
                encoded[index] = header(0xA, children.count)
                references[index] = children
            case .dictionary(let members):
                let keys = members.keys.sorted()
                let keyReferences = keys.map { flatten(.string($0)) }
                let valueReferences = keys.map { flatten(members[$0]!) }
                encoded[index] = header(0xD, keys.count)
                references[index] = keyReferences + valueReferences
            default:
                encoded[index] = scalar(value)
            }
            return index
        }
        let top = flatten(root)
        precondition(encoded.count < 1 << 16, "too many objects for 2-byte references")
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for (index, object) in encoded.enumerated() {
            offsets.append(bytes.count)
            bytes += object
            for reference in references[index] { bytes += [UInt8(reference >> 8), UInt8(reference & 0xFF)] }
        }
        let tableOffset = bytes.count
        for offset in offsets { bytes += bigEndian(UInt64(offset), size: 4) }
        bytes += [0, 0, 0, 0, 0, 0, 4, 2]
        bytes += bigEndian(UInt64(encoded.count), size: 8) + bigEndian(UInt64(top), size: 8) + bigEndian(UInt64(tableOffset), size: 8)
        return Data(bytes)
    }

    private static func scalar(_ value: KeyedArchiveWriter.Value) -> [UInt8] {
        switch value {
        case .uid(let index): return [0x81] + bigEndian(UInt64(index), size: 2)
        case .bool(let flag): return [flag ? 0x09 : 0x08]
        case .integer(let number): return [0x13] + bigEndian(UInt64(bitPattern: number), size: 8)
        case .real(let number): return [0x23] + bigEndian(number.bitPattern, size: 8)
        case .data(let bytes): return header(0x4, bytes.count) + Array(bytes)
        case .string(let text):
            if text.utf8.allSatisfy({ $0 < 0x80 }) { return header(0x5, text.utf8.count) + Array(text.utf8) }
            let units = Array(text.utf16)
            return header(0x6, units.count) + units.flatMap { bigEndian(UInt64($0), size: 2) }
        case .array, .dictionary: preconditionFailure("containers are flattened")
        }
    }

    private static func header(_ kind: UInt8, _ count: Int) -> [UInt8] {
        count < 15 ? [kind << 4 | UInt8(count)] : [kind << 4 | 0x0F, 0x13] + bigEndian(UInt64(count), size: 8)
    }

    private static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}
