import Foundation

/// The one spelling of a store's path that every container, lock and tool uses.
package enum StorePath {
    /// `url` with symbolic links resolved, so that two spellings of one file are one store: the
    /// file a symbolic link there points to, else its directory with links resolved and its
    /// name. (Not the whole path resolved: a new store's file does not exist yet when it is
    /// opened, and resolving a path that does not exist may give another spelling than once it
    /// does.)
    ///
    /// A store opened through a link then locks, journals and writes the file the link points
    /// to: its lock file and journal are the target's, and a snapshot write renames a new file
    /// over the target, not over the link.
    ///
    /// - Complexity: a few system calls per path component.
    package static func canonical(_ url: URL) -> URL {
        let url = url.standardizedFileURL
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) != nil { return url.resolvingSymlinksInPath() }
        return url.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(url.lastPathComponent)
    }
}
