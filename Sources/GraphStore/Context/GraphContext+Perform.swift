import Foundation

extension GraphContext {
    // MARK: - Serial work

    /// Runs `block` on this context's serial queue, off the caller's thread, and returns its result.
    ///
    /// Blocks passed to `perform` and `performAndWait` on one context run one at a time, in the
    /// order they were submitted, as in Core Data. A context is safe to use from any thread
    /// without them; they are for grouping work that must not interleave.
    ///
    /// - Throws: whatever `block` throws.
    public func perform<T: Sendable, Failure: Error>(
        _ block: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(Failure) -> T in try block() })
            }
        }
        return try result.get()
    }

    /// Runs `block` on this context's serial queue and waits for it; runs it in place when
    /// called from a block already on that queue (reentrant).
    ///
    /// - Throws: whatever `block` throws.
    public func performAndWait<T, Failure: Error>(_ block: () throws(Failure) -> T) throws(Failure) -> T {
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) {
            return try block()
        }
        let result: Result<T, Failure> = queue.sync { Result { () throws(Failure) -> T in try block() } }
        return try result.get()
    }
}
