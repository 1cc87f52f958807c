#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - FileOwnership

/// The owner, group and permission bits of a store's file, which every file GraphStore writes
/// with the store's data takes over: a new snapshot renamed over the old one, the journal, the
/// copies a migration or a recovery keeps. A store the user made private (`chmod 600`) stays
/// private, and its journal, holding the same saves, is private from the start.
///
/// ```swift
/// let ownership = FileOwnership(ofFileAt: storePath)
/// let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, ownership?.permissions ?? 0o644)
/// ownership?.apply(to: descriptor)
/// ```
package struct FileOwnership: Sendable, Equatable {
    /// The owner's user id.
    package var owner: uid_t
    /// The group id.
    package var group: gid_t
    /// The permission bits (`0o777`); set-id and sticky bits are not carried over.
    package var permissions: mode_t

    /// The mode a data file gets when there is no store file to take it from, before the
    /// process's umask.
    package static let defaultPermissions: mode_t = 0o644

    /// The ownership of the file at `path` (through symbolic links), or `nil` when there is no
    /// file there (or it cannot be examined).
    ///
    /// - Complexity: one `stat(2)`.
    package init?(ofFileAt path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        owner = info.st_uid
        group = info.st_gid
        permissions = info.st_mode & 0o777
    }

    /// The ownership of the file at `path`, else of the file at `fallback` (when given).
    ///
    /// - Complexity: at most two `stat(2)`s.
    package init?(ofFileAt path: String, orElseOf fallback: String?) {
        if let own = FileOwnership(ofFileAt: path) {
            self = own
        } else if let fallback, let other = FileOwnership(ofFileAt: fallback) {
            self = other
        } else {
            return nil
        }
    }

    /// Gives the open file `descriptor` this owner, group and permission bits, as far as the
    /// process may: the owner only when it is privileged, the group when it belongs to it. When
    /// the group cannot be kept, the group's permission bits are dropped, so that the data is
    /// never readable by a group the original file did not grant it to. The exact bits are set
    /// after `open(2)`, whose mode the umask narrows. Best effort: a failure leaves the file
    /// with the mode it was created with (never wider than these permissions).
    ///
    /// - Complexity: at most three system calls.
    package func apply(to descriptor: Int32) {
        var permissions = permissions
        if fchown(descriptor, owner, group) != 0 {
            // EPERM: not privileged. The group alone, when this process is one of its members.
            if fchown(descriptor, uid_t.max, group) != 0 {
                permissions &= ~mode_t(0o070)
            }
        }
        _ = fchmod(descriptor, permissions)
    }
}
