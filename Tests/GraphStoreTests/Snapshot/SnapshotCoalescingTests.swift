import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// The coalescing writer, driven by a manual clock: saves never write by themselves, at most
/// one write per interval, a save during a write goes into the next one, `flush()` writes at
/// once, and the writer reports what it did. The stores here are `.coalesced`, so the writer
/// alone is at work (the journal has its own suites).
@Suite struct SnapshotCoalescingTests {
    private let interval: Duration = .seconds(1)

    private func openStore(
        _ url: URL, clock: ManualWriterClock, beforeWrite: (@Sendable () -> Void)? = nil
    ) throws -> GraphContainer {
        var options = SnapshotOptions()
        options.clock = clock
        options.beforeWrite = beforeWrite
        return try GraphContainer(
            for: exampleModel,
            store: .file(url, format: .json, compression: .gzip, coalescingInterval: interval, durability: .coalesced, options: options))
    }

    private func notes(in url: URL) throws -> (storeVersion: UInt64, notes: [Note], tags: [ExampleModel.Tag]) {
        let (header, version) = try SnapshotTestKit.readSnapshot(url)
        return (header.storeVersion, SnapshotTestKit.objects(Note.self, in: version), SnapshotTestKit.objects(ExampleModel.Tag.self, in: version))
    }

    // MARK: - Coalescing

    @Test func thousandSavesWithinOneIntervalMakeOneWrite() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let clock = ManualWriterClock()
        let container = try openStore(url, clock: clock)
        let writer = SnapshotTestKit.writer(of: container)
        let context = container.mainContext
        let noteID = UUID()

        for number in 1...1_000 {
            context.insert(Note(id: noteID, text: "save \(number)", createdAt: Fixtures.epoch))
            context.insert(ExampleModel.Tag(name: "tag \(number)"))
            try context.save()
        }
        #expect(container.version == 1_000)

        try await SnapshotTestKit.waitUntilIdle(writer)
        #expect(container.storeStatus.writesCompleted == 0)
        #expect(container.storeStatus.durableVersion == 0)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(clock.pendingTimers == 1, "one timer for the whole burst")

        // A nanosecond before the interval ends: still nothing.
        clock.advance(by: interval - .nanoseconds(1))
        try await SnapshotTestKit.waitUntilIdle(writer)
        #expect(container.storeStatus.writesCompleted == 0)
        #expect(!FileManager.default.fileExists(atPath: url.path))

        // The interval is over: exactly one write, holding the last save.
        clock.advance(by: .nanoseconds(1))
        try await SnapshotTestKit.waitUntilIdle(writer)
        let status = container.storeStatus
        #expect(status.writesCompleted == 1)
        #expect(status.failedWrites == 0)
        #expect(status.durableVersion == 1_000)
        let onDisk = try notes(in: url)
        #expect(onDisk.storeVersion == 1_000)
        #expect(onDisk.notes.map(\.text) == ["save 1000"])
        #expect(onDisk.tags.count == 1_000)

        // Nothing new: later intervals write nothing.
        clock.advance(by: interval * 5)
        try await SnapshotTestKit.waitUntilIdle(writer)
        #expect(container.storeStatus.writesCompleted == 1)
        #expect(clock.pendingTimers == 0)

        try await container.close()
        #expect(container.storeStatus.writesCompleted == 1, "close had nothing left to write")
    }

    @Test func saveDuringWriteGoesIntoTheNextWrite() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let clock = ManualWriterClock()
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let writesStarted = Guarded(0)
        let container = try openStore(url, clock: clock) {
            // Only the first write waits at the gate.
            let number = writesStarted.withLock { count in
                count += 1
                return count
            }
            if number == 1 {
                entered.signal()
                gate.wait()
            }
        }
        // Never leave the writer blocked, whatever fails below.
        defer { gate.signal() }
        let writer = SnapshotTestKit.writer(of: container)
        let context = container.mainContext
        let noteID = UUID()

        context.insert(Note(id: noteID, text: "earlier", createdAt: Fixtures.epoch))
        try context.save()
        clock.advance(by: interval)
        try await SnapshotTestKit.offload { entered.wait() }  // The first write is in flight.

        // Saving while the write is blocked returns at once: saves never wait for the disk.
        context.insert(Note(id: noteID, text: "later", createdAt: Fixtures.epoch))
        try context.save()
        #expect(container.version == 2)
        #expect(container.storeStatus.writesCompleted == 0)

        gate.signal()
        try await SnapshotTestKit.waitUntilIdle(writer)
        #expect(container.storeStatus.writesCompleted == 1)
        #expect(container.storeStatus.durableVersion == 1)
        var onDisk = try notes(in: url)
        #expect(onDisk.storeVersion == 1)
        #expect(onDisk.notes.map(\.text) == ["earlier"])
        #expect(clock.pendingTimers == 1, "the later save is scheduled")

        // At most one write per interval, counted from the start of the previous one.
        clock.advance(by: interval - .nanoseconds(1))
        try await SnapshotTestKit.waitUntilIdle(writer)
        #expect(container.storeStatus.writesCompleted == 1)

        clock.advance(by: .nanoseconds(1))
        try await SnapshotTestKit.waitUntilIdle(writer)
        #expect(container.storeStatus.writesCompleted == 2)
        #expect(container.storeStatus.durableVersion == 2)
        onDisk = try notes(in: url)
        #expect(onDisk.storeVersion == 2)
        #expect(onDisk.notes.map(\.text) == ["later"])
        #expect(writesStarted.value == 2)

        try await container.close()
    }

    @Test func flushWritesWithoutTheClockMoving() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let clock = ManualWriterClock()
        let container = try openStore(url, clock: clock)
        let writer = SnapshotTestKit.writer(of: container)

        container.mainContext.insert(Note(text: "flushed", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        try await container.flush()

        #expect(clock.now == .zero)
        #expect(container.storeStatus.writesCompleted == 1)
        #expect(container.storeStatus.durableVersion == container.version)
        #expect(try notes(in: url).notes.map(\.text) == ["flushed"])

        // A flush with nothing new, and the timer the commit armed, write nothing more.
        try await container.flush()
        clock.advance(by: interval)
        try await SnapshotTestKit.waitUntilIdle(writer)
        #expect(container.storeStatus.writesCompleted == 1)

        // A new commit is written by a flush, again without the clock.
        container.mainContext.insert(Note(text: "again", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        try await container.flush()
        #expect(container.storeStatus.writesCompleted == 2)
        #expect(Set(try notes(in: url).notes.map(\.text)) == ["flushed", "again"])
        try await container.close()
    }

    // MARK: - Observability

    @Test func writerReportsEveryWriteInOrder() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let clock = ManualWriterClock()
        let container = try openStore(url, clock: clock)
        let events = container.storeEvents

        #expect(container.storeStatus.writesCompleted == 0)
        #expect(container.storeStatus.lastWriteBytes == nil)
        #expect(container.storeStatus.lastWriteDuration == nil)

        var sizes: [Int] = []
        for round in 1...3 {
            for number in 0..<(round * 20) {
                container.mainContext.insert(Note(text: "round \(round) note \(number)", createdAt: Fixtures.epoch))
            }
            try container.mainContext.save()
            try await container.flush()
            let status = container.storeStatus
            let size = try SnapshotTestKit.fileSize(url)
            sizes.append(size)
            #expect(status.writesCompleted == round)
            #expect(status.lastWriteBytes == size)
            #expect(status.lastWriteDuration != nil)
            #expect(status.durableVersion == UInt64(round))
            #expect(status.lastError == nil)
        }
        try await container.close()

        var received: [StoreEvent] = []
        for await event in events { received.append(event) }  // Ends at close.
        let wrote = received.compactMap { event -> (version: UInt64, bytes: Int)? in
            if case .wrote(let version, let bytes, _) = event { (version, bytes) } else { nil }
        }
        #expect(received.count == 3)
        #expect(wrote.map(\.version) == [1, 2, 3])
        #expect(wrote.map(\.bytes) == sizes)
    }

    /// `flush()` returning means the write's event is already in every stream, and `close()`
    /// never ends a stream before the last write's event is in it.
    @Test func closeNeverDropsTheLastWriteEvent() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for round in 1...60 {
            let url = directory.file("store-\(round).json.gz")
            let container = try openStore(url, clock: ManualWriterClock())
            let events = container.storeEvents
            container.mainContext.insert(Note(text: "round \(round)", createdAt: Fixtures.epoch))
            try container.mainContext.save()
            try await container.flush()
            try await container.close()
            var received: [StoreEvent] = []
            for await event in events { received.append(event) }
            #expect(received.count == 1, "round \(round): \(received)")
            if received.count != 1 { break }
        }
    }
}
