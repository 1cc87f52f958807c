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

/// The files that hold a store's data keep the store file's permissions: a snapshot write
/// replaces the file with one of the same mode, and the journal, the previous snapshot and the
/// copies kept by a migration or a recovery take the store's mode. A store the user made
/// private stays private.
@Suite struct FilePermissionTests {
    /// The permission bits of the file at `path`, or `nil` when there is none.
    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    /// The mode a new file created with 0644 gets in this process (the umask narrows it).
    static func defaultMode(in directory: TemporaryDirectory) -> mode_t? {
        let probe = directory.file(".mode-probe").path
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        close(descriptor)
        defer { unlink(probe) }
        return mode(probe)
    }

    private func octal(_ mode: mode_t?) -> String {
        mode.map { String($0, radix: 8) } ?? "missing"
    }

    private func texts(_ container: GraphContainer) throws -> Set<String> {
        Set(try container.mainContext.fetch(FetchDescriptor<Note>()).map(\.text))
    }

    /// A closed store at `url` holding the note "one".
    private func makeStore(_ url: URL) async throws {
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        container.mainContext.insert(Note(text: "one", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        try await container.close()
    }

    @Test(arguments: [0o600, 0o640] as [mode_t])
    func aStoresModeIsKeptBySnapshotWritesAndGivenToItsJournal(permissions: mode_t) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        try await makeStore(url)
        #expect(chmod(url.path, permissions) == 0)

        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        container.mainContext.insert(Note(text: "two", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        #expect(Self.mode(url.path + ".journal") == permissions, "journal: \(octal(Self.mode(url.path + ".journal")))")

        // A snapshot write while open: the file replaced, the old one kept as the previous
        // snapshot, the journal rotated.
        try await SnapshotTestKit.writer(of: container).flush()
        #expect(Self.mode(url.path) == permissions, "store after a write: \(octal(Self.mode(url.path)))")
        #expect(Self.mode(url.path + ".previous") == permissions, "previous: \(octal(Self.mode(url.path + ".previous")))")
        container.mainContext.insert(Note(text: "three", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        #expect(Self.mode(url.path + ".journal") == permissions, "rotated journal: \(octal(Self.mode(url.path + ".journal")))")

        try await container.close()
        #expect(Self.mode(url.path) == permissions, "store after close: \(octal(Self.mode(url.path)))")
        #expect(Self.mode(url.path + ".previous") == permissions)
        #expect(Self.mode(url.path + ".journal") == nil)

        let reopened = try GraphContainer(for: exampleModel, store: .file(url))
        #expect(try texts(reopened) == ["one", "two", "three"])
        try await reopened.close()
        #expect(Self.mode(url.path) == permissions)
    }

    /// A new store's files get the mode of any new file (0644, narrowed by the umask).
    @Test func aNewStoreGetsTheDefaultMode() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let expected = try #require(Self.defaultMode(in: directory))

        let container = try GraphContainer(for: exampleModel, store: .file(url, coalescingInterval: .seconds(3600)))
        container.mainContext.insert(Note(text: "one", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        #expect(Self.mode(url.path) == expected)
        #expect(Self.mode(url.path + ".journal") == expected)
        try await container.close()
        #expect(Self.mode(url.path) == expected)
    }

    /// The file an atomic write replaces gives the new one its mode, whatever the umask.
    @Test(arguments: [0o600, 0o640, 0o666] as [mode_t])
    func anAtomicWriteKeepsTheReplacedFilesMode(permissions: mode_t) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("data")
        try Data("old".utf8).write(to: url)
        #expect(chmod(url.path, permissions) == 0)

        try AtomicFile.write(Data("new".utf8), to: url)
        #expect(try Data(contentsOf: url) == Data("new".utf8))
        #expect(Self.mode(url.path) == permissions, "\(octal(Self.mode(url.path)))")
    }

    /// The copy of a damaged file that recovery keeps holds the same data: it has its mode.
    @Test func theCopyOfADamagedFileHasItsMode() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        try Data("damaged".utf8).write(to: url)
        #expect(chmod(url.path, 0o600) == 0)

        let aside = try DamagedFileCopy.keep(url.path)
        #expect(Self.mode(aside) == 0o600, "\(octal(Self.mode(aside)))")
    }

    /// A store of an older model version, private, is migrated at open: the migrated file and
    /// the old one kept beside it stay private.
    @Test func aMigratedStoreAndItsKeptCopyKeepTheMode() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try ModelVersionFixtures.copy(["v1.json.gz"], to: directory.url)
        let url = directory.file("v1.json.gz")
        #expect(chmod(url.path, 0o600) == 0)

        let container = try ModelVersionFixtureTests.open(url)
        try await container.close()
        #expect(Self.mode(url.path) == 0o600, "migrated: \(octal(Self.mode(url.path)))")
        #expect(Self.mode(url.path + ".v1") == 0o600, "kept copy: \(octal(Self.mode(url.path + ".v1")))")
    }
}
