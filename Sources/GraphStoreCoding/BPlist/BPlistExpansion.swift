import Synchronization

/// How many bytes the values read from one binary property list may take, on every thread that
/// reads them together.
///
/// A property list shares objects by reference: an array may hold the same 1 MiB string a
/// million times, or the same array of a million strings a thousand times, in a few kilobytes
/// of file. Reading it would expand the few kilobytes to a terabyte (a reference bomb). Readers
/// count what they make, roughly as the memory it takes: 16 bytes per element of an array or a
/// dictionary (a value's slot), and the bytes of each string longer than 15 UTF-8 bytes (a UTF-16
/// one, three per character: its largest UTF-8 size) and of each data object, dictionary keys
/// included. Shorter strings live inside their slot. Past ``limit`` a reader fails.
///
/// Each thread counts in its own ``BPlistSpending`` and adds its count to the shared total every
/// 64 KiB, so the total passes the limit by at most that much per thread before a reader sees it.
package final class BPlistExpansion: Sendable {
    /// The most bytes the values may take.
    package let limit: Int
    private let spent = Atomic<Int>(0)

    package init(limit: Int) {
        self.limit = limit
    }

    /// A budget for a document of `documentBytes` bytes under a store's limit on decompressed
    /// bytes: that limit, or 32 times the document if that is more. A file expands in memory
    /// beyond its own size without any sharing (a two-byte reference becomes a 16-byte slot), so
    /// a limit set to a file's own size still reads it; sharing is what the budget stops.
    package static func budget(limit: Int, documentBytes: Int) -> Int {
        documentBytes > Int.max / 32 ? Int.max : max(limit, 32 * documentBytes)
    }

    /// Whether the values read so far have passed the limit: a decoding that ends, with a
    /// result or with an error a decoded type's `init(from:)` made of the reader's, after the
    /// budget ran out is refused for the limit.
    package var isExhausted: Bool { spent.load(ordering: .relaxed) > limit }

    /// Adds `bytes` to the total; `false` once it passes the limit.
    fileprivate func add(_ bytes: Int) -> Bool {
        spent.add(bytes, ordering: .relaxed).newValue <= limit
    }
}

/// One thread's count of what it reads, for a ``BPlistExpansion``. Not thread-safe: each
/// decoding thread has its own, shared by the decoders of that thread.
package final class BPlistSpending {
    package let expansion: BPlistExpansion
    private var unreported = 0
    private var exceeded = false

    package init(_ expansion: BPlistExpansion) {
        self.expansion = expansion
    }

    /// Counts `bytes`; `false` once the shared total has passed the limit.
    @inline(__always) package func spend(_ bytes: Int) -> Bool {
        unreported &+= bytes
        guard unreported >= 1 << 16 || exceeded else { return true }
        return report()
    }

    /// Counts an array or dictionary of `count` elements.
    @inline(__always) package func spend(elements count: Int) -> Bool {
        spend(count &* 16)
    }

    /// Counts a string or data object read into a value.
    @inline(__always) package func spend(_ object: BPlistObject) -> Bool {
        let bytes = object.kind == .utf16String ? 3 &* object.count : object.count
        return object.kind == .data || bytes > 15 ? spend(bytes) : true
    }

    /// Counts the string or data `object` read into a value, or (`elements`) the elements of the
    /// array or dictionary `object`.
    ///
    /// - Throws: ``BPlistExpansionExceeded`` at `object` once the shared total has passed the limit.
    @inline(__always) package func spend(_ object: BPlistObject, elements: Bool) throws(BPlistExpansionExceeded) {
        guard elements ? spend(elements: object.count) : spend(object) else {
            throw BPlistExpansionExceeded(limit: expansion.limit, offset: object.payload - 1)
        }
    }

    private func report() -> Bool {
        let bytes = unreported
        unreported = 0
        if !expansion.add(bytes) { exceeded = true }
        return !exceeded
    }
}

/// The error of a property list whose values expand past the limit of ``BPlistExpansion``:
/// the underlying error of the `dataCorrupted` error a decoder throws, so that a caller can tell
/// it from a damaged file.
package struct BPlistExpansionExceeded: Error, Sendable, CustomStringConvertible {
    /// The limit, in bytes.
    package let limit: Int
    /// The byte offset of the object whose value went past it.
    package let offset: Int

    package init(limit: Int, offset: Int) {
        self.limit = limit
        self.offset = offset
    }

    package var description: String {
        "the property list's shared values expand to more than \(limit) bytes (at the object at byte \(offset)): a reference bomb, or a store larger than the limit"
    }
}
