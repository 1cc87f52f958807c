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
    /// The temporary file beside it: `.<name>.migrating-<pid>-<random>`, so that a later
    /// migration can tell one a killed process left (see ``removeLeftoverTemporaries()``).
    let temporary: URL
    /// Whether a file at the destination may be replaced.
    private let overwrite: Bool
    /// Whether the new file is a snapshot store (else a SQLite database).
    private let writesSnapshot: Bool
    /// The migration's source as it was found, when given: a previous snapshot that is the
    /// source's file (a store recovered by hand from its previous snapshot) is left as it is.
    private let source: FileStatus?

    /// Checks that `url` may be written.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)`` when
    ///   the destination exists and `overwrite` is false, when it is a directory, when its
    ///   directory does not exist, or when it has a non-empty write-ahead log or rollback
    ///   journal (a store open in another process, or not closed cleanly: replacing the file
    ///   would pair the new database with the old log, which SQLite would then apply to it), or
    ///   a GraphStore journal (saves of the store there that its file does not hold yet); and,
    ///   when `overwrite` is false, when no file is there but a previous snapshot of one is
    ///   (see ``checkPreviousSnapshot()``).
    init(destination url: URL, overwrite: Bool, writesSnapshot: Bool, source: URL? = nil) throws {
        // Through a symbolic link, the file it points to, as a container opens it: its lock,
        // its journal and its write-ahead log are checked, and the file (not the link) replaced.
        let url = try StorePath.resolve(url)
        self.url = url
        self.overwrite = overwrite
        self.writesSnapshot = writesSnapshot
        self.source = source.flatMap { try? FileStatus.of(path: $0.path).get() }
        let directory = url.deletingLastPathComponent()
        temporary = directory.appendingPathComponent(Self.temporaryPrefix(of: url) + "\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))")
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
        try Self.checkSiblings(of: url)
        try checkPreviousSnapshot()
    }

    /// Refuses, unless `overwrite`, a destination that has no file but the previous snapshot
    /// of a snapshot store that was there (`<file>.previous`, its file removed by hand): it is
    /// the last copy of that store, and the migration removes it (see ``commit(replacing:)``).
    private func checkPreviousSnapshot() throws {
        let previous = PreviousSnapshot.path(forStoreAt: url.path)
        guard !overwrite, access(url.path, F_OK) != 0, ownsPrevious(previous) else { return }
        throw GraphStoreError.fileOperationFailed(
            path: url.path, operation: "migrate",
            reason: "no store file is there, but the previous snapshot of one is (\(previous)): the last copy of that store, which recovering the new store would take for its own; it was left untouched (move it away, or overwrite the destination explicitly to remove it)")
    }

    /// Refuses a migration whose `destination` is `source`'s own file, under whatever name: the
    /// same path spelled another way, a symbolic link (of either to the other, or of their
    /// directories), or another hard link of it. A destination that does not exist is another
    /// file.
    ///
    /// Such a migration would read the store before its lock is taken (the destination's lock
    /// is taken only to write), so saves an app made to it between the reading and the writing
    /// would be written over by the older contents read; and a store rewritten from itself gains
    /// nothing a migration to a new name does not give.
    ///
    /// - Parameter operation: What the caller calls the migration in its error ("migrate",
    ///   "convert").
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)``
    ///   naming `destination`, with a reason naming `source` and how the two are one file.
    /// - Complexity: two `stat` calls; a few more when they are one file.
    static func checkDistinct(source: URL, destination: URL, operation: String) throws {
        guard case .success(let found) = FileStatus.of(path: source.path),
              case .success(let target) = FileStatus.of(path: destination.path), found.isSameFile(as: target)
        else { return }
        let how = if source.standardizedFileURL.path == destination.standardizedFileURL.path {
            "the same path"
        } else if StorePath.canonical(source).path == StorePath.canonical(destination).path {
            "through a symbolic link"
        } else {
            "another hard link of it"
        }
        throw GraphStoreError.fileOperationFailed(
            path: destination.path, operation: operation,
            reason: "the destination is the same file as the source \(source.path) (\(how)); a store is not rewritten from itself, because saves an app made to it between the reading and the writing would be lost. Nothing was written: write to a new name instead")
    }

    /// Refuses a destination whose files say a store there is open or holds saves its file does
    /// not: see ``init(destination:overwrite:writesSnapshot:source:)``.
    private static func checkSiblings(of url: URL) throws {
        if mayHoldContent(url.path + "-wal") {
            throw GraphStoreError.fileOperationFailed(
                path: url.path, operation: "migrate",
                reason: "the destination has a write-ahead log (\(url.lastPathComponent)-wal): it is open in another process or was not closed cleanly; open and close it with GraphStore first")
        }
        if mayHoldContent(url.path + "-journal") {
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
    ///
    /// The destination's store is locked first, as a container locks it (``DestinationLock``),
    /// and stays locked until the new file is in place: a container that has it open makes this
    /// throw ``GraphStore/GraphStoreError/storeLocked(path:)`` before anything is written, and
    /// none can open it meanwhile, so no app goes on saving into a file this replaces.
    ///
    /// `writesSnapshot` says the new file is a snapshot store: its lock file is then taken even
    /// where no store exists yet, as a container opening a new store there takes it, so that
    /// none can open the empty store meanwhile and later write its first snapshot over the new
    /// file. A destination that did not exist when it was locked is never replaced: a file that
    /// appeared there meanwhile (a SQLite app that created its database) makes this throw and
    /// is left as it is.
    func build(beforeRename: ((URL) throws -> Void)?, _ make: (URL) throws -> Void) throws {
        let lock = try DestinationLock(url, snapshotStore: writesSnapshot)
        defer { lock.release() }
        // Again, now that no store there can be opened: it may have been since the first check.
        try Self.checkSiblings(of: url)
        try checkPreviousSnapshot()
        removeLeftoverTemporaries()
        do {
            try make(temporary)
            try beforeRename?(temporary)
            // A file that appeared since the first check is replaced only when overwriting.
            try commit(replacing: overwrite && lock.destinationExisted)
        } catch {
            removeTemporary()
            throw error
        }
    }

    /// How many seconds a temporary file of a process that is gone must have gone unwritten
    /// before ``removeLeftoverTemporaries()`` removes it.
    static let leftoverAge = 60

    /// `.<name>.migrating-`: how the temporary files of migrations to `url` begin.
    static func temporaryPrefix(of url: URL) -> String {
        ".\(url.lastPathComponent).migrating-"
    }

    /// Removes the temporary files (with SQLite's files beside them) that migrations to this
    /// destination left when their process was killed: those whose name holds the id of a
    /// process that no longer exists and that nothing wrote to for ``leftoverAge`` seconds. A
    /// live process's, this one's included, is left alone: two migrations to one new SQLite
    /// file do not lock each other out. Best effort; names without a process id (older
    /// versions') are left alone.
    ///
    /// - Complexity: one listing of the directory.
    func removeLeftoverTemporaries() {
        let directory = url.deletingLastPathComponent()
        let prefix = Self.temporaryPrefix(of: url)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        // Each migration's files, by its `<pid>-<hex>`: judged, and removed, together.
        var groups: [Substring: [String]] = [:]
        for entry in entries {
            // The temporary file, `<prefix><pid>-<hex>`, followed by one of SQLite's suffixes
            // for its files beside it; or the snapshot writer's own temporary file for it,
            // `.<prefix><pid>-<hex>.tmp-<pid>-<hex>`.
            var rest: Substring
            if entry.hasPrefix(prefix) {
                rest = entry.dropFirst(prefix.count)
                if let suffix = SQLiteFileHeader.siblingSuffixes.first(where: { rest.hasSuffix($0) }) { rest = rest.dropLast(suffix.count) }
            } else if entry.hasPrefix("." + prefix), let writer = entry.range(of: ".tmp-", options: .backwards),
                      AtomicFile.isTemporarySuffix(entry[writer.upperBound...]) {
                rest = entry[entry.index(entry.startIndex, offsetBy: prefix.count + 1)..<writer.lowerBound]
            } else {
                continue
            }
            guard AtomicFile.isTemporarySuffix(rest) else { continue }
            groups[rest, default: []].append(entry)
        }
        let now = Date()
        for (name, files) in groups {
            guard let pid = Int32(name.prefix { $0 != "-" }), pid > 0, pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            // None written to for a while: a process in another process namespace (a
            // container, another machine sharing the directory) has ids this one cannot see,
            // and a live migration writes its files as it goes.
            let paths = files.map { directory.appendingPathComponent($0).path }
            let written = paths.compactMap { try? FileManager.default.attributesOfItem(atPath: $0)[.modificationDate] as? Date }
            guard written.count == paths.count, written.allSatisfy({ now.timeIntervalSince($0) >= Double(Self.leftoverAge) }) else { continue }
            for path in paths { unlink(path) }
        }
    }

    /// Removes the temporary file and SQLite's files beside it.
    func removeTemporary() {
        for path in [temporary.path] + SQLiteFileHeader.siblingSuffixes.map({ temporary.path + $0 }) {
            unlink(path)
        }
    }

    /// Makes the finished temporary file durable and renames it to the destination, then makes
    /// the rename durable. Leftover empty `-journal` / `-wal` / `-shm` files of a replaced database are
    /// removed first, so the new database does not meet them.
    ///
    /// Once the new file is in place, when it is a snapshot store, the previous snapshot of the
    /// store it replaced (`<file>.previous`) is removed: it is another store's, and recovering the new store from
    /// it (``GraphStore/SnapshotOptions/recoverFromPreviousSnapshot``) would bring that store's
    /// objects back in place of the new ones. The new store gets its own with its app's first
    /// write. A migration that fails before leaves it as it was.
    ///
    /// When `replacing`, the new file takes the replaced file's owner, group and permission bits
    /// (``GraphStore/FileOwnership``) first. Unless `replacing`, the new file takes the
    /// destination's name only while no file has it:
    /// a hard link (which fails where the name exists), then the temporary name removed.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)``;
    ///   with reason naming the file that appeared when `replacing` is false and the
    ///   destination exists; naming the previous snapshot when it cannot be removed (the new
    ///   file is in place then).
    func commit(replacing: Bool) throws {
        // A replaced store keeps its owner and permissions: a private store stays private.
        let ownership = replacing ? FileOwnership(ofFileAt: url.path) : nil
        try sync(temporary.path, operation: "fsync the migrated file", applying: ownership)
        let appeared = GraphStoreError.fileOperationFailed(
            path: url.path, operation: "migrate",
            reason: "a file appeared at the destination while migrating (another program created it); it was left untouched")
        // A database that appeared there may be open, with its empty log and shared memory
        // beside it: those are not removed from under it.
        if !replacing, access(url.path, F_OK) == 0 { throw appeared }
        for suffix in SQLiteFileHeader.siblingSuffixes where !Self.mayHoldContent(url.path + suffix) {
            unlink(url.path + suffix)
        }
        if replacing {
            guard rename(temporary.path, url.path) == 0 else {
                throw failure("rename the migrated file into place")
            }
        } else {
            if link(temporary.path, url.path) == 0 {
                // The destination has the new file now; the temporary name goes.
                unlink(temporary.path)
            } else {
                let code = errno
                guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP else {
                    throw code == EEXIST ? appeared : Self.failure(path: url.path, operation: "link the migrated file into place", code: code)
                }
                // A file system without hard links: checked, then renamed (a narrow race left).
                guard access(url.path, F_OK) != 0 else { throw appeared }
                guard rename(temporary.path, url.path) == 0 else {
                    throw failure("rename the migrated file into place")
                }
            }
        }
        // The new file is in place: the replaced store's previous snapshot is no longer its
        // store's. (Made durable with the rename by the directory's fsync below.)
        // Not when it is the migration's own source (a store recovered by hand from its previous
        // snapshot): a source is read, never removed.
        let previous = PreviousSnapshot.path(forStoreAt: url.path)
        var removal: GraphStoreError?
        if ownsPrevious(previous), unlink(previous) != 0, case let code = errno, code != ENOENT {
            removal = GraphStoreError.fileOperationFailed(
                path: previous, operation: "remove the replaced store's previous snapshot",
                reason: "\(SystemCallError(code).message); the migrated file is in place at \(url.path), and recovering it would open this older snapshot of the store it replaced: remove it")
        }
        // A file system that cannot sync a directory (EINVAL) is accepted. The rename is made
        // durable even when the previous snapshot could not be removed.
        let directory = url.deletingLastPathComponent().path
        let descriptor = open(directory, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            defer { close(descriptor) }
            if fsync(descriptor) != 0 && errno != EINVAL {
                throw failure("fsync the directory \(directory)")
            }
        }
        if let removal { throw removal }
    }

    /// Whether `previous` exists and is this migration's to refuse or remove: the new file is a
    /// snapshot store (a SQLite store never reads a previous snapshot, so one beside a database
    /// is someone's copy, left alone), and it is not the migration's source.
    private func ownsPrevious(_ previous: String) -> Bool {
        guard writesSnapshot, case .success(let found) = FileStatus.of(path: previous) else { return false }
        return !(source.map(found.isSameFile(as:)) ?? false)
    }

    /// Whether a file at `path` may hold a byte: one that does, or one that cannot be examined
    /// (an unreadable directory, a stale mount), which is never taken for empty and removed.
    static func mayHoldContent(_ path: String) -> Bool {
        switch FileStatus.of(path: path) {
        case .success(let status): status.size > 0
        case .failure(let error): error.code != ENOENT
        }
    }

    /// The size of the file at `path`, or 0 when there is none.
    static func size(of path: String) -> Int {
        // Through a symbolic link: the size of the file it names, as the summary reports it.
        FileStatus.size(atPath: path) ?? 0
    }

    // MARK: - Private

    private func sync(_ path: String, operation: String, applying ownership: FileOwnership? = nil) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(operation) }
        defer { close(descriptor) }
        ownership?.apply(to: descriptor)
        guard fsync(descriptor) == 0 else { throw failure(operation) }
    }

    private func failure(_ operation: String) -> GraphStoreError {
        Self.failure(path: url.path, operation: operation)
    }

    /// `operation` on `path` failed with `code` (by default the current `errno`).
    static func failure(path: String, operation: String, code: Int32 = errno) -> GraphStoreError {
        .fileOperationFailed(path: path, operation: operation, reason: SystemCallError(code).message)
    }
}

/// The locks a container of the destination's store would hold, taken by a migration while it
/// replaces the file:
///
/// - For a snapshot store (a destination that is not a SQLite database, or one with a lock file
///   beside it): its `<file>.lock`, locked as ``GraphStore/GraphContainer`` locks it.
/// - For a SQLite database: a read lock on the bytes SQLite locks to read (its shared range,
///   `0x40000002` for 510 bytes, as SQLite's own POSIX locking takes it). The SQLite store holds
///   an exclusive lock there while it is open, so the read lock is refused then; while it is
///   held, the store cannot take its exclusive lock and does not open. Within this process,
///   where POSIX locks never conflict, the path's claim (``OpenSQLiteStores``) is taken instead,
///   for a destination of either kind: a container of this process that has it open makes the
///   claim fail, and one that tries to open it meanwhile fails to claim it.
///
/// A destination that does not exist and has no lock file takes no lock.
final class DestinationLock {
    private let path: String
    private var claim: UInt64?
    private let snapshotLock: StoreFileLock?
    private var descriptor: Int32
    /// Whether a file was at the destination when it was locked.
    let destinationExisted: Bool

    /// Locks the store at `url`; `snapshotStore` takes its lock file even where there is no
    /// store yet (the migration writes a snapshot store there).
    ///
    /// - Throws: ``GraphStore/GraphStoreError/storeLocked(path:)`` while a container has it
    ///   open; ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)`` when
    ///   a lock cannot be taken for another reason.
    init(_ url: URL, snapshotStore: Bool) throws {
        let path = url.path
        let claim = try OpenSQLiteStores.claim(path)
        let exists = FileManager.default.fileExists(atPath: path)
        let isSQLite = exists && SQLiteStoreInfo.isSQLiteDatabase(at: url)
        let hasLockFile = FileManager.default.fileExists(atPath: StoreFileLock.lockFileURL(forStoreAt: url).path)
        var snapshotLock: StoreFileLock?
        let descriptor: Int32
        do {
            snapshotLock = (exists && !isSQLite) || hasLockFile || snapshotStore ? try StoreFileLock.lockStore(at: url) : nil
            descriptor = isSQLite ? try Self.lockSharedRange(path) : -1
        } catch {
            snapshotLock?.unlock()
            OpenSQLiteStores.release(path, token: claim)
            throw error
        }
        self.path = path
        self.claim = claim
        self.snapshotLock = snapshotLock
        self.descriptor = descriptor
        destinationExisted = exists
    }

    /// A descriptor of the SQLite database at `path` holding a read lock on its shared range.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/storeLocked(path:)`` when another process holds
    ///   the database (the SQLite store's exclusive lock); else `fileOperationFailed`.
    private static func lockSharedRange(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw MigrationFile.failure(path: path, operation: "open the destination to lock it") }
        var range = SQLiteSharedLockRange.readLockRequest()
        guard fcntl(descriptor, F_SETLK, &range) == 0 else {
            let code = errno
            close(descriptor)
            if code == EAGAIN || code == EACCES { throw GraphStoreError.storeLocked(path: path) }
            throw MigrationFile.failure(path: path, operation: "lock the destination", code: code)
        }
        return descriptor
    }

    /// Releases the locks. Calling it again does nothing.
    func release() {
        if descriptor >= 0 {
            // Closing the descriptor drops its POSIX lock (on the replaced file's inode).
            close(descriptor)
            descriptor = -1
        }
        snapshotLock?.unlock()
        if let claim {
            OpenSQLiteStores.release(path, token: claim)
            self.claim = nil
        }
    }

    deinit { release() }
}
