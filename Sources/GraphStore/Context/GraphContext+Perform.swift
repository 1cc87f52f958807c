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
        // The block (and what it holds: for `performBackgroundTask`, the context, and so the
        // store) is let go before the caller resumes: otherwise the queue's thread may still
        // hold it while the caller releases its container and opens the store again, which a
        // store not yet closing refuses as locked.
        let held = PerformedBlock(block), me = ObjectIdentifier(self)
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: held.run(holding: me))
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
    /// - Complexity: O(1) plus the queue hop, and O(d) for d blocks of contexts nested on the
    ///   calling thread.
    public func performAndWait<T, Failure: Error>(_ block: () throws(Failure) -> T) throws(Failure) -> T {
        let me = ObjectIdentifier(self)
        if DispatchQueue.getSpecific(key: Self.queueKey) == me || HeldQueues.isHeld(me) {
            return try block()
        }
        let result: Result<T, Failure> = queue.sync {
            HeldQueues.holding(me) { Result { () throws(Failure) -> T in try block() } }
        }
        return try result.get()
    }
}

/// The contexts whose serial queue the calling thread holds, running one of their blocks: a
/// block nested in another context's `performAndWait` is no longer on the outer queue as far as
/// `DispatchQueue.getSpecific` can tell, but the outer block still holds it.
enum HeldQueues {
    /// The key of each thread's list, made once.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { list in
            if let list { Unmanaged<Box>.fromOpaque(list).release() }
        }
        precondition(status == 0, "GraphStore: pthread_key_create failed (\(status))")
        return key
    }()

    /// One thread's list; only that thread reads or writes it.
    private final class Box {
        var held: [ObjectIdentifier] = []
    }

    private static var current: Box {
        if let list = pthread_getspecific(key) { return Unmanaged<Box>.fromOpaque(list).takeUnretainedValue() }
        let box = Box()
        pthread_setspecific(key, Unmanaged.passRetained(box).toOpaque())
        return box
    }

    /// Whether the calling thread runs a block of the context `id` (further out).
    static func isHeld(_ id: ObjectIdentifier) -> Bool {
        guard let list = pthread_getspecific(key) else { return false }
        return Unmanaged<Box>.fromOpaque(list).takeUnretainedValue().held.contains(id)
    }

    /// Runs `body` with the context `id` marked as held by the calling thread.
    static func holding<T>(_ id: ObjectIdentifier, _ body: () -> T) -> T {
        let box = current
        box.held.append(id)
        defer { box.held.removeLast() }
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

    /// Runs the block, marked as holding the context `id`'s queue, and lets it go.
    func run(holding id: ObjectIdentifier) -> Result<T, Failure> {
        guard let block else { preconditionFailure("GraphStore: a perform block ran twice") }
        self.block = nil
        return HeldQueues.holding(id) { Result { () throws(Failure) -> T in try block() } }
    }
}
