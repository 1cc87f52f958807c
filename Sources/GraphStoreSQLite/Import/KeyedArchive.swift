import Foundation
import GraphStoreCoding

/// An `NSKeyedArchiver` archive, read from its binary property list without Foundation's
/// unarchiver: the `$objects` table, the `$top` dictionary, and the objects' classes.
///
/// An archived object is a dictionary whose `$class` is a UID naming a class record
/// (`$classname`, `$classes`); its other members are plain values or UIDs of further objects.
/// UID 0 is `$null`.
struct KeyedArchive {
    /// A property-list value; ``uid(_:)`` is a reference into ``objects``.
    indirect enum Value: Equatable {
        case null
        case bool(Bool)
        case integer(Int64)
        case real(Double)
        case string(String)
        case data(Data)
        case uid(Int)
        case array([Value])
        case dictionary([String: Value])
    }

    /// Why the bytes are not a keyed archive.
    struct Failure: Error, Equatable {
        let reason: String
    }

    /// `$objects`.
    let objects: [Value]
    /// `$top`: the root objects by key (`root` for a Core Data model).
    let top: [String: Value]

    /// Reads the binary property list `data` as a keyed archive.
    ///
    /// - Throws: ``Failure`` for bytes that are not a binary property list, or one without
    ///   `$archiver` `NSKeyedArchiver`, `$objects` or `$top`.
    /// - Complexity: O(size of `data`).
    init(_ data: Data) throws(Failure) {
        let root: Value
        do {
            let document = try BPlistDocument(data)
            var reader = Reader(document: document)
            root = try reader.value(document.topObject, depth: 0)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(reason: "it is not a binary property list (\(error))")
        }
        guard case .dictionary(let archive) = root else { throw Failure(reason: "it is a property list but not a keyed archive: its top object is no dictionary") }
        guard case .string("NSKeyedArchiver")? = archive["$archiver"] else { throw Failure(reason: "it is a property list but not a keyed archive: it has no $archiver NSKeyedArchiver") }
        guard case .array(let objects)? = archive["$objects"], case .dictionary(let top)? = archive["$top"] else {
            throw Failure(reason: "it is a keyed archive without $objects or $top")
        }
        self.objects = objects
        self.top = top
    }

    /// The object `value` stands for: the `$objects` entry a UID names (`nil` for UID 0 and for
    /// `$null`), or `value` itself.
    ///
    /// - Throws: ``Failure`` for a UID past the end of `$objects`.
    func resolve(_ value: Value?) throws(Failure) -> Value? {
        guard let value else { return nil }
        guard case .uid(let index) = value else { return value == .string("$null") ? nil : value }
        guard index >= 0, index < objects.count else { throw Failure(reason: "a reference to object \(index) of its \(objects.count)") }
        if index == 0 { return nil }
        let object = objects[index]
        return object == .string("$null") ? nil : object
    }

    /// The archived object `value` names, as a dictionary of its members.
    func object(_ value: Value?) throws(Failure) -> [String: Value]? {
        guard case .dictionary(let members)? = try resolve(value) else { return nil }
        return members
    }

    /// The class names of an archived object, its own first (`$classes`, or `$classname`).
    func classes(of object: [String: Value]) throws(Failure) -> [String] {
        guard let record = try self.object(object["$class"]) else { return [] }
        if case .array(let names)? = record["$classes"] {
            return names.compactMap { if case .string(let name) = $0 { name } else { nil } }
        }
        if case .string(let name)? = record["$classname"] { return [name] }
        return []
    }

    /// The string `value` is or names.
    func string(_ value: Value?) throws(Failure) -> String? {
        switch try resolve(value) {
        case .string(let text)?: return text
        case .dictionary(let members)?:
            // NSMutableString and friends archive their text as NS.string.
            if case .string(let text)? = members["NS.string"] { return text }
            return nil
        default: return nil
        }
    }

    /// The elements of an archived `NSArray` or `NSSet` (`NS.objects`), or a plain array.
    func elements(_ value: Value?) throws(Failure) -> [Value] {
        switch try resolve(value) {
        case .array(let elements)?: return elements
        case .dictionary(let members)?:
            if case .array(let elements)? = members["NS.objects"] { return elements }
            return []
        default: return []
        }
    }

    // MARK: - Private

    /// Reads a document's objects into values, each container, string and data object once
    /// however often it is referenced, so shared objects cannot blow the values up.
    private struct Reader {
        let document: BPlistDocument
        /// The values read so far, by reference.
        var known: [Int: Value] = [:]

        /// Nesting deeper than this is refused: archives are flat, and a reference cycle is not.
        static let maximumDepth = 64

        mutating func value(_ reference: Int, depth: Int) throws -> Value {
            guard depth < Self.maximumDepth else { throw Failure(reason: "its property list nests deeper than \(Self.maximumDepth) levels") }
            if let value = known[reference] { return value }
            let object = try document.object(reference)
            switch object.kind {
            case .null: return .null
            case .true: return .bool(true)
            case .false: return .bool(false)
            case .integer:
                let (signed, unsigned) = try document.integer(object)
                return .integer(signed ?? Int64(bitPattern: unsigned ?? 0))
            case .real, .date: return .real(document.real(object))
            // Strings and data are kept once too: a string referenced a million times is one
            // string, not a million copies of its bytes.
            case .data:
                let value = Value.data(Data(document.span(object, byteCount: object.count)))
                known[reference] = value
                return value
            case .asciiString, .utf16String:
                let value = Value.string(try document.string(object))
                known[reference] = value
                return value
            case .uid:
                var index = 0
                for byte in document.span(object, byteCount: object.count) { index = index << 8 | Int(byte) }
                return .uid(index)
            case .array, .set:
                var elements: [Value] = []
                for index in 0..<object.count { elements.append(try value(document.reference(at: object.payload, index: index), depth: depth + 1)) }
                known[reference] = .array(elements)
                return .array(elements)
            case .dictionary:
                var members: [String: Value] = [:]
                for index in 0..<object.count {
                    guard case .string(let key) = try value(document.reference(at: object.payload, index: index), depth: depth + 1) else {
                        throw Failure(reason: "a dictionary of its property list has a key that is no string")
                    }
                    members[key] = try value(document.reference(at: object.payload, index: object.count + index), depth: depth + 1)
                }
                known[reference] = .dictionary(members)
                return .dictionary(members)
            }
        }
    }
}
