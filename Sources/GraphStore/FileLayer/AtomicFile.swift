import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - AtomicFile

/// Crash-safe replacement of a whole file.
///
/// The data goes to a new temporary file in the destination's directory,
/// which is flushed with `fsync`, renamed over the destination and made
/// durable by `fsync`ing the directory. Readers see either the complete old
/// file or the complete new one, never a mixture, and a crash or a full disk
/// leaves the old file untouched.
package enum AtomicFile {

    // MARK: - Writing

    /// Atomically replaces (or creates) the file at `url` with `data`.
    ///
    /// Steps: create `.<name>.tmp-<pid>-<random>` beside the destination
    /// (`O_EXCL`), write all bytes (completing short writes and retrying
    /// `EINTR`), `fsync`, `close`, `rename` over the destination, `fsync` the
    /// directory. On failure before the rename the temporary file is removed
    /// and the destination is unchanged. A failure of the final directory
    /// `fsync` is still thrown: the new contents are then visible but may not
    /// survive a power loss. File systems that cannot sync directories
    /// (`EINVAL`) are accepted.
    ///
    /// The new file keeps the owner, group and permission bits of the file it replaces
    /// (``FileOwnership``): a store made private stays private. A file that did not exist takes
    /// those of `companion` when that file exists (a copy kept beside a store takes the
    /// store's), else ``FileOwnership/defaultPermissions`` narrowed by the umask.
    ///
    /// ```swift
    /// try AtomicFile.write(bytes, to: storeURL)                       // keeps the store's mode
    /// try AtomicFile.write(old, to: backupURL, companion: storeURL.path)  // takes the store's
    /// ```
    ///
    /// - Parameters:
    ///   - data: The complete new contents.
    ///   - url: A file URL; its directory must exist.
    ///   - companion: The file whose ownership a new file takes, when `url` does not exist.
    ///   - fileSystem: The system-call seam; tests inject faults here.
    /// - Throws: ``FileLayerError/io(operation:path:errno:message:)`` whose
    ///   `operation` is `"open"`, `"write"`, `"fsync"`, `"close"`, `"rename"`
    ///   or `"fsync directory"` and whose `path` is always the destination
    ///   path (`url.path`), for example `ENOSPC`, `EACCES`, `EROFS`, `EDQUOT`.
    /// - Complexity: O(n) in `data.count`, plus two device flushes.
    static func write(
        _ data: Data,
        to url: URL,
        companion: String? = nil,
        fileSystem: any FileSystem = PosixFileSystem()
    ) throws(FileLayerError) {
        let destination = url.path
        let directory = url.deletingLastPathComponent().path
        let ownership = FileOwnership(ofFileAt: destination, orElseOf: companion)
        let (temporary, descriptor) = try createTemporaryFile(
            for: url, permissions: ownership?.permissions ?? FileOwnership.defaultPermissions, fileSystem: fileSystem)
        ownership?.apply(to: descriptor)

        var step = "write"
        do throws(SystemCallError) {
            try data.withUnsafeBytesTyped { (bytes) throws(SystemCallError) in
                try writeAll(bytes, to: descriptor, fileSystem: fileSystem)
            }
            step = "fsync"
            try retryingInterrupts { () throws(SystemCallError) in try fileSystem.fsync(descriptor) }
        } catch {
            try? fileSystem.close(descriptor)
            try? fileSystem.unlink(temporary)
            throw .io(step, path: destination, errno: error.code)
        }
        do throws(SystemCallError) {
            step = "close"
            try fileSystem.close(descriptor)
            step = "rename"
            try fileSystem.rename(temporary, to: destination)
        } catch {
            try? fileSystem.unlink(temporary)
            throw .io(step, path: destination, errno: error.code)
        }
        do throws(SystemCallError) {
            try fileSystem.syncDirectory(directory)
        } catch where error.code == EINVAL {
            // The file system does not support syncing directories.
        } catch {
            throw .io("fsync directory", path: destination, errno: error.code)
        }
    }

    // MARK: - Temporary names

    /// Prefix shared by every temporary file for `url`: `.<name>.tmp-`.
    ///
    /// - Complexity: O(length of the name).
    static func temporaryPrefix(for url: URL) -> String {
        ".\(url.lastPathComponent).tmp-"
    }

    /// Whether `suffix` is `<pid>-<hex>`, how the temporary names of this package's writers end
    /// (this type's, and the journal's file creation).
    ///
    /// - Complexity: O(length of the suffix).
    package static func isTemporarySuffix(_ suffix: Substring) -> Bool {
        let parts = suffix.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 2 && Int32(parts[0]) != nil && UInt64(parts[1], radix: 16) != nil
    }

    /// Removes from `directory` what killed writers left: the files called one of `names`,
    /// those whose name is one of `temporaryPrefixes` followed by `<pid>-<hex>`, and those
    /// `alsoMatching` accepts. Never another file. Call it only while holding the store's lock,
    /// when no other writer can be at work. Best effort.
    ///
    /// - Complexity: one listing of the directory.
    static func removeLeftovers(
        in directory: URL, named names: Set<String>, temporaryPrefixes: [String], alsoMatching: (String) -> Bool = { _ in false }
    ) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for entry in entries {
            let isLeftover = names.contains(entry) || temporaryPrefixes.contains { prefix in
                entry.hasPrefix(prefix) && isTemporarySuffix(entry.dropFirst(prefix.count))
            } || alsoMatching(entry)
            if isLeftover { unlink(directory.appendingPathComponent(entry).path) }
        }
    }

    // MARK: - Private helpers

    /// Creates a fresh temporary file beside `url`, retrying on the
    /// (practically impossible) collision of random names.
    private static func createTemporaryFile(
        for url: URL, permissions: mode_t, fileSystem: any FileSystem
    ) throws(FileLayerError) -> (path: String, descriptor: Int32) {
        let directory = url.deletingLastPathComponent()
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC
        var attempts = 0
        while true {
            let random = String(UInt64.random(in: 0...UInt64.max), radix: 16)
            let name = "\(temporaryPrefix(for: url))\(getpid())-\(random)"
            let path = directory.appendingPathComponent(name).path
            do throws(SystemCallError) {
                let descriptor = try retryingInterrupts { () throws(SystemCallError) in
                    try fileSystem.open(path, flags: flags, permissions: permissions)
                }
                return (path, descriptor)
            } catch where error.code == EEXIST && attempts < 8 {
                attempts += 1
            } catch {
                throw .io("open", path: url.path, errno: error.code)
            }
        }
    }

    /// Writes every byte of `bytes`, completing short writes and retrying
    /// `EINTR`. A write that makes no progress is reported as `EIO`.
    private static func writeAll(
        _ bytes: UnsafeRawBufferPointer, to descriptor: Int32, fileSystem: any FileSystem
    ) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + (1 << 30))
            let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
            let written = try retryingInterrupts { () throws(SystemCallError) in
                try fileSystem.write(descriptor, from: slice)
            }
            guard written > 0 else { throw SystemCallError(EIO) }
            offset += written
        }
    }
}
