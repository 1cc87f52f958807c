#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - SystemCallError

/// A failed system call, carrying the `errno` it set.
package struct SystemCallError: Error, Sendable, Equatable {
    /// The `errno` value, for example `ENOSPC`.
    package let code: Int32

    package init(_ code: Int32) {
        self.code = code
    }

    /// What the system says of the code, and the code: "Permission denied (errno 13)".
    package var message: String { "\(String(cString: strerror(code))) (errno \(code))" }
}

// MARK: - FileStatus

/// The part of `stat` / `fstat` the file layer uses.
package struct FileStatus: Sendable, Equatable {
    /// Size in bytes.
    package var size: Int
    /// Whether the descriptor refers to a directory.
    package var isDirectory: Bool
    /// Whether it is a regular file: not a directory, pipe, device or socket, whose reading
    /// could block or never end.
    package var isRegular: Bool
    /// The device and inode, which name the file whatever path (link, hard link) reaches it.
    package var device: UInt64
    package var inode: UInt64

    /// The fields of a `stat` result.
    init(_ info: stat) {
        size = Int(info.st_size)
        isDirectory = info.st_mode & S_IFMT == S_IFDIR
        isRegular = info.st_mode & S_IFMT == S_IFREG
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// The status of the file at `path` through symbolic links (the file that opening `path`
    /// reads, where `FileManager`'s attributes describe a link itself), or the `errno` of
    /// `stat(2)`.
    package static func of(path: String) -> Result<FileStatus, SystemCallError> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(SystemCallError(errno)) }
        return .success(FileStatus(info))
    }

    /// The size of the file at `path` through symbolic links, or `nil` when there is none (or
    /// it cannot be examined).
    package static func size(atPath path: String) -> Int? {
        try? of(path: path).get().size
    }

    /// Why this file cannot be read as a regular one, or `nil` when it is one: "it is a
    /// directory, not a file", or "it is not a regular file (a pipe, a device or a socket)"
    /// (whose reading could block or never end).
    package var irregularity: String? {
        if isRegular { return nil }
        return isDirectory ? "it is a directory, not a file" : "it is not a regular file (a pipe, a device or a socket)"
    }

    /// Whether this and `other` are one file (the same device and inode).
    package func isSameFile(as other: FileStatus) -> Bool {
        device == other.device && inode == other.inode
    }
}

// MARK: - FileSystem

/// The few POSIX file operations the file layer performs, behind a seam so
/// tests can inject failures such as a full disk. Package access: the fakes live in the test
/// support target, not in the library.
///
/// Each method performs **one** system call (or, for ``syncDirectory(_:)``,
/// open + fsync + close) and reports failure as ``SystemCallError``; it does
/// not retry `EINTR` or complete short transfers. Callers own that policy.
package protocol FileSystem: Sendable {
    /// `open(2)`; returns the new descriptor.
    ///
    /// - Throws: ``SystemCallError`` with `open`'s errno.
    /// - Complexity: One system call.
    func open(_ path: String, flags: Int32, permissions: mode_t) throws(SystemCallError) -> Int32

    /// `read(2)` into `buffer`; returns the byte count, 0 at end of file.
    ///
    /// - Throws: ``SystemCallError`` (including `EINTR`).
    /// - Complexity: One system call.
    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int

    /// `write(2)` from `buffer`; returns the byte count, which may be short.
    ///
    /// - Throws: ``SystemCallError`` (including `EINTR`).
    /// - Complexity: One system call.
    func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int

    /// `fstat(2)`.
    ///
    /// - Throws: ``SystemCallError``.
    /// - Complexity: One system call.
    func status(_ descriptor: Int32) throws(SystemCallError) -> FileStatus

    /// `fsync(2)`.
    ///
    /// - Throws: ``SystemCallError`` (including `EINTR`).
    /// - Complexity: One system call; waits for the device.
    func fsync(_ descriptor: Int32) throws(SystemCallError)

    /// `fdatasync(2)` where there is one (`fsync(2)` elsewhere): the file's bytes and size reach
    /// the device, without metadata such as its modification time. The default is ``fsync(_:)``.
    ///
    /// - Throws: ``SystemCallError`` (including `EINTR`).
    /// - Complexity: One system call; waits for the device.
    func dataSync(_ descriptor: Int32) throws(SystemCallError)

    /// `close(2)`. The descriptor is released even when this throws.
    ///
    /// - Throws: ``SystemCallError``.
    /// - Complexity: One system call.
    func close(_ descriptor: Int32) throws(SystemCallError)

    /// `rename(2)`, atomically replacing `destination`.
    ///
    /// - Throws: ``SystemCallError``.
    /// - Complexity: One system call.
    func rename(_ source: String, to destination: String) throws(SystemCallError)

    /// `unlink(2)`.
    ///
    /// - Throws: ``SystemCallError``.
    /// - Complexity: One system call.
    func unlink(_ path: String) throws(SystemCallError)

    /// Opens the directory at `path` read-only, `fsync`s it so a completed
    /// rename inside it is durable, and closes it.
    ///
    /// - Throws: ``SystemCallError`` from the first step that failed.
    /// - Complexity: Three system calls; waits for the device.
    func syncDirectory(_ path: String) throws(SystemCallError)
}

extension FileSystem {
    package func dataSync(_ descriptor: Int32) throws(SystemCallError) {
        try fsync(descriptor)
    }
}

// MARK: - Retrying interrupted calls

/// Runs `call` again for as long as it fails with `EINTR`: the policy ``FileSystem`` leaves
/// to its callers, in one place for the whole file layer.
///
/// - Throws: the first ``SystemCallError`` that is not `EINTR`.
func retryingInterrupts<T>(_ call: () throws(SystemCallError) -> T) throws(SystemCallError) -> T {
    while true {
        do throws(SystemCallError) {
            return try call()
        } catch where error.code == EINTR {
            continue
        }
    }
}

// MARK: - PosixFileSystem

/// The real file system, through the C library.
package struct PosixFileSystem: FileSystem {

    package init() {}

    package func open(_ path: String, flags: Int32, permissions: mode_t) throws(SystemCallError) -> Int32 {
        let descriptor = systemOpen(path, flags, permissions)
        guard descriptor >= 0 else { throw SystemCallError(errno) }
        return descriptor
    }

    package func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        let count = systemRead(descriptor, buffer.baseAddress, buffer.count)
        guard count >= 0 else { throw SystemCallError(errno) }
        return count
    }

    package func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        let count = systemWrite(descriptor, buffer.baseAddress, buffer.count)
        guard count >= 0 else { throw SystemCallError(errno) }
        return count
    }

    package func status(_ descriptor: Int32) throws(SystemCallError) -> FileStatus {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SystemCallError(errno) }
        return FileStatus(info)
    }

    package func fsync(_ descriptor: Int32) throws(SystemCallError) {
        guard systemFsync(descriptor) == 0 else { throw SystemCallError(errno) }
    }

    package func dataSync(_ descriptor: Int32) throws(SystemCallError) {
        #if os(Linux)
        guard fdatasync(descriptor) == 0 else { throw SystemCallError(errno) }
        #else
        guard systemFsync(descriptor) == 0 else { throw SystemCallError(errno) }
        #endif
    }

    package func close(_ descriptor: Int32) throws(SystemCallError) {
        guard systemClose(descriptor) == 0 else { throw SystemCallError(errno) }
    }

    package func rename(_ source: String, to destination: String) throws(SystemCallError) {
        guard systemRename(source, destination) == 0 else { throw SystemCallError(errno) }
    }

    package func unlink(_ path: String) throws(SystemCallError) {
        guard systemUnlink(path) == 0 else { throw SystemCallError(errno) }
    }

    package func syncDirectory(_ path: String) throws(SystemCallError) {
        let descriptor = systemOpen(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard descriptor >= 0 else { throw SystemCallError(errno) }
        defer { _ = systemClose(descriptor) }
        while systemFsync(descriptor) != 0 {
            let code = errno
            guard code == EINTR else { throw SystemCallError(code) }
        }
    }
}

// MARK: - C library entry points

// The protocol's method names shadow the C functions inside conforming types, so the C
// functions are reached through these aliases. At file scope the names are the C library's,
// whichever module (Glibc or Darwin) supplies them.

private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(descriptor, buffer, count) }
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(descriptor, buffer, count) }
private func systemFsync(_ descriptor: Int32) -> Int32 { fsync(descriptor) }
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
private func systemRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }
private func systemUnlink(_ path: String) -> Int32 { unlink(path) }
