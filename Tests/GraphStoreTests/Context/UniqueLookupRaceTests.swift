import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// `model(_:unique:_:)` finds the holder in one version's unique index and reads the object
/// from the newest table: a commit in between that renames or deletes the holder must not make
/// it return an object that does not hold the value (find-or-create would then use the wrong
/// tag, or make a duplicate).
@Suite struct UniqueLookupRaceTests {
    struct Tag: Entity {
        var id: Int
        var name: String
        static var uniqueConstraints: [UniqueConstraint<Tag>] { [UniqueConstraint(\.name)] }
    }

    @Test func theObjectFoundHoldsTheValue() throws {
        let container = try GraphContainer(for: [Tag.self], store: .inMemory)
        container.mainContext.insert(Tag(id: 1, name: "swift"))
        try container.mainContext.save()
        let stop = Guarded(false)
        let renames = Guarded(0)
        let finished = DispatchSemaphore(value: 0)
        // Renames the holder away and back, as fast as it can commit: on a thread of its own,
        // which the tests filling the task pool cannot starve.
        let writer = Thread {
            let context = container.newBackgroundContext()
            context.mergePolicy = .contextWins
            var renamed = false
            while !stop.withLock({ $0 }) {
                renamed.toggle()
                context.insert(Tag(id: 1, name: renamed ? "swift-renamed" : "swift"))
                if (try? context.save()) != nil { renames.withLock { $0 += 1 } }
            }
            finished.signal()
        }
        writer.start()
        let reader = container.newBackgroundContext()
        var wrong: [String] = []
        var lookups = 0
        // Until the writer has committed enough renames for the race to have had its chances.
        while renames.withLock({ $0 }) < 5_000, lookups < 500_000 {
            lookups += 1
            if let tag = reader.model(Tag.self, unique: \.name, "swift"), tag.name != "swift" {
                wrong.append(tag.name)
                if wrong.count >= 3 { break }
            }
        }
        stop.withLock { $0 = true }
        finished.wait()
        #expect(renames.withLock { $0 } > 0)
        #expect(wrong.isEmpty, "model(unique: \"swift\") returned tags named \(wrong)")
    }
}
