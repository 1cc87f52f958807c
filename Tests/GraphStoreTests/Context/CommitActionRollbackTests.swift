import Foundation
import GraphStore
import GraphStoreTestSupport
import Synchronization
import Testing

/// An entity whose encoding can be held up once, from the saving thread: the save is then
/// inside its commit (it encodes the journal record there), after it took the context's
/// changes and `onCommit` actions.
private struct Paused: Entity, Hashable {
    var id = UUID()
    var text: String

    /// Armed: the next encoding signals `inside` and waits for `go`.
    static let armed = Atomic<Bool>(false)
    static let inside = DispatchSemaphore(value: 0)
    static let go = DispatchSemaphore(value: 0)

    func encode(to encoder: any Encoder) throws {
        if Self.armed.exchange(false, ordering: .sequentiallyConsistent) {
            Self.inside.signal()
            Self.go.wait()
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(text, forKey: .text)
    }
}

@Suite(.serialized) struct CommitActionRollbackTests {
    /// A rollback while a save commits drops what the save took; an action registered after
    /// that rollback belongs to the next save and runs with it. (The save in flight removed as
    /// many actions as it had taken from what was there, so it dropped the new one.)
    @Test func anActionRegisteredAfterARollbackDuringASaveRunsWithTheNextSave() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let container = try GraphContainer(for: [Paused.self], store: .file(directory.file("store.json")))
        let context = container.newBackgroundContext()
        let runs = Guarded<[String]>([])
        context.insert(Paused(text: "first"))
        context.onCommit { runs.withLock { $0.append("first") } }
        Paused.armed.store(true, ordering: .sequentiallyConsistent)
        let saved = DispatchSemaphore(value: 0)
        let saving = Thread {
            do { try context.save() } catch { runs.withLock { $0.append("first save threw \(error)") } }
            saved.signal()
        }
        saving.start()
        try #require(Paused.inside.wait(timeout: .now() + 60) == .success, "the save did not encode")
        context.rollback()
        context.onCommit { runs.withLock { $0.append("second") } }
        Paused.go.signal()
        try #require(saved.wait(timeout: .now() + 60) == .success, "the save did not finish")

        #expect(runs.withLock { $0 } == ["first"])
        context.insert(Paused(text: "second"))
        try context.save()
        #expect(runs.withLock { $0 } == ["first", "second"])
    }
}
