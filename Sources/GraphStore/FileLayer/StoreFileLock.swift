import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - StoreFileLock

/// An exclusive advisory lock on a lock file beside a store
/// (`<store path>.lock`), so at most one store instance writes it at a time.
///
/// The lock is `flock(LOCK_EX | LOCK_NB)` on a descriptor opened by this
/// object. `flock` locks belong to the *open file description*, so a second
/// `StoreFileLock` on the same path conflicts whether it is in another
/// process or in this one. The descriptor is opened with `O_CLOEXEC`, so
/// child processes do not inherit it. The lock file is never deleted:
/// removing it would let two holders lock different inodes of one path.
/// Where it is missing and cannot be created, a store opens read-only
/// without a lock (see ``lockUnlessUncreatable(forStoreAt:)``).
///
/// Advisory only: processes that do not call `flock` are not stopped.
package final class StoreFileLock: Sendable {

    // MARK: - State

    /// Path of the lock file.
    let path: String

    /// The locked descriptor, or `nil` after ``unlock()``.
    private let descriptor: Guarded<Int32?>

    // MARK: - Lifecycle

    /// The lock file for the store at `storeURL`: the same path plus `.lock`.
    ///
    /// - Complexity: O(length of the path).
    package static func lockFileURL(forStoreAt storeURL: URL) -> URL {
        URL(fileURLWithPath: storeURL.path + ".lock")
    }

    /// Locks the lock file of the store at `storeURL`, creating it if needed.
    ///
    /// - Throws: See ``init(lockFileAt:)``.
    /// - Complexity: A few system calls; waits at most about 10 ms for a lock held elsewhere.
    convenience init(forStoreAt storeURL: URL) throws(FileLayerError) {
        try self.init(lockFileAt: Self.lockFileURL(forStoreAt: storeURL))
    }

    /// Opens (creating if needed) and exclusively locks the file at `url`.
    /// If the file cannot be opened for writing (`EACCES`, `EROFS`) but
    /// exists, it is locked through a read-only descriptor.
    ///
    /// - Throws: ``FileLayerError/locked(path:)`` with the lock file's path
    ///   if another open file description holds the lock;
    ///   ``FileLayerError/io(operation:path:errno:message:)`` with operation
    ///   `"open lock file"` or `"lock"` for other failures (for a missing
    ///   lock file that cannot be created, the `errno` of the refused
    ///   creation: `EACCES`, `EROFS`).
    /// - Complexity: A few system calls; waits at most about 10 ms for a lock held elsewhere.
    convenience init(lockFileAt url: URL) throws(FileLayerError) {
        let path = url.path
        switch try Self.openLockFile(path) {
        case .opened(let descriptor):
            try self.init(path: path, locking: descriptor)
        case .uncreatable(let code):
            // Why it could not be created (`EACCES`, `EROFS`), not that it is missing.
            throw .io("open lock file", path: path, errno: code)
        }
    }

    /// Locks the lock file of the store at `storeURL` as ``init(forStoreAt:)`` does, except
    /// where the lock file is missing and cannot be created (read-only media, a directory this
    /// process cannot write): then it returns the `errno` of the refused creation (`EROFS`,
    /// `EACCES`) instead, and the caller may only read the store.
    ///
    /// Nothing is locked then. Every writer locks the lock file, and a lock on any other file
    /// (the store file's own, say) would exclude none of them; where no process can create the
    /// lock file, none can write the store either. A store opened this way must write nothing
    /// at all, for as long as it is open: not its journal, not a snapshot, not a leftover
    /// removed. Two such readers do not exclude each other, which is safe because neither
    /// writes.
    ///
    /// - Throws: as ``init(forStoreAt:)``.
    /// - Complexity: A few system calls; waits at most about 10 ms for a lock held elsewhere.
    static func lockUnlessUncreatable(forStoreAt storeURL: URL) throws(FileLayerError) -> Result<StoreFileLock, SystemCallError> {
        let path = lockFileURL(forStoreAt: storeURL).path
        switch try openLockFile(path) {
        case .opened(let descriptor):
            return .success(try StoreFileLock(path: path, locking: descriptor))
        case .uncreatable(let code):
            return .failure(SystemCallError(code))
        }
    }

    /// Exclusively locks `descriptor`, an open lock file at `path`; closes it when that fails.
    ///
    /// A lock held elsewhere is tried again for up to about 10 ms: a tool's test of the lock
    /// (``checkNotHeld(storeAt:)``, a shared lock given back at once) must not make an app's
    /// open fail.
    private init(path: String, locking descriptor: Int32) throws(FileLayerError) {
        var retries = 0
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK || code == EAGAIN, retries < 10 {
                retries += 1
                usleep(1_000)
                continue
            }
            _ = close(descriptor)
            if code == EWOULDBLOCK || code == EAGAIN {
                throw .locked(path: path)
            }
            throw .io("lock", path: path, errno: code)
        }
        self.path = path
        self.descriptor = Guarded(descriptor)
    }

    deinit {
        unlock()
    }

    // MARK: - Access

    /// Whether this object still holds the lock.
    var isHeld: Bool {
        descriptor.withLock { $0 != nil }
    }

    /// Releases the lock and closes the descriptor. Calling it again does
    /// nothing.
    ///
    /// - Complexity: Two system calls.
    package func unlock() {
        guard let released = descriptor.withLock({ state -> Int32? in
            defer { state = nil }
            return state
        }) else { return }
        // Closing the last descriptor of the open file description would
        // release the lock anyway; unlocking first makes it explicit.
        _ = flock(released, LOCK_UN)
        _ = close(released)
    }

    // MARK: - Private helpers

    /// What opening a lock file found.
    private enum OpenedLockFile {
        /// An open descriptor of the lock file.
        case opened(Int32)
        /// The lock file does not exist and creating it failed with this `errno`.
        case uncreatable(Int32)
    }

    private static func openLockFile(_ path: String) throws(FileLayerError) -> OpenedLockFile {
        // Without blocking (a pipe opened only for reading would wait for a writer), and only
        // a regular file is taken: the lock file is never read or written.
        var flags = O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY
        var creation: Int32?
        while true {
            let descriptor = open(path, flags, 0o644)
            if descriptor >= 0 {
                let status: FileStatus
                do throws(SystemCallError) {
                    status = try PosixFileSystem().status(descriptor)
                } catch {
                    _ = close(descriptor)
                    throw .io("stat lock file", path: path, errno: error.code)
                }
                if let irregularity = status.irregularity {
                    _ = close(descriptor)
                    throw .io(operation: "open lock file", path: path, errno: EINVAL, message: irregularity)
                }
                return .opened(descriptor)
            }
            let code = errno
            switch code {
            case EINTR:
                continue
            case EACCES where flags & O_CREAT != 0, EROFS where flags & O_CREAT != 0:
                creation = code
                flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY
            case ENOENT where creation != nil:
                return .uncreatable(creation ?? code)
            default:
                throw .io("open lock file", path: path, errno: code)
            }
        }
    }
}

extension StoreFileLock {
    /// Throws when a container (in any process, this one included) has the snapshot store at
    /// `url` open, for a tool that only reads it: its file may be older than what the app was
    /// told is saved (under ``Durability/coalesced`` nothing else tells). Takes no lock and
    /// creates nothing: without a lock file, no container holds the store.
    ///
    /// The test takes a shared lock and gives it back at once; a container locking the store
    /// at that instant tries again (see ``init(path:locking:)``) rather than failing.
    ///
    /// - Throws: ``GraphStoreError/storeLocked(path:)``.
    /// - Complexity: A few system calls; never blocks.
    package static func checkNotHeld(storeAt url: URL) throws(GraphStoreError) {
        let storeURL = (try? StorePath.resolve(url)) ?? url
        let descriptor = open(lockFileURL(forStoreAt: storeURL).path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { return }
        defer { _ = close(descriptor) }
        guard (try? PosixFileSystem().status(descriptor))?.isRegular == true else { return }
        if flock(descriptor, LOCK_SH | LOCK_NB) == 0 {
            _ = flock(descriptor, LOCK_UN)
        } else if errno == EWOULDBLOCK {
            throw .storeLocked(path: url.path)
        }
    }

    /// Locks the snapshot store at `url` as an open container does, for a tool that replaces
    /// its file: while the returned lock is held no container opens the store, and a store a
    /// container has open is refused.
    ///
    /// - Throws: ``GraphStoreError/storeLocked(path:)`` when a container (in any process) has
    ///   the store open; ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` when the
    ///   lock file cannot be opened.
    /// - Complexity: A few system calls; waits at most about 10 ms for a lock held elsewhere.
    package static func lockStore(at url: URL) throws(GraphStoreError) -> StoreFileLock {
        do {
            return try StoreFileLock(forStoreAt: url)
        } catch {
            throw GraphStoreError(error, path: url.path)
        }
    }
}
