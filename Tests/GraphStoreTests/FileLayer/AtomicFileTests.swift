import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore
import GraphStoreTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - AtomicFile

@Suite("AtomicFile writes whole files or nothing")
struct AtomicFileTests {

    static let previous = SplitMix64.bytes(10_000, seed: 1)
    static let replacement = SplitMix64.bytes(200_000, seed: 2)

    /// A step that can fail, the errno to inject, and the operation the
    /// error must name.
    struct StepFault: Sendable, CustomTestStringConvertible {
        let fault: FaultInjectingFileSystem.Fault
        let operation: String
        let errno: Int32
        var testDescription: String { "\(operation) fails with \(systemErrorName(errno) ?? "\(errno)")" }
    }

    // MARK: - Success

    @Test("Creates a missing file and replaces an existing one by rename")
    func createsAndReplaces() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("store.graph")

        try AtomicFile.write(Self.previous, to: destination)
        #expect(try Data(contentsOf: destination) == Self.previous)
        let firstInode = try Self.inode(destination)

        try AtomicFile.write(Self.replacement, to: destination)
        #expect(try Data(contentsOf: destination) == Self.replacement)
        #expect(try Self.inode(destination) != firstInode, "replaced by rename, not rewritten in place")
        #expect(try scratch.entries() == ["store.graph"])
    }

    @Test("Short writes and EINTR are completed and retried")
    func shortWritesAndInterruptions() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("store.graph")
        let fileSystem = FaultInjectingFileSystem()
        fileSystem.inject(.shortWrites(maxBytesPerCall: 4096))
        fileSystem.inject(.interruptions)

        try AtomicFile.write(Self.replacement, to: destination, fileSystem: fileSystem)

        #expect(try Data(contentsOf: destination) == Self.replacement)
        let statistics = fileSystem.statistics
        #expect(statistics.writeCalls >= Self.replacement.count / 4096)
        #expect(statistics.injectedFailures > 0)
        let temporary = try #require(statistics.openedPaths.first)
        #expect(URL(fileURLWithPath: temporary).lastPathComponent.hasPrefix(".store.graph.tmp-\(getpid())-"))
        #expect(try scratch.entries() == ["store.graph"])
    }

    // MARK: - Injected failures

    @Test("A full disk (injected ENOSPC) leaves the old file and no temporary file")
    func injectedDiskFull() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("store.graph")
        try AtomicFile.write(Self.previous, to: destination)
        let fileSystem = FaultInjectingFileSystem()
        fileSystem.inject(.writesAfter(bytes: 50_000, errno: ENOSPC))

        let error = #expect(throws: FileLayerError.self) {
            try AtomicFile.write(Self.replacement, to: destination, fileSystem: fileSystem)
        }
        #expect(error?.ioErrno == ENOSPC)
        #expect(error?.ioOperation == "write")
        #expect(error?.ioPath == destination.path)
        #expect(error?.description.contains("ENOSPC") == true)
        #expect(error?.description.contains(destination.path) == true)
        #expect(fileSystem.statistics.bytesWritten == 50_000)
        #expect(try Data(contentsOf: destination) == Self.previous)
        #expect(try scratch.entries() == ["store.graph"])

        fileSystem.clearFaults()
        try AtomicFile.write(Self.replacement, to: destination, fileSystem: fileSystem)
        #expect(try Data(contentsOf: destination) == Self.replacement)
        #expect(try scratch.entries() == ["store.graph"])
    }

    @Test("Each failing step throws its operation and errno and keeps the old file", arguments: [
        StepFault(fault: .open(errno: EACCES), operation: "open", errno: EACCES),
        StepFault(fault: .open(errno: EROFS), operation: "open", errno: EROFS),
        StepFault(fault: .writesAfter(bytes: 0, errno: EDQUOT), operation: "write", errno: EDQUOT),
        StepFault(fault: .fsync(errno: EIO), operation: "fsync", errno: EIO),
        StepFault(fault: .close(errno: EIO), operation: "close", errno: EIO),
        StepFault(fault: .rename(errno: EXDEV), operation: "rename", errno: EXDEV),
    ])
    func failingStep(_ step: StepFault) throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("store.graph")
        try AtomicFile.write(Self.previous, to: destination)
        let fileSystem = FaultInjectingFileSystem()
        fileSystem.inject(step.fault)

        #expect(throws: FileLayerError.io(step.operation, path: destination.path, errno: step.errno)) {
            try AtomicFile.write(Self.replacement, to: destination, fileSystem: fileSystem)
        }
        #expect(try Data(contentsOf: destination) == Self.previous)
        #expect(try scratch.entries() == ["store.graph"])
    }

    @Test("A failing directory fsync is reported after the rename; EINVAL is tolerated")
    func directorySyncFailure() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("store.graph")
        let fileSystem = FaultInjectingFileSystem()
        fileSystem.inject(.syncDirectory(errno: EIO))

        #expect(throws: FileLayerError.io("fsync directory", path: destination.path, errno: EIO)) {
            try AtomicFile.write(Self.previous, to: destination, fileSystem: fileSystem)
        }
        #expect(try Data(contentsOf: destination) == Self.previous)
        #expect(try scratch.entries() == ["store.graph"])

        fileSystem.clearFaults()
        fileSystem.inject(.syncDirectory(errno: EINVAL))
        try AtomicFile.write(Self.replacement, to: destination, fileSystem: fileSystem)
        #expect(try Data(contentsOf: destination) == Self.replacement)
    }

    // MARK: - Real file systems

    @Test("A real full tmpfs reports ENOSPC and keeps the old file", .enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
    func realDiskFull() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let tmpfs = try Tmpfs.mount(in: scratch, name: "tiny", sizeKiB: 64)
        defer { tmpfs.unmount() }
        let mountPoint = tmpfs.url
        let destination = mountPoint.appendingPathComponent("store.graph")
        try AtomicFile.write(Self.previous, to: destination)

        #expect(throws: FileLayerError.io("write", path: destination.path, errno: ENOSPC)) {
            try AtomicFile.write(Self.replacement, to: destination)
        }
        #expect(try Data(contentsOf: destination) == Self.previous)
        #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint.path) == ["store.graph"])

        let fits = SplitMix64.bytes(20_000, seed: 3)
        try AtomicFile.write(fits, to: destination)
        #expect(try Data(contentsOf: destination) == fits)
    }

    @Test("A directory without write permission is refused with EACCES and the old file stays", .enabled(if: geteuid() != 0, "root ignores permission bits"))
    func readOnlyDirectory() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let directory = scratch.file("ro")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        let destination = directory.appendingPathComponent("store.graph")
        try AtomicFile.write(Self.previous, to: destination)
        #expect(chmod(directory.path, 0o500) == 0)

        #expect(throws: FileLayerError.io("open", path: destination.path, errno: EACCES)) {
            try AtomicFile.write(Self.replacement, to: destination)
        }
        #expect(try Data(contentsOf: destination) == Self.previous)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["store.graph"])
    }

    @Test("A read-only mount is refused with EROFS, also for root, and the old file stays", .enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
    func readOnlyMount() async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let tmpfs = try Tmpfs.mount(in: scratch, name: "ro", sizeKiB: 256)
        defer { tmpfs.unmount() }
        let directory = tmpfs.url
        let destination = directory.appendingPathComponent("store.graph")
        try AtomicFile.write(Self.previous, to: destination)
        // Retries while a child process spawned by another suite still holds a copy of a
        // descriptor on the mount.
        let failure = await tmpfs.remount(readOnly: true)
        try #require(failure == nil, "remounting read-only: errno \(failure ?? 0)")

        #expect(throws: FileLayerError.io("open", path: destination.path, errno: EROFS)) {
            try AtomicFile.write(Self.replacement, to: destination)
        }
        #expect(try Data(contentsOf: destination) == Self.previous)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["store.graph"])
    }

    // MARK: - Helpers

    static func inode(_ url: URL) throws -> UInt64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return try #require((attributes[.systemFileNumber] as? NSNumber)?.uint64Value)
    }
}
