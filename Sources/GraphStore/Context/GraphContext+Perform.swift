import Foundation
import Synchronization

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
        // The block (and what it holds: for `performBackgroundTask`, the context, and so the
        // store) is let go before the caller resumes: otherwise the queue's thread may still
        // hold it while the caller releases its container and opens the store again, which a
        // store not yet closing refuses as locked.
        let held = PerformedBlock(block), holder = queueHolder
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: held.run(holding: holder))
            }
        }
        return try result.get()
    }

    /// Runs `block` on this context's serial queue and waits for it; runs it in place when
    /// called from a block of this context's that the calling thread is running (reentrant),
    /// also through other contexts' blocks: `a.performAndWait { b.performAndWait {
    /// a.performAndWait { … } } }` runs the innermost block in place, as Core Data does, where
    /// waiting for `a`'s queue, which the outer block holds, would never return.
    ///
    /// - Throws: whatever `block` throws.
    /// - Complexity: O(1) plus the queue hop.
    public func performAndWait<T, Failure: Error>(_ block: () throws(Failure) -> T) throws(Failure) -> T {
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) || queueHolder.isCallingThread {
            return try block()
        }
        let result: Result<T, Failure> = queue.sync {
            queueHolder.holding { Result { () throws(Failure) -> T in try block() } }
        }
        return try result.get()
    }
}

/// Which thread runs a block of one context's serial queue, if one does: a block nested in
/// another context's `performAndWait` is no longer on the outer queue as far as
/// `DispatchQueue.getSpecific` can tell, but the outer block still holds it. Kept by the
/// context (not per thread), so that nothing is left to free when a thread ends.
final class QueueHolder: Sendable {
    /// The holding thread's number, 0 for none. Written only by the thread that runs the
    /// queue's block, which the serial queue makes one at a time; another thread reading it
    /// never sees its own number there, whatever order it sees the writes in.
    private let thread = Atomic<UInt>(0)

    /// The calling thread, as a number no other running thread has (a thread that ended may
    /// have had it: the holder is cleared before the block returns).
    private static var callingThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    /// Whether the calling thread runs a block of this queue (further out).
    var isCallingThread: Bool { thread.load(ordering: .relaxed) == Self.callingThread }

    /// Runs `body`, a block of this queue, marked as held by the calling thread.
    func holding<T>(_ body: () -> T) -> T {
        let outer = thread.exchange(Self.callingThread, ordering: .relaxed)
        defer { thread.store(outer, ordering: .relaxed) }
        return body()
    }
}

/// A block `perform` runs once on its context's queue and lets go of before it returns the
/// result.
///
/// `@unchecked Sendable`: `block` is written once, in ``run()``, on the context's serial queue,
/// after `init` on the submitting thread; the queue's `async` orders the two.
private final class PerformedBlock<T: Sendable, Failure: Error>: @unchecked Sendable {
    private var block: (@Sendable () throws(Failure) -> T)?

    init(_ block: @escaping @Sendable () throws(Failure) -> T) {
        self.block = block
    }

    /// Runs the block, marked as holding the context's queue, and lets it go.
    func run(holding holder: QueueHolder) -> Result<T, Failure> {
        guard let block else { preconditionFailure("GraphStore: a perform block ran twice") }
        self.block = nil
        return holder.holding { Result { () throws(Failure) -> T in try block() } }
    }
}
