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
