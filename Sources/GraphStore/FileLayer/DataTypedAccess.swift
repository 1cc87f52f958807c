import Foundation

// MARK: - Typed-throws byte access

extension Data {
    /// Calls `body` with the contiguous bytes of the data, preserving the
    /// closure's typed error (Foundation's `withUnsafeBytes` only rethrows
    /// `any Error`).
    ///
    /// - Throws: Whatever `body` throws, as `E`.
    /// - Complexity: O(1) plus the cost of `body`; `Data` is always contiguous.
    func withUnsafeBytesTyped<Result, E: Error>(
        _ body: (UnsafeRawBufferPointer) throws(E) -> Result
    ) throws(E) -> Result {
        let outcome: Swift.Result<Result, E> = withUnsafeBytes { bytes in
            Swift.Result { () throws(E) -> Result in try body(bytes) }
        }
        return try outcome.get()
    }
}

// MARK: - Joining

extension Data {
    /// The bytes of `pieces` one after another, in one buffer (the piece itself, without a
    /// copy, when there is only one).
    ///
    /// - Complexity: O(total bytes).
    init(concatenating pieces: [Data]) {
        guard pieces.count > 1 else {
            self = pieces.first ?? Data()
            return
        }
        self.init(capacity: pieces.reduce(0) { $0 + $1.count })
        for piece in pieces { append(piece) }
    }
}
