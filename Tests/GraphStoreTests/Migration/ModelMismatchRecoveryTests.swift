import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Recovery from a damaged snapshot (``SnapshotOptions/recoverFromPreviousSnapshot``) never
/// takes a model mismatch for damage: an older release of the app that cannot read what a newer
/// one saved (a new enum case) is refused, and the newer release's saves stay in the store.
@Suite struct ModelMismatchRecoveryTests {
    enum StatusV1: String, Codable, Sendable { case open, done }
    enum StatusV2: String, Codable, Sendable { case open, done, archived }

    struct TaskV1: Entity, Equatable {
        var id: Int
        var status: StatusV1
        static var entityName: String { "Task" }
    }

    /// A new enum case, without a new model version.
    struct TaskV2: Entity, Equatable {
        var id: Int
        var status: StatusV2
        static var entityName: String { "Task" }
    }

    @Test func anOlderAppIsRefusedNotRolledBack() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("tasks")
        let recovering = StoreConfiguration.file(url, options: SnapshotOptions(recoverFromPreviousSnapshot: true))

        // Two runs of the newer release: its last snapshot holds `.archived` and task 4, the
        // previous one neither.
        let newer = try GraphContainer(for: [TaskV2.self], store: recovering)
        for id in 1...3 { newer.mainContext.insert(TaskV2(id: id, status: .open)) }
        try newer.mainContext.save()
        try await newer.close()
        let again = try GraphContainer(for: [TaskV2.self], store: recovering)
        again.mainContext.insert(TaskV2(id: 1, status: .archived))
        again.mainContext.insert(TaskV2(id: 4, status: .done))
        try again.mainContext.save()
        try await again.close()
        let written = try Data(contentsOf: url)

        let error = #expect(throws: GraphStoreError.self) { _ = try GraphContainer(for: [TaskV1.self], store: recovering) }
        guard case .codingFailed(_, let entity, _, _)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(entity == "Task")
        #expect(try Data(contentsOf: url) == written, "the file was replaced")
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!entries.contains { $0.contains(".damaged-") })

        let newest = try GraphContainer(for: [TaskV2.self], store: .file(url))
        #expect(newest.mainContext.model(TaskV2.self, id: 4) != nil)
        #expect(newest.mainContext.model(TaskV2.self, id: 1)?.status == .archived)
        try await newest.close()
    }
}

/// A file the app's types refuse that does not read soundly without them either is damage:
/// recovery tries the previous snapshot, and when it cannot open one the error says so (it used
/// to be the bare coding error, as if recovery had not been asked for).
@Suite struct UnreadableGraphRecoveryTests {
    struct Task: Entity, Equatable {
        var id: Int
        var count: Int
        static var entityName: String { "Task" }
    }

    @Test(arguments: ["none", "damaged"]) func aRefusedGraphWithoutAUsablePreviousSaysRecoveryWasTried(previous: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("tasks.json")
        let store = StoreConfiguration.file(url, format: .json, compression: .none, options: SnapshotOptions(recoverFromPreviousSnapshot: true))
        let container = try GraphContainer(for: [Task.self], store: store)
        for id in 1...3 { container.mainContext.insert(Task(id: id, count: id)) }
        try container.mainContext.save()
        try await container.close()
        let previousURL = URL(fileURLWithPath: url.path + ".previous")
        if previous == "damaged" {
            try Data("{\"header\":".utf8).write(to: previousURL)
        } else {
            try? FileManager.default.removeItem(at: previousURL)
        }
        // A string where the type has a number (the types refuse it), and two objects with one
        // id (so it does not read soundly without them either).
        let text = try String(contentsOf: url, encoding: .utf8)
        let damaged = text.replacingOccurrences(of: "\"count\":1", with: "\"count\":\"x\"").replacingOccurrences(of: "\"id\":3", with: "\"id\":2")
        try #require(damaged != text)
        try damaged.write(to: url, atomically: true, encoding: .utf8)

        let error = #expect(throws: GraphStoreError.self) { _ = try GraphContainer(for: [Task.self], store: store) }
        guard case .codingFailed(let path, let entity, _, let reason)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(path == url.path && entity == "Task")
        #expect(reason.contains("Expected to decode Int"), "\(reason)")
        let why = previous == "none" ? "there is none" : "that snapshot cannot be read either"
        #expect(reason.contains("It was not recovered from the previous snapshot \(previousURL.path): \(why)"), "\(reason)")
        #expect(try String(contentsOf: url, encoding: .utf8) == damaged, "the file was changed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).allSatisfy { !$0.contains(".damaged-") })
    }
}
