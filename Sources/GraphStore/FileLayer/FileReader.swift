import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - FileReader

/// Reads whole files, distinguishing "does not exist" from real errors.
package enum FileReader {

    // MARK: - Reading

    /// The complete contents of the file at `url`, or `nil` if no file
    /// exists there (`ENOENT`).
    ///
    /// The buffer is sized from `fstat` up front and grows if the file turns
    /// out longer; reads retry `EINTR` and continue until end of file.
    ///
    /// - Parameters:
    ///   - url: A file URL.
    ///   - fileSystem: The system-call seam; tests inject faults here.
    /// - Throws: ``FileLayerError/io(operation:path:errno:message:)`` with
    ///   operation `"open"`, `"stat"` or `"read"` and `path` set to
    ///   `url.path`, for example `EACCES`, `EISDIR` (a directory; reported
    ///   the same way on every platform), `ENOTDIR` or `EIO`, and `EINVAL` with its own message
    ///   for a pipe, device or socket (refused before it is opened, as far as `stat` can tell,
    ///   and else opened without blocking and refused before any read: a pipe would block the
    ///   read until some writer came, a device might never end);
    ///   ``FileLayerError/outOfMemory(requestedBytes:)``.
    /// - Complexity: O(n) for a file of n bytes; one allocation when the size
    ///   does not change while reading.
    static func readFile(at url: URL, fileSystem: any FileSystem = PosixFileSystem()) throws(FileLayerError) -> Data? {
        let path = url.path
        // A pipe, device or socket is refused before it is opened: opening a device can act
        // (a tape rewinds, a terminal becomes the process's controlling one). The descriptor's
        // own status is checked again below, for a file swapped in meanwhile.
        let status = try? FileStatus.of(path: path).get()
        if let status, !status.isDirectory, let irregularity = status.irregularity {
            throw .io(operation: "read", path: path, errno: EINVAL, message: irregularity)
        }
        let descriptor: Int32
        do throws(SystemCallError) {
            descriptor = try retryingInterrupts { () throws(SystemCallError) in
                // Without blocking: opening a named pipe for reading waits for a writer.
                do throws(SystemCallError) {
                    return try fileSystem.open(path, flags: O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, permissions: 0)
                } catch where error.code == EWOULDBLOCK && status?.isRegular == true {
                    // A regular file under a lease another process holds (a file server's):
                    // wait for it, as an open without the flag does.
                    return try fileSystem.open(path, flags: O_RDONLY | O_CLOEXEC | O_NOCTTY, permissions: 0)
                }
            }
        } catch where error.code == ENOENT {
            return nil
        } catch {
            throw .io("open", path: path, errno: error.code)
        }
        defer { try? fileSystem.close(descriptor) }
        return try readAll(from: descriptor, path: path, fileSystem: fileSystem)
    }

    /// The complete contents of the file open at `descriptor` (from its current offset, which
    /// is its start for a descriptor just opened); the descriptor is left open.
    ///
    /// - Throws: as ``readFile(at:fileSystem:)``, with operation `"stat"` or `"read"`.
    /// - Complexity: O(n) for a file of n bytes.
    static func readAll(from descriptor: Int32, path: String, fileSystem: any FileSystem = PosixFileSystem()) throws(FileLayerError) -> Data {
        let status: FileStatus
        do throws(SystemCallError) {
            status = try fileSystem.status(descriptor)
        } catch {
            throw .io("stat", path: path, errno: error.code)
        }
        guard !status.isDirectory else {
            throw .io("read", path: path, errno: EISDIR)
        }
        if let irregularity = status.irregularity {
            throw .io(operation: "read", path: path, errno: EINVAL, message: irregularity)
        }
        // Reads of a regular file block as they always do (the flag matters only where a
        // lock or lease could make them fail with EAGAIN instead).
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 && flags & O_NONBLOCK != 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        // One spare byte lets the end-of-file read happen without regrowing.
        var buffer = try GrowableByteBuffer(capacity: max(status.size, 0) + 1)
        while true {
            if buffer.unusedBytes.isEmpty {
                try buffer.grow(toCapacity: buffer.capacity * 2)
            }
            let space = buffer.unusedBytes
            let slice = UnsafeMutableRawBufferPointer(rebasing: space[0..<min(space.count, 1 << 30)])
            let count: Int
            do throws(SystemCallError) {
                count = try retryingInterrupts { () throws(SystemCallError) in
                    try fileSystem.read(descriptor, into: slice)
                }
            } catch {
                throw .io("read", path: path, errno: error.code)
            }
            if count == 0 { break }
            buffer.commit(count)
        }
        return buffer.takeData()
    }
}

extension FileReader {
    /// The complete contents of the file open at `descriptor`, left open: for a caller that
    /// must not close a descriptor of that file while another is open (closing one drops every
    /// POSIX lock the process holds on the file, SQLite's among them).
    ///
    /// - Throws: ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` naming `path`.
    /// - Complexity: O(n) for a file of n bytes.
    package static func contents(ofOpenFile descriptor: Int32, path: String) throws(GraphStoreError) -> Data {
        do {
            return try readAll(from: descriptor, path: path)
        } catch {
            throw GraphStoreError(error, path: path)
        }
    }
}
