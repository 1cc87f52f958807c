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

    /// A new in-memory container for the example model.
    public static func inMemoryContainer() throws -> GraphContainer {
        try GraphContainer(for: exampleModel, store: .inMemory)
    }
}

/// A fresh temporary directory, removed when the value is deinitialized... call `remove()`.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init(function: String = #function) throws {
        let name = "GraphStoreTests-\(function.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString)"
        url = FileManager.default.temporaryDirectory.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs `body`, failing with a timeout error if it has not finished after `seconds`: a bound
/// for tests that must not deadlock, enforced by a task group rather than a sleep in the test.
public func withTimeout<T: Sendable>(
    seconds: Double, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw TimeoutError(seconds: seconds)
        }
        group.cancelAll()
        return value
    }
}

public struct TimeoutError: Error, CustomStringConvertible {
    public let seconds: Double
    public var description: String { "did not finish within \(seconds) s (deadlock?)" }
}
