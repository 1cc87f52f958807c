import Foundation
import GraphStore

extension GenericSnapshot {
    /// Reads a copy of the snapshot file at `url`, without its journal: for a test looking at
    /// the file of a store a container holds open, whose reading `read(from:)` refuses
    /// (``GraphStoreError/storeLocked(path:)``).
    public static func readFileCopy(of url: URL) throws -> GenericSnapshot {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let copy = directory.file(url.lastPathComponent)
        try FileManager.default.copyItem(at: url, to: copy)
        return try read(from: copy)
    }
}
