import Foundation
import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The destination of a migration: checked before any work, built under a temporary name in
/// its directory, and renamed into place only when complete, so it is never half-written.
struct MigrationFile {
    /// The destination.
    let url: URL
    /// The temporary file beside it: `.<name>.migrating-<random>`.
    let temporary: URL

    /// The SQLite files that may appear beside a database.
    static let sqliteSiblingSuffixes = ["-journal", "-wal", "-shm"]

    /// Checks that `url` may be written.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)`` when
    ///   the destination exists and `overwrite` is false, when it is a directory, when its
    ///   directory does not exist, or when it has a non-empty write-ahead log or rollback
    ///   journal (a store open in another process, or not closed cleanly: replacing the file
    ///   would pair the new database with the old log, which SQLite would then apply to it), or
    ///   a GraphStore journal (saves of the store there that its file does not hold yet).
    init(destination url: URL, overwrite: Bool) throws {
        self.url = url
        let directory = url.deletingLastPathComponent()
        temporary = directory.appendingPathComponent(".\(url.lastPathComponent).migrating-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw GraphStoreError.fileOperationFailed(path: url.path, operation: "migrate", reason: "the directory \(directory.path) does not exist")
        }
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            guard !isDirectory.boolValue else {
                throw GraphStoreError.fileOperationFailed(path: url.path, operation: "migrate", reason: "the destination is a directory")
            }
            guard overwrite else {
                throw GraphStoreError.fileOperationFailed(
                    path: url.path, operation: "migrate", reason: "the destination exists; it was left untouched (overwrite it explicitly to replace it)")
            }
        }
        if Self.size(of: url.path + "-wal") > 0 {
            throw GraphStoreError.fileOperationFailed(
                path: url.path, operation: "migrate",
                reason: "the destination has a write-ahead log (\(url.lastPathComponent)-wal): it is open in another process or was not closed cleanly; open and close it with GraphStore first")
        }
        if Self.size(of: url.path + "-journal") > 0 {
            throw GraphStoreError.fileOperationFailed(
                path: url.path, operation: "migrate",
                reason: "the destination has a rollback journal (\(url.lastPathComponent)-journal): a process writing it was killed, and SQLite would apply that journal to a new file there; open and close it with GraphStore or SQLite first")
        }
        let journal = JournalReplay.path(forStoreAt: url.path)
        if FileManager.default.fileExists(atPath: journal) {
            throw GraphStoreError.fileOperationFailed(
                path: url.path, operation: "migrate",
                reason: "the destination has a GraphStore journal (\(URL(fileURLWithPath: journal).lastPathComponent)): it is open in an app, or holds saves its file does not yet; open and close it with GraphStore first")
        }
    }

    /// Makes the destination: `make` writes the temporary file it is given, `beforeRename` (a
    /// test hook) sees the finished file, and ``commit()`` renames it into place. On any error
    /// the temporary file is removed and the error rethrown, leaving the destination as it was.
    ///
    /// - Throws: whatever `make` or `beforeRename` throws, and the errors of ``commit()``.
    func build(beforeRename: ((URL) throws -> Void)?, _ make: (URL) throws -> Void) throws {
        do {
            try make(temporary)
            try beforeRename?(temporary)
            try commit()
        } catch {
            removeTemporary()
            throw error
        }
    }

    /// Removes the temporary file and SQLite's files beside it.
    func removeTemporary() {
        for path in [temporary.path] + Self.sqliteSiblingSuffixes.map({ temporary.path + $0 }) {
            unlink(path)
        }
    }

    /// Makes the finished temporary file durable and renames it to the destination, then makes
    /// the rename durable. Leftover empty `-journal` / `-wal` / `-shm` files of a replaced database are
    /// removed first, so the new database does not meet them.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)``.
    func commit() throws {
        try sync(temporary.path, operation: "fsync the migrated file")
        for suffix in Self.sqliteSiblingSuffixes where Self.size(of: url.path + suffix) == 0 {
            unlink(url.path + suffix)
        }
        guard rename(temporary.path, url.path) == 0 else {
            throw failure("rename the migrated file into place")
        }
        // A file system that cannot sync a directory (EINVAL) is accepted.
        let directory = url.deletingLastPathComponent().path
        let descriptor = open(directory, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            defer { close(descriptor) }
            if fsync(descriptor) != 0 && errno != EINVAL {
                throw failure("fsync the directory \(directory)")
            }
        }
    }

    /// The size of the file at `path`, or 0 when there is none.
    static func size(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    // MARK: - Private

    private func sync(_ path: String, operation: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(operation) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure(operation) }
    }

    private func failure(_ operation: String) -> GraphStoreError {
        let code = errno
        return .fileOperationFailed(path: url.path, operation: operation, reason: String(cString: strerror(code)) + " (errno \(code))")
    }
}
