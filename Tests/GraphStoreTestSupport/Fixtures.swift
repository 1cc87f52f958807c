import ExampleModel
import Foundation
import GraphStore

/// Shared fixtures for GraphStore's tests.
public enum Fixtures {
    /// A fixed reference date, so tests never depend on the clock.
    public static let epoch = Date(timeIntervalSinceReferenceDate: 800_000_000)

    public static let tagNames = ["swift", "ios", "linux", "databases", "concurrency"]

    /// `count` posts with increasing ids and dates, tagged with the given tag ids in turn.
    public static func posts(_ count: Int, startingAt first: Int64 = 1, tags: [Tag.ID] = []) -> [Post] {
        (0..<Int64(count)).map { offset in
            let id = first + offset
            return Post(
                id: id, blogName: "blog\(id % 7)", kind: Post.Kind.allCases[Int(id) % Post.Kind.allCases.count],
                date: epoch.addingTimeInterval(Double(id) * 60), summary: "Post number \(id)",
                body: id % 3 == 0 ? nil : "Body of post \(id) — ünïcödé ✓", noteCount: Int(id % 100),
                tagIDs: tags.isEmpty ? [] : [tags[Int(id) % tags.count]])
        }
    }

    /// `count` posts as ``posts(_:startingAt:tags:)`` makes them, each tagged with what
    /// `tagIDs` gives for its id.
    public static func posts(_ count: Int, tagIDs: (Int64) -> [Tag.ID]) -> [Post] {
        posts(count).map { post in
            var post = post
            post.tagIDs = tagIDs(post.id)
            return post
        }
    }

    /// A new in-memory container for the example model.
    public static func inMemoryContainer() throws -> GraphContainer {
        try GraphContainer(for: exampleModel, store: .inMemory)
    }
}

/// The bound on a concurrency test that must not deadlock, in seconds.
///
/// Generous on purpose: `swift test` starts nearly every test at once, so on a two-core machine
/// a test that takes a fraction of a second alone shares the processors with the whole suite
/// and can take tens of seconds of wall time. Only a real deadlock reaches this bound.
public let deadlockBound: Double = 300

/// Runs `body`, failing with ``TimeoutError`` if it has not finished after `seconds`: a bound
/// for tests that must not deadlock.
///
/// The body and the timer race as two tasks; whichever finishes first resumes the caller, so a
/// body that is stuck (in a lock, or ignoring cancellation) still ends the test with an error
/// instead of hanging it. The timer is only a bound, never part of what a test asserts.
public func withTimeout<T: Sendable>(
    seconds: Double, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = Guarded<CheckedContinuation<T, any Error>?>(nil)
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        outcome.withLock { $0 = continuation }
        /// Resumes the caller once; later outcomes are ignored.
        @Sendable func finish(_ result: Result<T, any Error>) -> Bool {
            guard let continuation = outcome.withLock({ state -> CheckedContinuation<T, any Error>? in
                defer { state = nil }
                return state
            }) else { return false }
            continuation.resume(with: result)
            return true
        }
        let work = Task {
            do { _ = finish(.success(try await body())) } catch { _ = finish(.failure(error)) }
        }
        let timer = Task {
            try await Task.sleep(for: .seconds(seconds))
            if finish(.failure(TimeoutError(seconds: seconds))) { work.cancel() }
        }
        Task {
            _ = await work.result
            timer.cancel()
        }
    }
}

public struct TimeoutError: Error, CustomStringConvertible {
    public let seconds: Double
    public var description: String { "did not finish within \(seconds) s (deadlock?)" }
}
