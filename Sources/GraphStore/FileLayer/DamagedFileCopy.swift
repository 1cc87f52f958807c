import Foundation

/// Keeps a damaged file for inspection before recovery goes on without it.
enum DamagedFileCopy {
    /// Copies the file at `path` to `<path>.damaged-<unix time>`, with `-2`, `-3`… when an
    /// earlier recovery took that name; returns the copy's path.
    ///
    /// - Throws: the file manager's error when the copy cannot be made.
    /// - Complexity: O(file size).
    static func keep(_ path: String) throws -> String {
        let stamp = path + ".damaged-\(Int(Date().timeIntervalSince1970))"
        var aside = stamp
        var attempt = 1
        while FileManager.default.fileExists(atPath: aside) {
            attempt += 1
            aside = stamp + "-\(attempt)"
        }
        try FileManager.default.copyItem(atPath: path, toPath: aside)
        return aside
    }
}
