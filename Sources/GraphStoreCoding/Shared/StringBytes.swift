extension String {
    /// Calls `body` with the string's UTF-8 bytes, valid only during the call: a native string's
    /// in place, with no copy of the string (a copy is a retain and a release of its storage,
    /// per string written); any other's made contiguous in a copy first.
    ///
    /// - Complexity: O(1) for a native string; O(n) to make another one contiguous.
    @inline(__always)
    func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var text = self
        return try text.withUTF8(body)
    }
}
