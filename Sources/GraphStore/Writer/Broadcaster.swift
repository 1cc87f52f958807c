import Foundation

/// The subscribers of a stream of events: each ``stream(bufferingPolicy:)`` is a new
/// `AsyncStream` that receives every element broadcast after it was made, until ``finish()``.
/// The one broadcaster GraphStore has: the change stream and the per-entity signals of a
/// container, and the ``StoreEvent`` streams of every store writer.
///
/// Call ``broadcast(_:)`` from one thread at a time (a writer's queue, or under the commit
/// lock) so that every stream sees the elements in the same order.
package final class Broadcaster<Element: Sendable>: Sendable {
    private struct Subscriber: Sendable {
        let deliver: @Sendable (Element) -> Void
        let finish: @Sendable () -> Void
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var next = 0
        var isFinished = false
    }

    private let state = Guarded(State())

    package init() {}

    /// A new stream of the elements broadcast from now on; already finished after ``finish()``.
    ///
    /// - Complexity: O(1).
    package func stream(bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded) -> AsyncStream<Element> {
        stream(of: Element.self, bufferingPolicy: bufferingPolicy) { $0 }
    }

    /// A new stream of `transform` of each element broadcast from now on, leaving out those it
    /// maps to `nil`; already finished after ``finish()``.
    ///
    /// - Complexity: O(1).
    package func stream<Output: Sendable>(
        of type: Output.Type, bufferingPolicy: AsyncStream<Output>.Continuation.BufferingPolicy,
        transform: @escaping @Sendable (Element) -> Output?
    ) -> AsyncStream<Output> {
        let (stream, continuation) = AsyncStream.makeStream(of: Output.self, bufferingPolicy: bufferingPolicy)
        let subscriber = Subscriber(
            deliver: { element in
                if let output = transform(element) { continuation.yield(output) }
            },
            finish: { continuation.finish() })
        let id: Int? = state.withLock { state in
            guard !state.isFinished else { return nil }
            defer { state.next += 1 }
            state.subscribers[state.next] = subscriber
            return state.next
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// How many streams are open: made and neither finished nor dropped by their reader.
    package var subscriberCount: Int {
        state.withLock { $0.subscribers.count }
    }

    /// Delivers `element` to every stream.
    ///
    /// - Complexity: O(subscribers).
    package func broadcast(_ element: Element) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.deliver(element) }
    }

    /// Ends every stream; later streams end at once.
    ///
    /// - Complexity: O(subscribers).
    package func finish() {
        let subscribers = state.withLock { state in
            state.isFinished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
