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
    /// One container's claim: which it is, and the descriptors it keeps open.
    private struct Claim {
        var token: UInt64
        var descriptors: [Int32] = []
    }

    private static let claims = Guarded<(next: UInt64, byKey: [String: Claim])>((1, [:]))

    /// The key of the store at `path`, so that two spellings of one file are one store
    /// (``GraphStore/StorePath/canonical(_:)``).
    static func key(_ path: String) -> String {
        StorePath.canonical(URL(fileURLWithPath: path)).path
    }

    /// Claims the store at `path` for a container being opened; returns the claim's token,
    /// which ``release(_:token:)`` needs.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/storeLocked(path:)`` when a container of this
    ///   process has it open, or is opening it.
    /// - Complexity: O(1).
    static func claim(_ path: String) throws(GraphStoreError) -> UInt64 {
        let key = key(path)
        let token = claims.withLock { claims -> UInt64? in
            guard claims.byKey[key] == nil else { return nil }
            let token = claims.next
            claims.next += 1
            claims.byKey[key] = Claim(token: token)
            return token
        }
        guard let token else { throw .storeLocked(path: path) }
        return token
    }

    /// Whether a container of this process has the store at `path` open (or is opening it):
    /// nothing else may then open the file.
    ///
    /// - Complexity: O(1).
    static func isOpen(_ path: String) -> Bool {
        let key = key(path)
        return claims.withLock { $0.byKey[key] != nil }
    }

    /// Reads the whole file at `filePath`, a file of the store claimed at `path`, through a
    /// descriptor that stays open until the store is released.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)``.
    /// - Complexity: O(file size).
    static func read(_ filePath: String, of path: String) throws(GraphStoreError) -> Data {
        let descriptor = open(filePath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .fileOperationFailed(path: filePath, operation: "open", reason: String(cString: strerror(errno)))
        }
        let key = key(path)
        claims.withLock { $0.byKey[key]?.descriptors.append(descriptor) }
        return try FileReader.contents(ofOpenFile: descriptor, path: filePath)
    }

    /// Ends the claim `token` on the store at `path` once its connection is closed (or it
    /// failed to open), closing the descriptors ``read(_:of:)`` kept. Does nothing when that
    /// claim has ended already (another container may hold the store now).
    ///
    /// - Complexity: O(descriptors).
    static func release(_ path: String, token: UInt64) {
        // By the token, not the path: what the path resolves to may have changed since.
        let descriptors = claims.withLock { claims -> [Int32] in
            guard let key = claims.byKey.first(where: { $0.value.token == token })?.key else { return [] }
            return claims.byKey.removeValue(forKey: key)?.descriptors ?? []
        }
        for descriptor in descriptors { close(descriptor) }
    }
}
