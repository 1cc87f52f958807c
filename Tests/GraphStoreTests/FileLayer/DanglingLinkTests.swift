import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// A store opened through a symbolic link whose target does not exist yet (a store placed on
/// another volume by a link made before its first save) is the file the link names: the first
/// save creates that file, its lock and journal are beside it, and the link stays a link.
@Suite struct DanglingLinkTests {
    private func texts(_ container: GraphContainer) throws -> Set<String> {
        Set(try container.mainContext.fetch(FetchDescriptor<Note>()).map(\.text))
    }

    private func isSymbolicLink(_ url: URL) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) != nil
    }

    /// Saves "first" through `link`, closes, and checks that the link is still one, that
    /// `target` holds the save, and that both names open the same store.
    private func expectSavesReachTheTarget(link: URL, target: URL) async throws {
        let container = try GraphContainer(for: exampleModel, store: .file(link, coalescingInterval: .seconds(3600)))
        container.mainContext.insert(Note(text: "first", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        // The journal and the lock are the target's, not the link's.
        #expect(FileManager.default.fileExists(atPath: target.path + ".journal"))
        #expect(FileManager.default.fileExists(atPath: target.path + ".lock"))
        #expect(!FileManager.default.fileExists(atPath: link.path + ".journal"))
        #expect(!FileManager.default.fileExists(atPath: link.path + ".lock"))
        // One store under both names: the target's own name is refused while it is open.
        #expect(throws: GraphStoreError.storeLocked(path: target.path)) {
            _ = try GraphContainer(for: exampleModel, store: .file(target))
        }
        try await container.close()

        #expect(isSymbolicLink(link), "the link was replaced by a file")
        #expect(FileManager.default.fileExists(atPath: target.path), "the target was never written")
        #expect(!FileManager.default.fileExists(atPath: target.path + ".journal"))

        let throughLink = try GraphContainer(for: exampleModel, store: .file(link))
        #expect(try texts(throughLink) == ["first"])
        throughLink.mainContext.insert(Note(text: "second", createdAt: Fixtures.epoch))
        try throughLink.mainContext.save()
        try await throughLink.close()
        #expect(isSymbolicLink(link), "the link was replaced by a file on the second open")

        let byName = try GraphContainer(for: exampleModel, store: .file(target))
        #expect(try texts(byName) == ["first", "second"])
        try await byName.close()
    }

    @Test func anAbsoluteLinkToAFileNotYetWrittenIsFollowed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let volume = directory.file("volume")
        try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
        let target = volume.appendingPathComponent("store.json.gz"), link = directory.file("store.json.gz")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target.path)

        try await expectSavesReachTheTarget(link: link, target: target)
        #expect(try directory.entries() == ["store.json.gz", "volume"], "nothing is created beside the link")
    }

    /// A relative destination is taken from the link's directory, as the kernel takes it, also
    /// when it goes up (`..`).
    @Test func aRelativeLinkIsFollowedFromItsDirectory() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let links = directory.file("links"), volume = directory.file("volume")
        for folder in [links, volume] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let link = links.appendingPathComponent("store.json.gz")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "../volume/store.json.gz")

        try await expectSavesReachTheTarget(link: link, target: volume.appendingPathComponent("store.json.gz"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: links.path) == ["store.json.gz"])
    }

    /// A link to a link (relative) to a file not written yet (absolute).
    @Test func aChainOfTwoLinksIsFollowedToTheEnd() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let volume = directory.file("volume")
        try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
        let target = volume.appendingPathComponent("store.json.gz")
        let first = directory.file("store.json.gz"), second = directory.file("current.json.gz")
        try FileManager.default.createSymbolicLink(atPath: first.path, withDestinationPath: "current.json.gz")
        try FileManager.default.createSymbolicLink(atPath: second.path, withDestinationPath: target.path)

        try await expectSavesReachTheTarget(link: first, target: target)
        #expect(isSymbolicLink(second), "the link in the middle was replaced by a file")
        #expect(try directory.entries() == ["current.json.gz", "store.json.gz", "volume"])
    }

    /// Links that form a loop name no file: opening says so, naming the path, and creates
    /// nothing (no lock file, no journal, no snapshot).
    @Test func aLinkLoopIsAClearErrorAndCreatesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = directory.file("a.json.gz"), second = directory.file("b.json.gz")
        try FileManager.default.createSymbolicLink(atPath: first.path, withDestinationPath: "b.json.gz")
        try FileManager.default.createSymbolicLink(atPath: second.path, withDestinationPath: "a.json.gz")

        let error = #expect(throws: GraphStoreError.self) {
            _ = try GraphContainer(for: exampleModel, store: .file(first))
        }
        guard case .fileOperationFailed(let path, _, let reason)? = error else {
            Issue.record("expected fileOperationFailed, got \(String(describing: error))")
            return
        }
        #expect(path == first.path)
        #expect(reason.contains("loop"), "\(reason)")
        #expect(try directory.entries() == ["a.json.gz", "b.json.gz"])
    }

    /// The path spelling of a link to a file not written yet is the one of the file once it is
    /// written: one store, one key, before and after the first save.
    @Test func theCanonicalPathIsTheSameBeforeAndAfterTheTargetExists() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let volume = directory.file("volume")
        try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
        let target = volume.appendingPathComponent("store.json.gz"), link = directory.file("store.json.gz")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "volume/store.json.gz")

        let before = StorePath.canonical(link)
        try Data("x".utf8).write(to: target)
        #expect(before == StorePath.canonical(link))
        #expect(before == StorePath.canonical(target))
        #expect(before.lastPathComponent == "store.json.gz")
    }
}
