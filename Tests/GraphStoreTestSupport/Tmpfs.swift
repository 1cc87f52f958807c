import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small tmpfs mounted on a directory, for a real `ENOSPC` and `EROFS`.
///
/// Mounting needs root on Linux: gate a test on ``isSupported`` so that it reports as skipped,
/// rather than passing, where it cannot run.
///
/// ```swift
/// @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
/// func fullDisk() throws {
///     let directory = try TemporaryDirectory()
///     defer { directory.remove() }
///     let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 256)
///     defer { tmpfs.unmount() }
///     _ = try tmpfs.fillUp()
/// }
/// ```
public final class Tmpfs: Sendable {
    /// The mount point.
    public let url: URL
    public let sizeKiB: Int

    /// Whether this run can mount a tmpfs: on Linux, as root.
    public static var isSupported: Bool {
        #if os(Linux)
        geteuid() == 0
        #else
        false
        #endif
    }

    /// Why a test gated on ``isSupported`` was skipped.
    public static let requirement: Comment = "mounting a tmpfs needs root on Linux"

    private init(url: URL, sizeKiB: Int) {
        self.url = url
        self.sizeKiB = sizeKiB
    }

    /// Mounts a tmpfs of `sizeKiB` on a new folder `name` of `directory`.
    ///
    /// - Throws: ``MountFailure`` with the errno when the system refuses (see ``isSupported``).
    public static func mount(in directory: TemporaryDirectory, name: String = "tmpfs", sizeKiB: Int) throws -> Tmpfs {
        let mountPoint = directory.file(name)
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        #if os(Linux)
        if Glibc.mount("tmpfs", mountPoint.path, "tmpfs", 0, "size=\(sizeKiB)k,mode=0755") == 0 {
            return Tmpfs(url: mountPoint, sizeKiB: sizeKiB)
        }
        throw MountFailure(path: mountPoint.path, errno: errno)
        #else
        throw MountFailure(path: mountPoint.path, errno: ENOSYS)
        #endif
    }

    /// A tmpfs that could not be mounted.
    public struct MountFailure: Error, CustomStringConvertible {
        public let path: String
        public let errno: Int32
        public var description: String { "mounting a tmpfs on \(path) failed with errno \(errno)" }
    }

    /// Writes zeros to the file `name` in the tmpfs until it is full; returns the file's URL
    /// (remove it to make room again).
    public func fillUp(with name: String = "filler") throws -> URL {
        let file = url.appendingPathComponent(name)
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                try #require(errno == ENOSPC, "filling up: errno \(errno)")
                return file
            }
        }
    }

    /// Removes a file ``fillUp(with:)`` made and returns once its space is free again.
    ///
    /// Other suites spawn processes meanwhile, and a child holds a copy of every descriptor of
    /// the parent between its fork and its exec, the filler's among them if it was forked while
    /// the filler was being written: until that copy closes, tmpfs keeps the removed file's
    /// pages. So the free space is watched (for up to ten seconds) rather than assumed.
    public func removeFiller(_ file: URL) throws {
        let size = ((try FileManager.default.attributesOfItem(atPath: file.path))[.size] as? NSNumber)?.intValue ?? 0
        let before = freeBytes()
        try FileManager.default.removeItem(at: file)
        let deadline = ContinuousClock.now + .seconds(10)
        while freeBytes() < before + size - 4096, ContinuousClock.now < deadline {
            usleep(1_000)
        }
    }

    /// The bytes free on the mount.
    private func freeBytes() -> Int {
        var stats = statvfs()
        guard statvfs(url.path, &stats) == 0 else { return 0 }
        return Int(stats.f_bavail) * Int(stats.f_frsize)
    }

    /// Remounts read-only (`true`) or read-write; returns the errno on failure.
    ///
    /// A read-only remount fails with EBUSY while any process holds a file on the mount open for
    /// writing. Other suites spawn processes concurrently, and a child holds copies of the
    /// parent's descriptors until it execs (close-on-exec closes them only then), so EBUSY is
    /// retried for up to two seconds before it counts as a failure, on a thread of its own
    /// rather than one of the cooperative pool.
    @discardableResult
    public func remount(readOnly: Bool) async -> Int32? {
        do {
            return try await offCooperativePool { self.remountBlocking(readOnly: readOnly) }
        } catch {
            preconditionFailure("remounting throws nothing: \(error)")
        }
    }

    private func remountBlocking(readOnly: Bool) -> Int32? {
        #if os(Linux)
        var flags = UInt(MS_REMOUNT)
        if readOnly { flags |= UInt(MS_RDONLY) }
        for _ in 0..<200 {
            if Glibc.mount("tmpfs", url.path, "tmpfs", flags, "size=\(sizeKiB)k") == 0 { return nil }
            let failure = errno
            guard failure == EBUSY else { return failure }
            usleep(10_000)
        }
        return EBUSY
        #else
        return ENOSYS
        #endif
    }

    /// Unmounts, detaching lazily if still busy.
    public func unmount() {
        #if os(Linux)
        if umount2(url.path, 0) != 0 { _ = umount2(url.path, Int32(MNT_DETACH)) }
        #endif
    }
}
