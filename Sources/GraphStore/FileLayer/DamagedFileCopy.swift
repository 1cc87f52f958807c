import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps a damaged file for inspection before recovery goes on without it.
enum DamagedFileCopy {
    /// `<prefix>-<unix time>`, with `-2`, `-3`… when a file of that name exists: a name for a
    /// file set aside.
    static func freeName(_ prefix: String) -> String {
        let stamp = prefix + "-\(Int(Date().timeIntervalSince1970))"
        var name = stamp
        var attempt = 1
        while FileManager.default.fileExists(atPath: name) {
            attempt += 1
            name = stamp + "-\(attempt)"
        }
        return name
    }

    /// Copies the file at `path` to `<path>.damaged-<unix time>`, with `-2`, `-3`… when an
    /// earlier recovery took that name, and makes the copy durable (the file, then its
    /// directory entry) before returning its path: recovery goes on to cut or replace the
    /// original, and what only the damaged file held (the records after a damaged one) must
    /// survive a power loss in the copy. The copy holds the same data, so it takes the owner,
    /// group and permission bits of the file (``FileOwnership``), whatever the umask.
    ///
    /// - Throws: the file manager's error when the copy cannot be made, ``SystemCallError``
    ///   when it cannot be synced (the copy is then removed).
    /// - Complexity: O(file size), plus two fsyncs.
    static func keep(_ path: String, fileSystem: any FileSystem = PosixFileSystem()) throws -> String {
        let aside = freeName(path + ".damaged")
        try FileManager.default.copyItem(atPath: path, toPath: aside)
        do throws(SystemCallError) {
            let descriptor = try fileSystem.open(aside, flags: O_RDONLY | O_CLOEXEC, permissions: 0)
            defer { try? fileSystem.close(descriptor) }
            FileOwnership(ofFileAt: path)?.apply(to: descriptor)
            try fileSystem.fsync(descriptor)
            do {
                try fileSystem.syncDirectory(URL(fileURLWithPath: aside).deletingLastPathComponent().path)
            } catch where error.code == EINVAL {
                // The file system does not sync directories.
            }
        } catch {
            try? FileManager.default.removeItem(atPath: aside)
            throw error
        }
        return aside
    }
}
