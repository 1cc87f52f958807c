import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// `delete(model:)` on one thread while the same context saves on another: whichever comes
/// first, once both are done and the context saves again, every object it had inserted is gone,
/// and no save conflicts with the context's own.
@Suite struct DeleteAllRacingSaveTests {
    @Test func deletingEveryObjectWhileTheSameContextSavesLeavesNone() throws {
        let container = try GraphContainer(for: exampleModel, store: .inMemory)
        let context = container.newBackgroundContext()
        for round in 0..<300 {
            for index in 0..<20 {
                context.insert(Note(text: "\(round).\(index)", createdAt: Fixtures.epoch))
            }
            let failures = Guarded<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                do {
                    if side == 0 { try context.save() } else { try context.delete(model: Note.self) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            try context.save()
            #expect(failures.withLock { $0 } == [], "round \(round)")
            let left = container.count(of: Note.self)
            #expect(left == 0, "round \(round): \(left) notes survived the deletion")
            if left != 0 { break }
        }
        try container.checkInvariants()
    }
}
