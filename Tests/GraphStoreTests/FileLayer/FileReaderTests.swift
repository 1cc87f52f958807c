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

// MARK: - FileReader

@Suite("FileReader reads whole files and tells absence from failure")
struct FileReaderTests {

    @Test("A missing file, or a missing parent directory, reads as nil")
    func missingFile() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        #expect(try FileReader.readFile(at: scratch.file("absent")) == nil)
        #expect(try FileReader.readFile(at: scratch.file("absent-dir/absent")) == nil)
    }

    @Test("Existing files read back exactly, including empty ones")
    func existingFiles() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let empty = scratch.file("empty")
        try Data().write(to: empty)
        #expect(try FileReader.readFile(at: empty) == Data())

        let large = SplitMix64.bytes(3_000_000)
        let file = scratch.file("large")
        try large.write(to: file)
        #expect(try FileReader.readFile(at: file) == large)
    }

    @Test("EINTR during reads is retried")
    func interruptedReads() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let data = SplitMix64.bytes(100_000)
        let file = scratch.file("data")
        try data.write(to: file)
        let fileSystem = FaultInjectingFileSystem()
        fileSystem.inject(.interruptions)
        #expect(try FileReader.readFile(at: file, fileSystem: fileSystem) == data)
        #expect(fileSystem.statistics.injectedFailures > 0)
    }

    @Test("A directory is reported as EISDIR")
    func directory() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        #expect(throws: FileLayerError.io("read", path: scratch.url.path, errno: EISDIR)) {
            try FileReader.readFile(at: scratch.url)
        }
    }

    @Test("A path through a regular file is reported as ENOTDIR, not as absent")
    func notADirectory() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let file = scratch.file("plain")
        try Data("x".utf8).write(to: file)
        let inside = file.appendingPathComponent("child")
        #expect(throws: FileLayerError.io("open", path: inside.path, errno: ENOTDIR)) {
            try FileReader.readFile(at: inside)
        }
    }

    @Test("Injected EACCES on open and EIO on read are reported with the path")
    func injectedFailures() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let file = scratch.file("data")
        try Data("payload".utf8).write(to: file)
        let fileSystem = FaultInjectingFileSystem()

        fileSystem.inject(.open(errno: EACCES))
        #expect(throws: FileLayerError.io("open", path: file.path, errno: EACCES)) {
            try FileReader.readFile(at: file, fileSystem: fileSystem)
        }
        fileSystem.clearFaults()
        fileSystem.inject(.read(errno: EIO))
        #expect(throws: FileLayerError.io("read", path: file.path, errno: EIO)) {
            try FileReader.readFile(at: file, fileSystem: fileSystem)
        }
        fileSystem.clearFaults()
        #expect(try FileReader.readFile(at: file, fileSystem: fileSystem) == Data("payload".utf8))
    }

    /// Opening a device can act (a tape rewinds, a terminal becomes the controlling one), and
    /// opening a pipe for reading waits for a writer: what `stat` shows is no regular file is
    /// refused without being opened, naming it.
    @Test("A pipe or a device is refused without being opened", .timeLimit(.minutes(1)))
    func specialFilesAreNotOpened() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let pipe = scratch.file("pipe")
        try #require(mkfifo(pipe.path, 0o600) == 0)
        for url in [pipe, URL(fileURLWithPath: "/dev/null")] {
            let fileSystem = FaultInjectingFileSystem()
            let error = #expect(throws: FileLayerError.self) { try FileReader.readFile(at: url, fileSystem: fileSystem) }
            #expect(error.map { "\($0)" }?.contains("not a regular file") == true, "\(String(describing: error))")
            #expect(error.map { "\($0)" }?.contains(url.path) == true, "\(String(describing: error))")
            #expect(fileSystem.statistics.openedPaths.isEmpty, "\(url.path) was opened")
        }
    }
}
