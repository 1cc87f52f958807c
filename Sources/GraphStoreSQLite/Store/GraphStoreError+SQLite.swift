import Foundation
import GRDB
import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension GraphStoreError {
    /// The store error for a failure while doing `operation` on the SQLite store at `path`.
    ///
    /// SQLite's "busy" and "locked" mean another connection holds the file (the store keeps
    /// an exclusive lock while open), "not a database" and "corrupt" mean a damaged file, and
    /// everything else (disk full, I/O, permissions) is a failed file operation.
    static func sqlite(_ error: any Error, path: String, operation: String) -> GraphStoreError {
        if let error = error as? GraphStoreError { return error }
        guard let error = error as? DatabaseError else {
            return .fileOperationFailed(path: path, operation: operation, reason: "\(error)")
        }
        let message = error.message ?? "SQLite error \(error.extendedResultCode.rawValue)"
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return .storeLocked(path: path)
        case .SQLITE_NOTADB:
            return .damagedFile(path: path, offset: nil, reason: "SQLite does not read it as a database (\(message))")
        case .SQLITE_CORRUPT:
            return .damagedFile(path: path, offset: nil, reason: "SQLite reports it malformed (\(message))")
        case .SQLITE_FULL:
            return .fileOperationFailed(path: path, operation: operation, reason: "the disk or the database is full (\(message))")
        case .SQLITE_READONLY where error.extendedResultCode == .SQLITE_READONLY_ROLLBACK:
            // A hot rollback journal: a writer was stopped mid-transaction, and a read-only
            // connection cannot roll it back.
            return .fileOperationFailed(
                path: path, operation: operation,
                reason: "\(path)-journal holds a transaction a program was stopped in the middle of, which a read-only reader cannot roll back; open the database once with its app (or any SQLite program that may write it) and try again (SQLite code \(error.extendedResultCode.rawValue))")
        case .SQLITE_CANTOPEN:
            let why = cannotOpenReason(path).map { ": \($0)" } ?? ""
            return .fileOperationFailed(path: path, operation: operation, reason: "\(message) (SQLite code \(error.extendedResultCode.rawValue))\(why)")
        default:
            return .fileOperationFailed(path: path, operation: operation, reason: "\(message) (SQLite code \(error.extendedResultCode.rawValue))")
        }
    }

    /// Why SQLite could not open or create the database at `path`, which SQLite does not say
    /// ("unable to open database file"): its folder is missing or cannot be written (the
    /// database and the files SQLite keeps beside it are made there), or the file itself cannot
    /// be read and written. `nil` when none of these is found.
    static func cannotOpenReason(_ path: String) -> String? {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        func failure(_ path: String, _ mode: Int32) -> String? {
            guard access(path, mode) != 0 else { return nil }
            return String(cString: strerror(errno))
        }
        if let error = failure(folder, F_OK) { return "its folder \(folder) cannot be reached (\(error))" }
        if let error = failure(folder, W_OK | X_OK) {
            return "its folder \(folder) cannot be written (\(error)), and SQLite makes the database and its journal files there"
        }
        if access(path, F_OK) == 0, let error = failure(path, R_OK | W_OK) { return "the file cannot be read and written (\(error))" }
        return nil
    }

    /// The store error for an object of `entity` that could not be encoded or decoded.
    static func sqliteCoding(_ error: any Error, path: String, entity: String, id: String?) -> GraphStoreError {
        if let error = error as? GraphStoreError { return error }
        let reason: String
        switch error {
        case let error as EncodingError:
            switch error {
            case .invalidValue(_, let context): reason = describe(context.codingPath, context.debugDescription)
            @unknown default: reason = "\(error)"
            }
        case let error as DecodingError:
            switch error {
            case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
                reason = describe(context.codingPath, context.debugDescription)
            @unknown default: reason = "\(error)"
            }
        default:
            reason = "\(error)"
        }
        return .codingFailed(path: path, entity: entity, id: id, reason: reason)
    }

    private static func describe(_ codingPath: [any CodingKey], _ message: String) -> String {
        guard !codingPath.isEmpty else { return message }
        let path = codingPath.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
        return "\(message) (at \(path.hasPrefix(".") ? String(path.dropFirst()) : path))"
    }
}
