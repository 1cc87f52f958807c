import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open journal file: appends go to its end (`O_APPEND`). The descriptor is closed when
/// the last reference goes, so a background fsync that still holds an old file after a
/// rotation never touches a reused descriptor.
final class JournalFile: Sendable {
    let path: String
    private let descriptor: Int32

    /// Opens the existing file at `path` for appending.
    ///
    /// - Throws: ``SystemCallError`` from `open(2)`.
    init(appendingTo path: String) throws(SystemCallError) {
        self.path = path
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCallError(errno) }
        self.descriptor = descriptor
    }

    deinit {
        _ = close(descriptor)
    }

    /// Writes every byte of `bytes` at the end of the file, completing short writes and
    /// retrying `EINTR`.
    ///
    /// - Throws: ``SystemCallError`` (for example `ENOSPC`); some bytes may have been written.
    func append(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, min(bytes.count - offset, 1 << 30))
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(errno)
            }
            guard written > 0 else { throw SystemCallError(EIO) }
            offset += written
        }
    }

    /// Cuts the file to `size` bytes.
    ///
    /// - Throws: ``SystemCallError`` from `ftruncate(2)`.
    func truncate(to size: Int) throws(SystemCallError) {
        while ftruncate(descriptor, off_t(size)) != 0 {
            guard errno == EINTR else { throw SystemCallError(errno) }
        }
    }

    /// `fdatasync(2)`: the file's bytes (and its size) reach the device.
    ///
    /// - Parameter fileSystem: The system-call seam; tests inject failing fsyncs here.
    /// - Throws: ``SystemCallError``.
    /// - Complexity: waits for the device.
    func sync(using fileSystem: any FileSystem = PosixFileSystem()) throws(SystemCallError) {
        try retryingInterrupts { () throws(SystemCallError) in try fileSystem.dataSync(descriptor) }
    }

    /// Creates `path` holding `header` followed by `body`, durably: written under a temporary
    /// name, fsynced, renamed over `path`, and the directory fsynced. Returns the new file,
    /// open for appending.
    ///
    /// The journal holds the store's saves, so it takes the owner, group and permission bits of
    /// the store file it belongs to (``JournalReplay/storePath(forJournalFileAt:)``, see
    /// ``FileOwnership``); without a store file, ``FileOwnership/defaultPermissions`` narrowed by
    /// the umask.
    ///
    /// - Throws: ``SystemCallError`` with the step that failed in `operation`.
    static func create(at path: String, contents: [UInt8], copying source: (path: String, range: Range<Int>)? = nil) throws -> JournalFile {
        let temporary = path + ".tmp-\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        let ownership = JournalReplay.storePath(forJournalFileAt: path).flatMap(FileOwnership.init(ofFileAt:))
        var step = "create"
        do throws(SystemCallError) {
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, ownership?.permissions ?? FileOwnership.defaultPermissions)
            guard descriptor >= 0 else { throw SystemCallError(errno) }
            ownership?.apply(to: descriptor)
            let file = JournalFile(adopting: descriptor, path: temporary)
            step = "write"
            try file.append(contents)
            if let source {
                step = "copy records into"
                try file.copy(from: source.path, range: source.range)
            }
            step = "fsync"
            try file.sync()
            step = "rename"
            guard rename(temporary, path) == 0 else { throw SystemCallError(errno) }
            step = "fsync the directory of"
            try syncDirectory(of: path)
            return try JournalFile(appendingTo: path)
        } catch {
            _ = unlink(temporary)
            throw FileLayerError.io(step, path: path, errno: error.code)
        }
    }

    /// Appends the bytes `range` of the file at `path`.
    func copy(from path: String, range: Range<Int>) throws(SystemCallError) {
        guard !range.isEmpty else { return }
        let source = open(path, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw SystemCallError(errno) }
        defer { _ = close(source) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(range.count, 1 << 20), alignment: 1)
        defer { buffer.deallocate() }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let read = pread(source, buffer.baseAddress, min(buffer.count, range.upperBound - offset), off_t(offset))
            if read < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(errno)
            }
            guard read > 0 else { throw SystemCallError(EIO) }
            try append(UnsafeRawBufferPointer(rebasing: buffer[0..<read]))
            offset += read
        }
    }

    /// Writes every byte of `bytes` at the end of the file.
    ///
    /// - Throws: as ``append(_:)-(UnsafeRawBufferPointer)``.
    func append(_ bytes: [UInt8]) throws(SystemCallError) {
        var failure: SystemCallError?
        bytes.withUnsafeBytes { raw in
            do throws(SystemCallError) { try append(raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Removes `path` and makes the removal durable.
    static func remove(_ path: String) throws(SystemCallError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw SystemCallError(errno) }
        try syncDirectory(of: path)
    }

    /// fsyncs the directory holding `path` (file systems that cannot are accepted).
    static func syncDirectory(of path: String) throws(SystemCallError) {
        do {
            try PosixFileSystem().syncDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path)
        } catch where error.code == EINVAL {
            // The file system does not sync directories.
        }
    }

    private init(adopting descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }
}
