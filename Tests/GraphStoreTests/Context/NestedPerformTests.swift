import ExampleModel
import Foundation
import GraphStore
import Synchronization
import Testing

/// `performAndWait` nested through another context's block runs in place on a context whose
/// block the thread is already running.
///
/// Before, `a.performAndWait { b.performAndWait { a.performAndWait { … } } }` waited for `a`'s
/// queue, which the outermost block held: the thread never returned. Core Data runs such a
/// block in place.
@Suite struct NestedPerformTests {
    /// Runs `body` on a thread of its own and waits for it, at most `limit`: a deadlock fails
    /// the test instead of hanging the suite (the stuck thread is left behind).
    static func finishes(within limit: DispatchTimeInterval = .seconds(60), _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done.wait(timeout: .now() + limit) == .success
    }

    @Test func performAndWaitThroughAnotherContextRunsInPlace() throws {
        let container = try GraphContainer(for: [Post.self, Note.self, Tag.self], store: .inMemory)
        let a = container.newBackgroundContext(), b = container.newBackgroundContext()
        let order = Mutex<[String]>([])
        let finished = Self.finishes {
            a.performAndWait {
                order.withLock { $0.append("a") }
                b.performAndWait {
                    order.withLock { $0.append("b") }
                    a.performAndWait {
                        order.withLock { $0.append("a again") }
                        a.insert(Tag(name: "nested"))
                    }
                }
            }
        }
        #expect(finished)
        guard finished else { return }
        #expect(order.withLock { $0 } == ["a", "b", "a again"])
        try a.save()
        #expect(container.count(of: Tag.self) == 1)
    }

    @Test func performThroughAnotherContextRunsInPlace() async throws {
        let container = try GraphContainer(for: [Post.self, Note.self, Tag.self], store: .inMemory)
        let a = container.newBackgroundContext(), b = container.newBackgroundContext()
        let depth = await a.perform { () -> Int in
            b.performAndWait {
                a.performAndWait { b.performAndWait { 3 } }
            }
        }
        #expect(depth == 3)
    }

    /// Another thread's block of the same context still waits its turn: only the thread that
    /// runs a context's block runs nested ones in place.
    @Test func otherThreadsStillWaitTheirTurn() throws {
        let container = try GraphContainer(for: [Post.self, Note.self, Tag.self], store: .inMemory)
        let a = container.newBackgroundContext()
        let active = Mutex((now: 0, most: 0))
        let finished = Self.finishes {
            DispatchQueue.concurrentPerform(iterations: 200) { _ in
                a.performAndWait {
                    active.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                    a.performAndWait { a.insert(Tag(name: UUID().uuidString)) }
                    active.withLock { $0.now -= 1 }
                }
            }
        }
        #expect(finished)
        #expect(active.withLock { $0.most } == 1)
    }
}
