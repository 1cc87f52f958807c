import Foundation
import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The SQLite stores open in this process, and the descriptors their opening read the database
/// file through.
///
/// An open store's lock is SQLite's POSIX record lock on the database file, which the kernel
/// drops as soon as the process closes *any* descriptor of that file, whoever opened it. So
/// while a store is open nothing else in the process may open and close the file: a second
/// container on an open store is refused here, before it reads the file's header, and the
/// copies a migration keeps are read through descriptors that stay open until the store's
/// connection is closed (``release(_:)``).
enum OpenSQLiteStores {
    private static let claims = Guarded<[String: [Int32]]>([:])

    /// The key of the store at `path`: the path with symbolic links resolved, so that two
    /// spellings of one file are one store.
    static func key(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }

    /// Claims the store at `path` for a container being opened.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/storeLocked(path:)`` when a container of this
    ///   process has it open, or is opening it.
    /// - Complexity: O(1).
    static func claim(_ path: String) throws(GraphStoreError) {
        let key = key(path)
        let claimed = claims.withLock { claims in
            guard claims[key] == nil else { return false }
            claims[key] = []
            return true
        }
        guard claimed else { throw .storeLocked(path: path) }
    }

    /// Whether a container of this process has the store at `path` open (or is opening it):
    /// nothing else may then open the file.
    ///
    /// - Complexity: O(1).
    static func isOpen(_ path: String) -> Bool {
        let key = key(path)
        return claims.withLock { $0[key] != nil }
    }

    /// Reads the whole file at `filePath`, a file of the store claimed at `path`, through a
    /// descriptor that stays open until the store is released.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)``.
    /// - Complexity: O(file size).
    static func read(_ filePath: String, of path: String) throws(GraphStoreError) -> Data {
        let descriptor = open(filePath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(filePath, errno) }
        claims.withLock { $0[key(path), default: []].append(descriptor) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(data.count)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(filePath, errno)
            }
            if count == 0 { return data }
            data.append(contentsOf: buffer[..<count])
        }
    }

    /// Ends the claim on the store at `path` once its connection is closed (or it failed to
    /// open), closing the descriptors ``read(_:of:)`` kept. Does nothing for a store not claimed.
    ///
    /// - Complexity: O(descriptors).
    static func release(_ path: String) {
        let descriptors = claims.withLock { $0.removeValue(forKey: key(path)) } ?? []
        for descriptor in descriptors { close(descriptor) }
    }

    private static func failure(_ path: String, _ code: Int32) -> GraphStoreError {
        .fileOperationFailed(path: path, operation: "read the old store to keep a copy of it", reason: String(cString: strerror(code)))
    }
}
