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
    try inJobs(parts, inParallel: true) { part in
        let range = count * part / parts..<count * (part + 1) / parts
        return Result { () throws(E) -> T in try body(part, range) }
    }.map { result throws(E) -> T in try result.get() }
}

/// Runs `body` for each job `0..<count`, on every processor when `inParallel` (and in order on
/// the calling thread otherwise), and returns the results in job order.
///
/// Results are handed back under a lock, and the caller holds the only reference to them.
///
/// - Complexity: the jobs' work, on up to `count` threads.
func inJobs<T: Sendable>(_ count: Int, inParallel: Bool, _ body: @Sendable (_ job: Int) -> T) -> [T] {
    guard inParallel && count > 1 else { return (0..<count).map(body) }
    let results = Guarded<[T?]>(Array(repeating: nil, count: count))
    DispatchQueue.concurrentPerform(iterations: count) { job in
        let result = body(job)
        results.withLock { $0[job] = result }
    }
    return results.withLock { results in
        defer { results = [] }
        return results.map { $0! }
    }
}
