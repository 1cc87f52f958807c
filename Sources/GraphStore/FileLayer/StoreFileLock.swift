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
    /// - Complexity: A few system calls; never blocks.
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
    ///   `"open lock file"` or `"lock"` for other failures.
    /// - Complexity: A few system calls; never blocks.
    init(lockFileAt url: URL) throws(FileLayerError) {
        let path = url.path
        let descriptor = try Self.openLockFile(path)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
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

    private static func openLockFile(_ path: String) throws(FileLayerError) -> Int32 {
        var flags = O_RDWR | O_CREAT | O_CLOEXEC
        while true {
            let descriptor = open(path, flags, 0o644)
            if descriptor >= 0 { return descriptor }
            let code = errno
            switch code {
            case EINTR:
                continue
            case EACCES where flags & O_CREAT != 0, EROFS where flags & O_CREAT != 0:
                flags = O_RDONLY | O_CLOEXEC
            default:
                throw .io("open lock file", path: path, errno: code)
            }
        }
    }
}

extension StoreFileLock {
    /// Locks the snapshot store at `url` as an open container does, for a tool that replaces
    /// its file: while the returned lock is held no container opens the store, and a store a
    /// container has open is refused.
    ///
    /// - Throws: ``GraphStoreError/storeLocked(path:)`` when a container (in any process) has
    ///   the store open; ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` when the
    ///   lock file cannot be opened.
    /// - Complexity: A few system calls; never blocks.
    package static func lockStore(at url: URL) throws(GraphStoreError) -> StoreFileLock {
        do {
            return try StoreFileLock(forStoreAt: url)
        } catch {
            throw GraphStoreError(error, path: url.path)
        }
    }
}
