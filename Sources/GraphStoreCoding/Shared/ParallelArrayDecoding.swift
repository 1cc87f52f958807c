import Dispatch
import Foundation
import Synchronization

/// The second half of a large array, decoded on another thread while the caller decodes the
/// first half through its unkeyed container.
///
/// Results are handed over in order, one per `decode(_:)` of the same type at the next index.
/// Anything else at or past the half (another type, `decodeNil()`, a nested container, an
/// element the worker could not decode) drops the rest and the container goes on decoding
/// itself from there, so the outcome, errors included, is that of decoding in order. Only
/// used when the caller opts in (the `parallel:` argument of ``FastJSONDecoder`` and
/// ``BPlistDecoder``): the elements' `init(from:)` run on two threads at once.
///
/// Shared by both decoders; each supplies a ``SpeculativeArrayWorker`` that walks its own
/// document.
final class ArraySpeculation: @unchecked Sendable {
    // @unchecked Sendable: the worker thread writes `produced`, `worker`, `body` and the
    // results only before it signals the `finished` semaphore, and the caller reads them only
    // after waiting on it (the semaphore orders the two); `body` is set before the thread
    // starts. `cancelled` is atomic. The caller's side (`joined`, `consumed`) is the caller's
    // thread's alone.
    /// Arrays with fewer elements are decoded on one thread.
    static let minimumElements = 2_048

    let elementType: ObjectIdentifier
    /// The first element index the worker decodes.
    let start: Int
    private let results: UnsafeMutableRawPointer
    private let stride: Int
    private let destroy: (UnsafeMutableRawPointer, Int) -> Void
    private let cancelled = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    // Written by the worker before it signals `finished`; read by the caller after waiting.
    private var produced = 0
    private var worker: (any SpeculativeArrayWorker)?
    // The caller's side.
    private var joined = false
    private var consumed = 0

    private init<T>(_ type: T.Type, start: Int, count: Int, worker: any SpeculativeArrayWorker) {
        elementType = ObjectIdentifier(T.self)
        self.start = start
        stride = MemoryLayout<T>.stride
        results = UnsafeMutableRawPointer(UnsafeMutablePointer<T>.allocate(capacity: max(count, 1)))
        destroy = { pointer, count in pointer.assumingMemoryBound(to: T.self).deinitialize(count: count) }
        self.worker = worker
    }

    deinit {
        cancel()
        destroy(results + consumed * stride, produced - consumed)
        results.deallocate()
    }

    /// Starts decoding elements `start..<total` as `T` through `worker`, which is released
    /// before the speculation reports that it is done.
    static func start<T: Decodable>(_ type: T.Type, worker: any SpeculativeArrayWorker, start: Int, total: Int) -> ArraySpeculation {
        let speculation = ArraySpeculation(T.self, start: start, count: total - start, worker: worker)
        speculation.body = { [unowned speculation] in speculation.run(T.self, total: total) }
        // A thread of its own rather than a queue: the caller blocks until it is done, which
        // must never wait on a pool the caller's own thread may be part of.
        let thread = Thread { speculation.runBody() }
        thread.qualityOfService = .userInitiated
        thread.stackSize = Processors.decodingThreadStackSize
        thread.start()
        return speculation
    }

    /// The worker's job, typed; set before the worker starts, cleared by it.
    private var body: (() -> Void)?

    private func runBody() {
        let body = self.body
        self.body = nil
        body?()
    }

    private func run<T: Decodable>(_ type: T.Type, total: Int) {
        defer {
            worker = nil
            finished.signal()
        }
        guard let worker else { return }
        let output = results.assumingMemoryBound(to: T.self)
        for index in start..<total {
            if cancelled.load(ordering: .relaxed) { return }
            // An error is left for the caller to meet again when it decodes this element.
            guard let value = worker.decodeElement(T.self, index: index) else { return }
            (output + (index - start)).initialize(to: value)
            produced += 1
        }
    }

    /// Waits for the worker.
    private func join() {
        guard !joined else { return }
        finished.wait()
        joined = true
    }

    /// Stops the worker (after the element it is decoding) and waits for it.
    func cancel() {
        guard !joined else { return }
        cancelled.store(true, ordering: .relaxed)
        join()
    }

    /// Whether the result for element `index` (the next one) is ready to take, waiting for
    /// the worker if needed.
    func hasResult(at index: Int) -> Bool {
        join()
        return index - start == consumed && consumed < produced
    }

    /// The next result; only after ``hasResult(at:)`` said yes.
    func take<T>(_ type: T.Type) -> T {
        let result = (results + consumed * stride).assumingMemoryBound(to: T.self).move()
        consumed += 1
        return result
    }
}

/// Decodes the elements of one array in order, for a ``ArraySpeculation`` on another thread.
protocol SpeculativeArrayWorker: AnyObject {
    /// Element `index` (one more than the previous call's) as `T`, or `nil` if it cannot be
    /// decoded (the caller then meets the error itself).
    func decodeElement<T: Decodable>(_ type: T.Type, index: Int) -> T?
}
