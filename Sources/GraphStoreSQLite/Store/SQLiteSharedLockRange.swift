import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SQLite's shared lock range: the bytes its POSIX file locking read-locks for every reader
/// (`SHARED_FIRST`, `SHARED_SIZE` of its Unix VFS). A write lock on them (SQLite's `PENDING`
/// into `EXCLUSIVE`, or a store held in exclusive locking mode) keeps readers out; a read lock
/// keeps writers from committing.
///
/// See <https://www.sqlite.org/lockingv3.html> and `os_unix.c`.
enum SQLiteSharedLockRange {
    /// The range's first byte (`SHARED_FIRST`, 1 GiB + 2).
    static let start: off_t = 0x4000_0002
    /// The range's length in bytes (`SHARED_SIZE`).
    static let length: off_t = 510

    /// A read-lock request on the range, for `fcntl` (`F_SETLK` or `F_GETLK`).
    static func readLockRequest() -> flock {
        var range = flock()
        range.l_type = Int16(F_RDLCK)
        range.l_whence = Int16(SEEK_SET)
        range.l_start = start
        range.l_len = length
        return range
    }

    /// Whether another process holds a lock on the range of the database at `path` that a
    /// reader's shared lock conflicts with. Nothing is locked here (`F_GETLK`); a file that
    /// cannot be opened reads as not locked, and its open fails later with its own error.
    ///
    /// - Complexity: one `open`, one `fcntl`, one `close`.
    static func isWriteLockedElsewhere(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var range = readLockRequest()
        return fcntl(descriptor, F_GETLK, &range) == 0 && range.l_type != Int16(F_UNLCK)
    }
}
