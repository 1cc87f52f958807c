import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A snapshot write that fails (full disk, read-only directory) never loses or blocks
/// anything: saves go on in memory, `flush()` throws a clear error, the snapshot on disk stays
/// as it was, and once the fault clears the next flush writes everything. The stores here are
/// `.coalesced`, so that the snapshot writer alone meets the fault; `JournalFaultTests` covers
/// saves that cannot be journaled.
@Suite struct SnapshotWriteFaultTests {
    /// A fault the file system seam injects, and what the error must say.
    struct InjectedFault: Sendable, CustomTestStringConvertible {
        let fault: FaultInjectingFileSystem.Fault
        let operation: String
        let code: Int32
        var testDescription: String { "\(operation) fails with \(systemErrorName(code) ?? "\(code)")" }
    }

    static let injectedFaults = [
        InjectedFault(fault: .writesAfter(bytes: 100, errno: ENOSPC), operation: "write", code: ENOSPC),
        InjectedFault(fault: .writesAfter(bytes: 0, errno: EDQUOT), operation: "write", code: EDQUOT),
        InjectedFault(fault: .open(errno: EACCES), operation: "open", code: EACCES),
        InjectedFault(fault: .open(errno: EROFS), operation: "open", code: EROFS),
        InjectedFault(fault: .fsync(errno: EIO), operation: "fsync", code: EIO),
        InjectedFault(fault: .rename(errno: EACCES), operation: "rename", code: EACCES),
    ]

    // MARK: - Injected faults

    @Test(arguments: injectedFaults)
    func injectedFaultIsSurvived(_ injected: InjectedFault) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultInjectingFileSystem()
        var options = SnapshotOptions()
        options.fileSystem = faults
        try await expectSurvivesFault(
            url: directory.file("store.json.gz"), options: options,
            operation: injected.operation, code: injected.code,
            breakDisk: { faults.inject(injected.fault) },
            repairDisk: { faults.clearFaults() })
        #expect(faults.statistics.injectedFailures >= 1)
    }

    /// A price that is not a number. Foundation's `JSONEncoder` writes a `Decimal.nan` as a
    /// bare `NaN`, which is not JSON.
    struct Priced: Entity, Equatable {
        var id: Int
        var price: Decimal
    }

    /// Running out of memory, or zlib failing, is the process's trouble, not the file's: it is
    /// a failed operation on the file, never damage that a recovering open would set aside.
    @Test func memoryAndZlibFailuresAreNotDamage() {
        let failures: [FileLayerError] = [
            .outOfMemory(requestedBytes: 1 << 40), .zlibFailure(function: "deflateInit2", code: -4, message: "insufficient memory"),
        ]
        let expected = [failures[0].description: "allocate memory", failures[1].description: "compress"]
        for failure in failures {
            guard case .fileOperationFailed(let path, let operation, let reason) = GraphStoreError(failure, path: "/s/store.json.gz") else {
                Issue.record("\(failure) became \(GraphStoreError(failure, path: "/s/store.json.gz"))")
                continue
            }
            #expect(path == "/s/store.json.gz" && operation == expected[failure.description] && reason == failure.description)
        }
    }

    /// A value the JSON snapshot cannot hold makes the write fail, reported by `flush()` with
    /// the entity: the last good snapshot stays, instead of being replaced by a file no open
    /// accepts (the fallback encoder's `NaN` used to be written).
    @Test func aValueJSONCannotHoldFailsTheWriteAndKeepsTheLastGoodFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json")
        let container = try GraphContainer(for: [Priced.self], store: .file(url, format: .json, compression: .none, durability: .coalesced))
        container.mainContext.insert(Priced(id: 1, price: 9.5))
        try container.mainContext.save()
        try await container.flush()
        let good = try Data(contentsOf: url)

        container.mainContext.insert(Priced(id: 2, price: .nan))
        try container.mainContext.save()
        await #expect {
            try await container.flush()
        } throws: { error in
            guard case .codingFailed(_, let entity, _, _)? = error as? GraphStoreError else { return false }
            return entity == "Priced"
        }
        #expect(try Data(contentsOf: url) == good)
        try FileManager.default.copyItem(at: url, to: directory.file("check.json"))
        let check = try GraphContainer(for: [Priced.self], store: .file(directory.file("check.json"), format: .json, compression: .none))
        #expect(try check.mainContext.fetch(FetchDescriptor<Priced>()) == [Priced(id: 1, price: 9.5)])
        try await check.close()
        container.mainContext.delete(Priced.self, id: 2)
        try container.mainContext.save()
        try await container.close()
    }

    // MARK: - Real file systems

    @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
    func fullDiskOnARealTmpfs() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 256)
        let mountPoint = tmpfs.url
        defer { tmpfs.unmount() }
        let filler = mountPoint.appendingPathComponent("filler")
        try await expectSurvivesFault(
            url: mountPoint.appendingPathComponent("store.json.gz"), options: SnapshotOptions(),
            operation: "write", code: ENOSPC,
            breakDisk: { _ = try tmpfs.fillUp(with: filler.lastPathComponent) },
            repairDisk: { try tmpfs.removeFiller(filler) })
    }

    @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
    func readOnlyRealTmpfs() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 1024)
        let mountPoint = tmpfs.url
        defer { tmpfs.unmount() }
        // Remounting read-only needs no file open for writing, so the store is reopened after
        // the remount (its lock file is then locked through a read-only descriptor).
        try await expectSurvivesFault(
            url: mountPoint.appendingPathComponent("store.json.gz"), options: SnapshotOptions(),
            operation: "open", code: EROFS, breakBeforeReopening: true,
            breakDisk: {
                let failure = await tmpfs.remount(readOnly: true)
                try #require(failure == nil, "remount read-only: \(systemErrorMessage(failure ?? 0))")
            },
            repairDisk: {
                let failure = await tmpfs.remount(readOnly: false)
                try #require(failure == nil, "remount read-write: \(systemErrorMessage(failure ?? 0))")
            })
    }

    // MARK: - The scenario

    /// Writes v1, breaks the disk, saves v2 and checks everything a failed write promises;
    /// then repairs the disk and checks the next flush writes v1 and v2.
    private func expectSurvivesFault(
        url: URL, options: SnapshotOptions, operation: String, code: Int32, breakBeforeReopening: Bool = false,
        breakDisk: () async throws -> Void, repairDisk: () async throws -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var options = options
        options.clock = ManualWriterClock()  // No retry fires by itself: the test decides.

        // v1 on disk.
        let first = try GraphContainer(for: exampleModel, store: .file(url, durability: .coalesced, options: options))
        let tags = Fixtures.tagNames.map { ExampleModel.Tag(name: $0) }
        for tag in tags { first.mainContext.insert(tag) }
        for post in Fixtures.posts(10, tags: tags.map(\.id)) { first.mainContext.insert(post) }
        try first.mainContext.save()
        try await first.flush()
        try await first.close()
        let before = try Data(contentsOf: url)

        if breakBeforeReopening { try await breakDisk() }
        let container = try GraphContainer(for: exampleModel, store: .file(url, durability: .coalesced, options: options))
        var events = container.storeEvents.makeAsyncIterator()
        if !breakBeforeReopening { try await breakDisk() }

        // The save does not touch the disk and succeeds.
        let notes = (0..<200).map { Note(text: "note \($0) " + String(repeating: "ü", count: $0), createdAt: Fixtures.epoch, tagIDs: [tags[$0 % tags.count].id]) }
        for note in notes { container.mainContext.insert(note) }
        try container.mainContext.save()
        #expect(container.version == 2, sourceLocation: sourceLocation)

        // flush() throws the write's error, naming the file and the reason.
        var thrown: GraphStoreError?
        do {
            try await container.flush()
            Issue.record("flush succeeded on a broken disk", sourceLocation: sourceLocation)
        } catch let error as GraphStoreError {
            thrown = error
        }
        let error = try #require(thrown, sourceLocation: sourceLocation)
        guard case .fileOperationFailed(let path, let failedOperation, let reason) = error else {
            Issue.record("expected fileOperationFailed, got \(error)", sourceLocation: sourceLocation)
            return
        }
        #expect(path == url.path, sourceLocation: sourceLocation)
        #expect(failedOperation == operation, sourceLocation: sourceLocation)
        #expect(reason.contains(systemErrorMessage(code)), "\(reason)", sourceLocation: sourceLocation)
        #expect(error.description.contains(url.path), sourceLocation: sourceLocation)

        // Kept as state and announced.
        let status = container.storeStatus
        #expect(status.lastError == error, sourceLocation: sourceLocation)
        #expect(status.failedWrites == 1, sourceLocation: sourceLocation)
        #expect(status.durableVersion == 1, sourceLocation: sourceLocation)
        let failureEvent = await events.next()
        guard case .writeFailed(let announced, let retryIn)? = failureEvent else {
            Issue.record("expected a writeFailed event, got \(String(describing: failureEvent))", sourceLocation: sourceLocation)
            return
        }
        #expect(announced == error, sourceLocation: sourceLocation)
        #expect(retryIn > .zero, sourceLocation: sourceLocation)

        // Nothing lost in memory, nothing changed or left behind on disk.
        #expect(container.count(of: Note.self) == notes.count, sourceLocation: sourceLocation)
        #expect(Set(try SnapshotTestKit.fetchAll(Note.self, from: container).map(\.id)) == Set(notes.map(\.id)), sourceLocation: sourceLocation)
        #expect(container.count(of: Post.self) == 10, sourceLocation: sourceLocation)
        try container.checkInvariants()
        #expect(try Data(contentsOf: url) == before, "the snapshot on disk changed", sourceLocation: sourceLocation)
        #expect(SnapshotTestKit.temporaryFiles(for: url).isEmpty, "\(SnapshotTestKit.temporaryFiles(for: url))", sourceLocation: sourceLocation)

        // Once the fault clears, the next flush writes everything.
        try await repairDisk()
        try await container.flush()
        #expect(container.storeStatus.lastError == nil, sourceLocation: sourceLocation)
        #expect(container.storeStatus.durableVersion == 2, sourceLocation: sourceLocation)
        let recovered = await events.next()
        guard case .wrote(let version, _, _)? = recovered else {
            Issue.record("expected a wrote event, got \(String(describing: recovered))", sourceLocation: sourceLocation)
            return
        }
        #expect(version == 2, sourceLocation: sourceLocation)
        try await container.close()
        #expect(SnapshotTestKit.temporaryFiles(for: url).isEmpty, sourceLocation: sourceLocation)

        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(reopened.count(of: Note.self) == notes.count, sourceLocation: sourceLocation)
        #expect(reopened.count(of: Post.self) == 10, sourceLocation: sourceLocation)
        #expect(reopened.count(of: ExampleModel.Tag.self) == tags.count, sourceLocation: sourceLocation)
        #expect(Set(try SnapshotTestKit.fetchAll(Note.self, from: reopened).map(\.text)) == Set(notes.map(\.text)), sourceLocation: sourceLocation)
        try reopened.checkInvariants()
        try await reopened.close()
    }
}
