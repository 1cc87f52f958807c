import Foundation
import Testing

@testable import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Scratch directory

/// A fresh, uniquely named directory under the temporary directory; call
/// ``remove()`` (typically in a `defer`) when the test ends.
struct FileLayerScratch {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("graphstore-filelayer-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A URL for `name` inside the directory.
    func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    /// The names in the directory, sorted; hidden files included.
    func entries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    /// Deletes the directory and everything in it.
    func remove() {
        _ = chmod(url.path, 0o700)
        try? FileManager.default.removeItem(at: url)
    }
}

// MARK: - Deterministic data

enum FileLayerFixtures {
    /// `count` pseudo-random bytes from a fixed seed (SplitMix64).
    static func randomBytes(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Data {
        var state = seed
        var words = [UInt64](repeating: 0, count: (count + 7) / 8)
        for index in words.indices {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            words[index] = z ^ (z >> 31)
        }
        return words.withUnsafeBytes { Data($0.prefix(count)) }
    }

    /// JSON-like, highly compressible text of at least `count` bytes.
    static func compressibleText(atLeast count: Int) -> Data {
        var text = "["
        var index = 0
        while text.utf8.count < count {
            text += #"{"id":\#(index),"kind":"node","name":"item-\#(index % 977)","edges":[\#(index &* 7 % 50_000)]},"#
            text += "\n"
            index += 1
        }
        return Data((text + "{}]").utf8)
    }
}

// MARK: - Child processes

enum FileLayerProcess {
    /// Runs `arguments` through `/usr/bin/env` with standard input empty and
    /// returns the exit status and everything written to standard output.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data)
    }

    /// Decompresses the gzip file at `url` with Python's `gzip` module.
    static func pythonGunzip(_ url: URL) throws -> Data {
        let script = #"import gzip,sys; sys.stdout.buffer.write(gzip.decompress(open(sys.argv[1],"rb").read()))"#
        let result = try run(["python3", "-c", script, url.path])
        try #require(result.status == 0, "python3 gzip.decompress failed")
        return result.output
    }
}

// MARK: - Tmpfs mounts

/// Small tmpfs mounts for real `ENOSPC` and `EROFS` failures. Mounting needs
/// privileges; every helper reports whether it worked instead of failing.
enum FileLayerTmpfs {
    /// Mounts a tmpfs limited to `sizeKiB` at `directory`.
    static func mount(at directory: URL, sizeKiB: Int) -> Bool {
        #if os(Linux)
        return Glibc.mount("tmpfs", directory.path, "tmpfs", 0, "size=\(sizeKiB)k,mode=0755") == 0
        #else
        return false
        #endif
    }

    /// Remounts the tmpfs at `directory` read-only.
    static func remountReadOnly(at directory: URL, sizeKiB: Int) -> Bool {
        #if os(Linux)
        let flags = UInt(MS_REMOUNT) | UInt(MS_RDONLY)
        return Glibc.mount("tmpfs", directory.path, "tmpfs", flags, "size=\(sizeKiB)k") == 0
        #else
        return false
        #endif
    }

    /// Unmounts `directory`, detaching lazily if it is still busy.
    static func unmount(at directory: URL) {
        #if os(Linux)
        if umount2(directory.path, 0) != 0 {
            _ = umount2(directory.path, Int32(MNT_DETACH))
        }
        #endif
    }
}

// MARK: - Error matching

extension FileLayerError {
    /// The errno of an `.io` error, else `nil`.
    var ioErrno: Int32? {
        if case let .io(_, _, code, _) = self { code } else { nil }
    }

    /// The operation of an `.io` error, else `nil`.
    var ioOperation: String? {
        if case let .io(operation, _, _, _) = self { operation } else { nil }
    }

    /// The path of an `.io` error, else `nil`.
    var ioPath: String? {
        if case let .io(_, path, _, _) = self { path } else { nil }
    }
}
