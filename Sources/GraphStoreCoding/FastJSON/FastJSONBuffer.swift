import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable byte buffer that ``FastJSONEncoder`` appends JSON to; a value type (copies
/// share the bytes until one of them is changed).
///
/// Reuse one buffer for many small encodings to skip the allocation each would make:
///
/// ```swift
/// var buffer = FastJSONBuffer()
/// for object in objects {
///     buffer.removeAll()
///     try FastJSONEncoder.encode(object, into: &buffer)
///     try buffer.withUnsafeBytes { try journal.append($0) }
/// }
/// ```
package struct FastJSONBuffer {
    // MARK: - Storage

    /// Owns the block.
    final class Storage {
        var output: FastJSONOutput

        init(capacity: Int) {
            let base = capacity > 0 ? malloc(capacity)?.assumingMemoryBound(to: UInt8.self) : nil
            if capacity > 0 && base == nil { fatalError("GraphStore: out of memory allocating a JSON buffer of \(capacity) bytes") }
            output = FastJSONOutput(base: base, count: 0, capacity: base == nil ? 0 : capacity)
        }

        deinit { free(output.base) }

        func copy() -> Storage {
            let copy = Storage(capacity: output.count)
            if let base = output.base { copy.output.append(UnsafeRawBufferPointer(start: base, count: output.count)) }
            return copy
        }
    }

    private var storage: Storage

    // MARK: - Lifecycle

    /// An empty buffer with room for `capacity` bytes.
    ///
    /// - Complexity: O(1).
    package init(capacity: Int = 0) {
        storage = Storage(capacity: capacity)
    }

    // MARK: - Reading

    /// The number of bytes written.
    package var count: Int { storage.output.count }

    package var isEmpty: Bool { count == 0 }

    /// Calls `body` with the bytes written, valid only during the call.
    ///
    /// - Complexity: O(1) plus `body`.
    package func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try withExtendedLifetime(storage) { () throws(E) -> R in
            try body(UnsafeRawBufferPointer(start: storage.output.base, count: storage.output.count))
        }
    }

    /// Calls `body` with the bytes written, to change them in place (say, a length field
    /// written before the bytes it counts); valid only during the call.
    ///
    /// - Complexity: O(1) plus `body` (O(count) when the block is shared and copied first).
    package mutating func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        makeUnique()
        return try withExtendedLifetime(storage) { () throws(E) -> R in
            try body(UnsafeMutableRawBufferPointer(start: storage.output.base, count: storage.output.count))
        }
    }

    /// A copy of the bytes written.
    ///
    /// - Complexity: O(count).
    package var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// A copy of the bytes written.
    ///
    /// - Complexity: O(count).
    package var data: Data { withUnsafeBytes { Data($0) } }

    /// The bytes written as `Data`, handing the block over without copying when this buffer is
    /// its only owner; the buffer is left empty.
    ///
    /// - Complexity: O(1) when uniquely owned (a large unused tail is given back to the
    ///   allocator first, which may copy), O(count) otherwise.
    package mutating func takeData() -> Data {
        guard isKnownUniquelyReferenced(&storage), let base = storage.output.base, storage.output.count > 0 else {
            defer { self = FastJSONBuffer() }
            return data
        }
        let count = storage.output.count
        var block = UnsafeMutableRawPointer(base)
        if storage.output.capacity - count > 64 * 1024, let shrunk = realloc(block, count) { block = shrunk }
        storage.output = FastJSONOutput(base: nil, count: 0, capacity: 0)
        return Data(bytesNoCopy: block, count: count, deallocator: .free)
    }

    // MARK: - Writing

    /// Appends one byte, such as a separator between two encoded values.
    ///
    /// - Complexity: O(1) amortised.
    package mutating func append(_ byte: UInt8) {
        makeUnique()
        storage.output.append(byte)
    }

    /// Appends raw bytes.
    ///
    /// - Complexity: O(`bytes.count`) amortised.
    package mutating func append(contentsOf bytes: UnsafeRawBufferPointer) {
        makeUnique()
        storage.output.append(bytes)
    }

    /// Appends ASCII text known at compile time.
    ///
    /// - Complexity: O(length of `text`) amortised.
    package mutating func append(contentsOf text: StaticString) {
        append(contentsOf: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `text` as a JSON string: quoted, escaped as `JSONEncoder` escapes it.
    ///
    /// - Complexity: O(length of `text`) amortised.
    package mutating func appendString(_ text: String) {
        withOutput { $0.appendString(text) }
    }

    /// Appends the bytes of `data`.
    ///
    /// - Complexity: O(`data.count`) amortised.
    package mutating func append(contentsOf data: Data) {
        data.withUnsafeBytes { append(contentsOf: $0) }
    }

    /// Appends the bytes of another buffer.
    ///
    /// - Complexity: O(`other.count`) amortised.
    package mutating func append(contentsOf other: FastJSONBuffer) {
        other.withUnsafeBytes { append(contentsOf: $0) }
    }

    /// Makes room for `capacity` bytes in all, without changing the contents.
    ///
    /// - Complexity: O(count) when the block moves.
    package mutating func reserveCapacity(_ capacity: Int) {
        makeUnique()
        _ = storage.output.reserve(capacity - storage.output.count)
    }

    /// Empties the buffer, keeping its block for the next bytes unless told otherwise.
    ///
    /// - Complexity: O(1).
    package mutating func removeAll(keepingCapacity: Bool = true) {
        guard keepingCapacity && isKnownUniquelyReferenced(&storage) else {
            self = FastJSONBuffer()
            return
        }
        storage.output.count = 0
    }

    /// Drops everything after the first `count` bytes.
    ///
    /// - Precondition: `0 <= count <= self.count`.
    mutating func truncate(to count: Int) {
        precondition(count >= 0 && count <= self.count, "truncating a JSON buffer beyond its bytes")
        makeUnique()
        storage.output.count = count
    }

    // MARK: - Encoding

    /// Lends the block to `body` for an encoding, then takes it back.
    mutating func withOutput<R>(_ body: (inout FastJSONOutput) throws -> R) rethrows -> R {
        makeUnique()
        return try body(&storage.output)
    }

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }
}
