import Foundation

/// Runs `body` on each of `parts` consecutive ranges that cut `0..<count`, each on its own
/// thread, and returns the results in range order: how the encoders split a large entity.
///
/// `body` gets the part's number and its range. Results are handed back under a lock.
///
/// - Throws: the error of the first part (in range order) whose `body` threw, so the first
///   failing element, as when running on one thread.
/// - Complexity: the parts' work, on up to `parts` threads.
func inConsecutiveParts<T: Sendable, E: Error>(
    count: Int, parts: Int, _ body: @Sendable (_ part: Int, _ range: Range<Int>) throws(E) -> T
) throws(E) -> [T] {
    let results = Guarded<[Result<T, E>?]>(Array(repeating: nil, count: parts))
    DispatchQueue.concurrentPerform(iterations: parts) { part in
        let range = count * part / parts..<count * (part + 1) / parts
        let result = Result { () throws(E) -> T in try body(part, range) }
        results.withLock { $0[part] = result }
    }
    return try results.withLock { $0 }.map { result throws(E) -> T in try result!.get() }
}
