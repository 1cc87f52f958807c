import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one spelling of a store's path that every container, lock and tool uses.
package enum StorePath {
    /// How many symbolic links ``canonical(_:)`` follows before it reports a loop: as many as
    /// Darwin's kernel follows (`MAXSYMLINKS`; Linux follows 40).
    package static let maximumLinks = 32

    /// `url` with symbolic links resolved, so that two spellings of one file are one store: the
    /// file a symbolic link there points to, else its directory with links resolved and its
    /// name. (Not the whole path resolved: a new store's file does not exist yet when it is
    /// opened, and resolving a path that does not exist may give another spelling than once it
    /// does.)
    ///
    /// A store opened through a link then locks, journals and writes the file the link points
    /// to: its lock file and journal are the target's, and a snapshot write renames a new file
    /// over the target, not over the link. So also when the target does not exist yet (a store
    /// placed on another volume by a link made before its first save): the link is followed
    /// (a relative destination from the link's directory, through chains of links), and the
    /// first save creates the target.
    ///
    /// Links that form a loop name no file: then `url` as given (standardized), which nothing
    /// can open either. Opening a store uses ``resolve(_:)``, which throws instead.
    ///
    /// ```swift
    /// // store.json.gz -> /Volumes/Archive/store.json.gz, not written yet
    /// StorePath.canonical(URL(fileURLWithPath: "store.json.gz")).path  // "/Volumes/Archive/store.json.gz"
    /// ```
    ///
    /// - Complexity: a few system calls per path component and per link followed.
    package static func canonical(_ url: URL) -> URL {
        (try? resolve(url)) ?? url.standardizedFileURL
    }

    /// The path a store at `url` is opened, locked, journaled and written under:
    /// ``canonical(_:)``, or an error when there is none.
    ///
    /// ```swift
    /// let url = try StorePath.resolve(url)   // before the lock file is created beside it
    /// ```
    ///
    /// - Throws: ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` naming `url`
    ///   when its links form a loop, or a chain longer than ``maximumLinks`` (`ELOOP`).
    /// - Complexity: as ``canonical(_:)``.
    package static func resolve(_ url: URL) throws(GraphStoreError) -> URL {
        let url = url.standardizedFileURL
        guard isSymbolicLink(url.path) else {
            return url.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(url.lastPathComponent)
        }
        if FileManager.default.fileExists(atPath: url.path) { return url.resolvingSymlinksInPath() }
        let target = try danglingTarget(of: url)
        return canonicalDirectory(of: target).appendingPathComponent(target.lastPathComponent)
    }

    // MARK: - Private

    /// Whether there is a symbolic link at `path` (not followed).
    private static func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    /// The path that the link at `url`, whose target does not exist, names at the end of its
    /// chain: each destination read (`readlink`), a relative one taken from the directory of the
    /// link that holds it, as the kernel takes it.
    private static func danglingTarget(of url: URL) throws(GraphStoreError) -> URL {
        var current = url
        var followed = 0
        while isSymbolicLink(current.path), let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: current.path) {
            guard followed < maximumLinks else {
                throw .fileOperationFailed(
                    path: url.path, operation: "follow the symbolic link",
                    reason: "\(systemErrorMessage(ELOOP)): its links form a loop or a chain of more than \(maximumLinks)")
            }
            followed += 1
            current = destination.hasPrefix("/")
                ? URL(fileURLWithPath: destination)
                : current.deletingLastPathComponent().appendingPathComponent(destination)
        }
        return current
    }

    /// The directory of `target` with every link and `..` resolved as the kernel resolves them
    /// (`realpath(3)`), then spelled as ``canonical(_:)`` spells an existing file's directory;
    /// a directory that does not exist (opening then fails, naming it) as it is.
    private static func canonicalDirectory(of target: URL) -> URL {
        let directory = target.deletingLastPathComponent()
        guard let resolved = realpath(directory.path, nil) else { return directory.standardizedFileURL }
        defer { free(resolved) }
        return URL(fileURLWithPath: String(cString: resolved), isDirectory: true).resolvingSymlinksInPath()
    }
}
