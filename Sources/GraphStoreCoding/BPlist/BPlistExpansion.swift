/// How many more bytes the values read from one binary property list may take.
///
/// A property list shares objects by reference: an array may hold the same 1 MiB string a
/// million times, or the same array of a thousand arrays a thousand times, in a few kilobytes of
/// file. Reading it would expand the few kilobytes to a terabyte (a reference bomb). Each reader
/// spends its budget as it makes values: a string or data its bytes (a UTF-16 string three per
/// character, its largest UTF-8 size), an array or dictionary one per element. The limit is the
/// one a file's decompressed size has, so a property list expands no further than a JSON file of
/// the same values may decompress to.
///
/// Not thread-safe: each decoding thread has its own (so two threads may read up to twice the
/// limit before one of them stops).
package final class BPlistExpansion {
    /// The limit the budget started from.
    package let limit: Int
    private var remaining: Int

    package init(limit: Int) {
        self.limit = limit
        remaining = limit
    }

    /// Spends `bytes`; `false` once the budget is exceeded.
    @inline(__always) package func spend(_ bytes: Int) -> Bool {
        remaining &-= bytes
        return remaining >= 0
    }

    /// The bytes a string or data object takes once read.
    @inline(__always) package static func bytes(of object: BPlistObject) -> Int {
        object.kind == .utf16String ? 3 &* object.count : object.count
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
