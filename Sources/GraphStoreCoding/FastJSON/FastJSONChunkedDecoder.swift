import Foundation

/// Parses a document in chunks (``FastJSONParser/parseChunked(_:member:tokensPerChunk:maxDepth:deliver:)``)
/// and decodes the chunks while the parse goes on, on worker threads and on the parsing
/// thread itself whenever the workers are behind. The chunks held at once are bounded (a few
/// per worker), so the memory of parsing stays that of the outline and a few small tapes
/// whatever the document's size.
package enum FastJSONChunkedDecoder {
    /// What ``decode(_:member:tokensPerChunk:workers:decodeChunk:)`` returns: the outline and,
    /// per chunk in document order, its array, first element index and result.
    package struct Output<R: Sendable> {
        package let outline: FastJSONChunkedOutline
        package let chunks: [(array: String, firstIndex: Int, result: R)]
    }

    /// Chunks of this many tokens (about 256 KiB of tape) keep a worker busy long enough to
    /// hide the hand-over, and are small beside any document worth chunking.
    package static let defaultTokensPerChunk = 16_384

    /// Threads decoding beside the parsing one: one less than the processors, at most 3.
    package static var defaultWorkers: Int { min(max(Processors.active - 1, 0), 3) }

    /// Parses `bytes` in chunks (see ``FastJSONParser/parseChunked(_:member:tokensPerChunk:maxDepth:deliver:)``)
    /// and calls `decodeChunk` once per chunk, on any of `workers` threads or on this one.
    /// Returns when every chunk is decoded and no worker reads `bytes` any more.
    ///
    /// - Throws: ``FastJSONSyntaxError`` for a document that is not JSON (after the chunks
    ///   met before the error are decoded).
    /// - Complexity: O(size of the document), plus the decoding.
    package static func decode<R: Sendable>(
        _ bytes: UnsafeBufferPointer<UInt8>, member: String, tokensPerChunk: Int = defaultTokensPerChunk, workers: Int = defaultWorkers,
        decodeChunk: @escaping @Sendable (FastJSONChunk) -> R
    ) throws(FastJSONSyntaxError) -> Output<R> {
        let pipeline = ChunkPipeline(workers: max(workers, 0), decodeChunk: decodeChunk)
        let outline: FastJSONChunkedOutline
        do {
            outline = try FastJSONParser.parseChunked(bytes, member: member, tokensPerChunk: tokensPerChunk) { pipeline.submit($0) }
        } catch {
            _ = pipeline.finish()
            throw error
        }
        return Output(outline: outline, chunks: pipeline.finish())
    }
}

/// The chunks waiting to be decoded, the workers that decode them, and their results.
///
/// Everything mutable is guarded by `condition`'s lock.
private final class ChunkPipeline<R: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private let decodeChunk: @Sendable (FastJSONChunk) -> R
    /// Chunks waiting beyond this many are decoded by the submitting thread itself.
    private let maxWaiting: Int
    private var waiting: [FastJSONChunk?] = []
    private var head = 0
    private var closed = false
    private var runningWorkers = 0
    private var results: [(sequence: Int, array: String, firstIndex: Int, result: R)] = []

    init(workers: Int, decodeChunk: @escaping @Sendable (FastJSONChunk) -> R) {
        self.decodeChunk = decodeChunk
        maxWaiting = 2 * workers
        runningWorkers = workers
        for _ in 0..<workers {
            // Threads of their own rather than a queue: the caller blocks until they are done,
            // which must never wait on a pool the caller's own thread may be part of.
            let thread = Thread { [self] in work() }
            thread.qualityOfService = .userInitiated
            // A main thread's stack: objects nest as deep as the parse allows (512 levels),
            // which a secondary thread's default (512 KiB on Apple systems) may not hold.
            thread.stackSize = Processors.decodingThreadStackSize
            thread.start()
        }
    }

    /// Queues `chunk` for a worker, or decodes it here when enough are waiting.
    func submit(_ chunk: FastJSONChunk) {
        condition.lock()
        if waiting.count - head < maxWaiting {
            waiting.append(chunk)
            condition.signal()
            condition.unlock()
            return
        }
        condition.unlock()
        run(chunk)
    }

    /// The next waiting chunk; call with the lock held.
    private func takeLocked() -> FastJSONChunk? {
        guard head < waiting.count else { return nil }
        let chunk = waiting[head]
        waiting[head] = nil
        head += 1
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        }
        return chunk
    }

    private func run(_ chunk: FastJSONChunk) {
        let result = decodeChunk(chunk)
        let entry = (chunk.sequence, chunk.array, chunk.firstIndex, result)
        condition.lock()
        results.append(entry)
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == waiting.count && !closed { condition.wait() }
            guard let chunk = takeLocked() else {
                runningWorkers -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.unlock()
            run(chunk)
        }
    }

    /// Decodes what is still waiting (with the workers), waits for the workers to end, and
    /// returns the results in chunk order.
    func finish() -> [(array: String, firstIndex: Int, result: R)] {
        condition.lock()
        closed = true
        condition.broadcast()
        while let chunk = takeLocked() {
            condition.unlock()
            run(chunk)
            condition.lock()
        }
        while runningWorkers > 0 { condition.wait() }
        let results = self.results.sorted { $0.sequence < $1.sequence }
        self.results = []
        condition.unlock()
        return results.map { ($0.array, $0.firstIndex, $0.result) }
    }
}
