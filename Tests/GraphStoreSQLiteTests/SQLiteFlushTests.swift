import ExampleModel
import Foundation
import GRDB
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// The background writer under ``Durability/coalesced`` (no journal): saves never wait for the
/// disk; `flush()` waits for a transaction holding every earlier commit and throws the writer's
/// error; failed writes are reported, kept and retried. With a journal, `flush()` waits for the
/// journal's fsync instead (see `SQLiteJournalTests`).
@Suite struct SQLiteFlushTests {
    /// `.coalesced` options on a manual clock whose first `count` writes fail (each after
    /// `before` runs on the writer's thread), and the count of writes attempted.
    static func failingWrites(_ count: Int, before: @escaping @Sendable () -> Void = {}) -> (SQLiteStoreOptions, Guarded<Int>) {
        let attempts = Guarded(0)
        var options = SQLiteStoreOptions(durability: .coalesced)
        options.clock = ManualWriterClock()
        options.beforeTransaction = { _ in
            let attempt = attempts.withLock { attempts in
                attempts += 1
                return attempts
            }
            before()
            if attempt <= count { throw GraphStoreError.fileOperationFailed(path: "test", operation: "write", reason: "injected \(attempt)") }
        }
        return (options, attempts)
    }

    @Test func saveReturnsBeforeTheWriteAndFlushWaitsForIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let gate = WriterGate()
        var options = SQLiteStoreOptions(durability: .coalesced)
        options.beforeTransaction = { _ in gate.pass() }
        let container = try SQLiteTestKit.open(directory.file("store.sqlite"), options: options)

        gate.close()
        container.mainContext.insert(ExampleModel.Tag(name: "swift"))
        try container.mainContext.save()
        await gate.waitUntilReached()
        // The save returned and is visible while its write is held inside its transaction.
        #expect(container.version == 1)
        #expect(container.count(of: ExampleModel.Tag.self) == 1)
        #expect(container.storeStatus.durableVersion == 0)

        let flush = Task { try await container.flush() }
        gate.open()
        try await flush.value
        // flush() returned, so the held write finished: it cannot have returned earlier.
        #expect(container.storeStatus.durableVersion == 1)
        #expect(container.storeStatus.writesCompleted == 1)
        #expect(container.storeStatus.lastWriteBytes ?? 0 > 0)
        try await container.close()
    }

    @Test func flushWithNothingToWriteReturnsAtOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let container = try SQLiteTestKit.open(directory.file("store.sqlite"), options: SQLiteStoreOptions(durability: .coalesced))
        try await container.flush()
        #expect(container.storeStatus.writesCompleted == 0)
        try await container.close()
    }

    @Test func aFailedWriteIsReportedKeptAndRetried() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let isFull = Guarded(false)
        let clock = ManualWriterClock()
        var options = SQLiteStoreOptions(durability: .coalesced)
        options.clock = clock
        options.beforeTransaction = Self.diskFull(when: isFull)
        let container = try SQLiteTestKit.open(url, options: options)
        try SQLiteTestKit.insert(SQLiteTestKit.exampleGraph(posts: 2, notes: 0), into: container)
        try await container.flush()
        let events = container.storeEvents
        var iterator = events.makeAsyncIterator()

        // SQLite runs out of pages: the write fails and rolls back.
        isFull.withLock { $0 = true }
        let posts = Fixtures.posts(200, startingAt: 1000).map { post in
            var post = post
            post.body = String(repeating: "long body ", count: 100)
            return post
        }
        for post in posts { container.mainContext.insert(post) }
        try container.mainContext.save()
        // The write the save started fails on its own. Wait for its report rather than racing
        // it with flush(): a flush that starts after the failure retries at once (its own
        // attempt), one that starts before waits for this one.
        guard case .writeFailed(let first, _) = await iterator.next() else {
            Issue.record("expected a writeFailed event")
            return
        }
        guard case .fileOperationFailed(let path, _, let reason) = first else {
            Issue.record("expected fileOperationFailed, got \(first)")
            return
        }
        #expect(path == url.path)
        #expect(reason.contains("full"))
        #expect(container.storeStatus.failedWrites == 1)
        #expect(container.storeStatus.lastError == first)
        #expect(container.storeStatus.durableVersion == 1)
        // The graph in memory is kept.
        #expect(container.count(of: Post.self) == 202)

        // flush() tries again at once, fails the same way, and throws that failure.
        let error = await #expect(throws: GraphStoreError.self) { try await container.flush() }
        #expect(error == first)
        #expect(container.storeStatus.failedWrites == 2)
        #expect(container.storeStatus.durableVersion == 1)
        guard case .writeFailed(let reported, let retryIn) = await iterator.next() else {
            Issue.record("expected a second writeFailed event")
            return
        }
        #expect(reported == error)

        // Room again: the retry (on the writer's clock, no sleeping) writes the same commits.
        isFull.withLock { $0 = false }
        clock.advance(by: retryIn)
        guard case .wrote(let version, _, _) = await iterator.next() else {
            Issue.record("expected a wrote event")
            return
        }
        #expect(version == 2)
        #expect(container.storeStatus.lastError == nil)
        try await container.flush()
        try await container.close()

        let reopened = try SQLiteTestKit.open(url)
        #expect(reopened.count(of: Post.self) == 202)
        #expect(reopened.mainContext.model(Post.self, id: 1000)?.body == posts[0].body)
        try reopened.checkInvariants()
        try await reopened.close()
    }

    /// A close whose flush waits for a write that then fails gives the commits after that
    /// write an attempt of their own: under `.coalesced` nothing else holds them. Before, close
    /// threw the held write's error and both saves were gone.
    @Test func closeGivesTheLastCommitsAWriteOfTheirOwn() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let gate = WriterGate()
        // The first write is held at the gate, then fails.
        let (options, attempts) = Self.failingWrites(1, before: { gate.pass() })
        let container = try SQLiteTestKit.open(url, options: options)
        gate.close()
        container.mainContext.insert(ExampleModel.Tag(name: "first"))
        try container.mainContext.save()
        await gate.waitUntilReached()
        container.mainContext.insert(ExampleModel.Tag(name: "second"))
        try container.mainContext.save()
        let closing = Task { try await container.close() }
        // Let the close reach its flush, which waits for the held write.
        for _ in 0..<1_000 { await Task.yield() }
        gate.open()
        try await closing.value
        #expect(attempts.value == 2)

        let reopened = try SQLiteTestKit.open(url)
        #expect(try reopened.mainContext.fetch(FetchDescriptor<ExampleModel.Tag>()).map(\.name).sorted() == ["first", "second"])
        try await reopened.close()
    }

    @Test func flushRetriesAtOnceInsteadOfWaitingForTheTimer() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // The first two writes fail.
        let (options, attempts) = Self.failingWrites(2)
        let container = try SQLiteTestKit.open(directory.file("store.sqlite"), options: options)
        var events = container.storeEvents.makeAsyncIterator()
        container.mainContext.insert(ExampleModel.Tag(name: "swift"))
        try container.mainContext.save()
        // The write the commit started fails on its own; wait for the report, not for time.
        guard case .writeFailed(let first, _)? = await events.next() else {
            Issue.record("expected a failed write first")
            return
        }
        #expect(first == .fileOperationFailed(path: "test", operation: "write", reason: "injected 1"))
        #expect(container.storeStatus.lastError == first)
        // The manual clock never fires the retry timer: each flush starts a write itself, and
        // throws that write's error.
        await #expect(throws: GraphStoreError.fileOperationFailed(path: "test", operation: "write", reason: "injected 2")) {
            try await container.flush()
        }
        try await container.flush()
        #expect(attempts.value == 3)
        #expect(container.storeStatus.durableVersion == 1)
        #expect(container.storeStatus.lastError == nil)
        try await container.close()
    }

    @Test func closeAfterAFailedWriteThrowsAndReleasesTheStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let isFull = Guarded(false)
        var options = SQLiteStoreOptions(durability: .coalesced)
        options.clock = ManualWriterClock()
        options.beforeTransaction = Self.diskFull(when: isFull)
        let container = try SQLiteTestKit.open(url, options: options)
        container.mainContext.insert(ExampleModel.Tag(name: "durable"))
        try container.mainContext.save()
        try await container.flush()

        isFull.withLock { $0 = true }
        for post in Fixtures.posts(300) { container.mainContext.insert(post) }
        try container.mainContext.save()
        await #expect(throws: GraphStoreError.self) { try await container.close() }

        // The lock is released; without a journal the file holds only what was written.
        let reopened = try SQLiteTestKit.open(url)
        #expect(reopened.count(of: ExampleModel.Tag.self) == 1)
        #expect(reopened.count(of: Post.self) == 0)
        #expect(reopened.version == 1)
        try await reopened.close()
    }

    /// A `beforeTransaction` hook that, while `isFull`, caps the database at its current size,
    /// so SQLite fails a growing write with SQLITE_FULL, as on a full disk.
    private static func diskFull(when isFull: Guarded<Bool>) -> @Sendable (Database) throws -> Void {
        { db in
            if isFull.value {
                let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 1
                try db.execute(sql: "PRAGMA max_page_count = \(pages)")
            } else {
                try db.execute(sql: "PRAGMA max_page_count = 1073741823")
            }
        }
    }
}
