import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// One store file, one container: a second one gets `storeLocked` instead of clobbering it.
@Suite struct SnapshotLockTests {
    @Test func secondContainerOnTheSameFileIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let first = try GraphContainer(for: exampleModel, store: .file(url))
        first.mainContext.insert(Note(text: "first", createdAt: Fixtures.epoch))
        try first.mainContext.save()
        try await first.flush()
        let journal = URL(fileURLWithPath: url.path + ".journal")
        let before = [try? Data(contentsOf: url), try? Data(contentsOf: journal)]
        #expect(before[1] != nil, "the save is journaled")

        // Also through another spelling of the same path, and in another format.
        let sameFile = directory.url.appendingPathComponent("sub/../store.json.gz")
        try FileManager.default.createDirectory(at: directory.file("sub"), withIntermediateDirectories: true)
        for store in [StoreConfiguration.file(url), .file(sameFile, format: .binaryPropertyList, compression: .none)] {
            #expect {
                _ = try GraphContainer(for: exampleModel, store: store)
            } throws: { error in
                guard case .storeLocked(let path) = error as? GraphStoreError else { return false }
                return path == url.path && "\(error)".contains(url.path)
            }
        }
        #expect([try? Data(contentsOf: url), try? Data(contentsOf: journal)] == before)

        // The first container is unharmed and still writes.
        first.mainContext.insert(Note(text: "still mine", createdAt: Fixtures.epoch))
        try first.mainContext.save()
        try await first.flush()
        try await first.close()

        // After close, a new container opens and sees everything.
        let second = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(Set(try SnapshotTestKit.fetchAll(Note.self, from: second).map(\.text)) == ["first", "still mine"])
        try await second.close()
    }

    @Test func aRefusedOpenLeavesTheLockToItsHolder() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let holder = try GraphContainer(for: exampleModel, store: .file(url))
        for _ in 0..<3 {
            #expect(throws: GraphStoreError.storeLocked(path: url.path)) {
                _ = try GraphContainer(for: exampleModel, store: .file(url))
            }
        }
        try await holder.close()
        let next = try GraphContainer(for: exampleModel, store: .file(url))
        try await next.close()
    }

    @Test func aFailedOpenReleasesTheLock() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        try Data("not a snapshot".utf8).write(to: url)
        #expect(throws: GraphStoreError.self) {
            _ = try GraphContainer(for: exampleModel, store: .file(url))
        }
        try FileManager.default.removeItem(at: url)
        // The refused open did not keep the lock.
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        try await container.close()
    }

    @Test func anotherProcessHoldingTheStoreIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let helper = try CrashHelperProcess(store: url, format: "json", compression: "gzip", start: 0)
        // When the test ends early, the helper's deinit kills it.
        let acked = try await helper.waitForAcks(1)
        #expect(acked != nil, "the helper never acknowledged a save: \(helper.standardError())")
        #expect(throws: GraphStoreError.storeLocked(path: url.path)) {
            _ = try GraphContainer(for: exampleModel, store: .file(url))
        }
        try await helper.kill()
        // The kernel releases the lock with the process.
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(container.count(of: Note.self) >= acked ?? 1)
        try await container.close()
    }
}
