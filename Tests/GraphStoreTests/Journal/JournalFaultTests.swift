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

/// A save that cannot be journaled (full disk, read-only file system) throws and commits
/// nothing; the context keeps its changes to retry, and everything saved before stays.
@Suite(.serialized) struct JournalFaultTests {
    @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
    func aFullDiskMakesSaveThrowAndCommitNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 256)
        let mountPoint = tmpfs.url
        defer { tmpfs.unmount() }
        let url = mountPoint.appendingPathComponent("store.json.gz")
        let journal = JournalStoreTests.journalURL(url)
        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        let context = container.mainContext
        for number in 0..<10 {
            context.insert(Note(text: "before \(number)", createdAt: Fixtures.epoch))
            try context.save()
        }
        let filler = try tmpfs.fillUp()

        // A save larger than what is left: the append fails part way.
        let big = (0..<40).map { Note(text: "big \($0) " + String(repeating: "ü", count: 2_000), createdAt: Fixtures.epoch) }
        for note in big { context.insert(note) }
        #expect {
            try context.save()
        } throws: { error in
            guard case .fileOperationFailed(let path, let operation, let reason)? = error as? GraphStoreError else { return false }
            return path == journal.path && operation == "append to the journal" && reason.contains(systemErrorMessage(ENOSPC))
        }
        #expect(container.version == 10, "nothing committed")
        #expect(container.count(of: Note.self) == 10)
        #expect(context.hasChanges, "the context keeps its changes to retry")
        let scan = try #require(try JournalReplay.read(journal.path)).scan
        #expect(scan.records.count == 10 && !scan.hasTornTail, "the failed append's bytes were cut off")

        // Room again: the same save goes through.
        try tmpfs.removeFiller(filler)
        try context.save()
        #expect(container.count(of: Note.self) == 50)
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let copy = try JournalStoreTests.crashCopy(of: url, into: scratch)
        try await container.close()
        let reopened = try GraphContainer(for: exampleModel, store: .file(copy))
        #expect(reopened.count(of: Note.self) == 50)
        try await reopened.close()
    }

    @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
    func aReadOnlyFileSystemOpensButRefusesSaves() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 1024)
        let mountPoint = tmpfs.url
        defer { tmpfs.unmount() }
        let url = mountPoint.appendingPathComponent("store.json.gz")
        let first = try GraphContainer(for: exampleModel, store: .file(url))
        first.mainContext.insert(Note(text: "kept", createdAt: Fixtures.epoch))
        try first.mainContext.save()
        try await first.close()
        let before = JournalStoreTests.files(url)

        let failure = await tmpfs.remount(readOnly: true)
        try #require(failure == nil, "remount read-only: \(systemErrorMessage(failure ?? 0))")
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(try JournalStoreTests.noteTexts(container) == ["kept"])
        container.mainContext.insert(Note(text: "refused", createdAt: Fixtures.epoch))
        #expect {
            try container.mainContext.save()
        } throws: { error in
            guard case .fileOperationFailed(let path, _, let reason)? = error as? GraphStoreError else { return false }
            return path == JournalStoreTests.journalURL(url).path && reason.contains(systemErrorMessage(EROFS))
        }
        #expect(container.version == 1 && container.count(of: Note.self) == 1)
        #expect(container.mainContext.hasChanges)
        #expect(JournalStoreTests.files(url) == before)

        // Writable again, the same save goes through: the journal is created then.
        let writable = await tmpfs.remount(readOnly: false)
        try #require(writable == nil, "remount read-write: \(systemErrorMessage(writable ?? 0))")
        try container.mainContext.save()
        #expect(container.version == 2)
        try await container.close()
        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(try JournalStoreTests.noteTexts(reopened) == ["kept", "refused"])
        try await reopened.close()
    }
}
