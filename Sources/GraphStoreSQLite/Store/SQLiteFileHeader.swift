import Foundation
import GraphStore

/// Checks the first 100 bytes of an existing store file before SQLite opens it, so a file that
/// is not a SQLite database, or was cut short, gets an error naming the byte where it goes
/// wrong, and SQLite never touches it.
///
/// See <https://www.sqlite.org/fileformat.html#the_database_header>.
enum SQLiteFileHeader {
    /// "SQLite format 3" and a NUL.
    static let magic: [UInt8] = Array("SQLite format 3".utf8) + [0]

    /// The files SQLite keeps beside a database: its rollback journal, write-ahead log and
    /// shared memory.
    static let siblingSuffixes = ["-journal", "-wal", "-shm"]
    static let size = 100

    /// Checks the file at `path`, if there is one. An empty file passes: SQLite treats it as an
    /// empty database, which the store initializes.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` for a file that does not
    ///   start with the SQLite magic, ends inside the header, or is shorter than the page count
    ///   its header records; ``GraphStoreError/fileOperationFailed(path:operation:reason:)``
    ///   when it cannot be read, or it (or its `-journal`, `-wal` or `-shm`) is a directory,
    ///   pipe, device or socket.
    /// - Complexity: reads 100 bytes.
    static func check(path: String) throws(GraphStoreError) {
        let fileSize: Int
        // Through a symbolic link: the database SQLite would open, not the link.
        switch FileStatus.of(path: path) {
        case .success(let status):
            // SQLite would open a pipe and write its pages into it, then block reading them back.
            if let irregularity = status.irregularity {
                throw .fileOperationFailed(path: path, operation: "read the SQLite header", reason: irregularity)
            }
            fileSize = status.size
        case .failure(let error) where error.code == ENOENT: fileSize = 0
        case .failure(let error): throw .fileOperationFailed(path: path, operation: "read the SQLite header", reason: error.message)
        }
        // SQLite counts any file beside the database as present, and opens a hot journal for
        // reading: a pipe named `-journal` would block the open until some writer came, one
        // named `-wal` or `-shm` would fail its first write as an I/O error of the database.
        for suffix in siblingSuffixes {
            if case .success(let status) = FileStatus.of(path: path + suffix), let irregularity = status.irregularity {
                throw .fileOperationFailed(path: path + suffix, operation: "read the SQLite header", reason: irregularity)
            }
        }
        guard fileSize > 0 else { return }
        let header: Data
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            header = try handle.read(upToCount: size) ?? Data()
        } catch {
            throw .fileOperationFailed(path: path, operation: "read the SQLite header", reason: "\(error)")
        }
        guard header.count >= magic.count, header.starts(with: magic) else {
            let start = header.prefix(16).map { String(format: "%02x", $0) }.joined(separator: " ")
            throw .damagedFile(path: path, offset: 0, reason: "not a SQLite database: it starts with \(start), not \"SQLite format 3\"")
        }
        guard header.count == size else {
            throw .damagedFile(path: path, offset: header.count, reason: "the file ends inside the \(size)-byte SQLite header")
        }
        let rawPageSize = Int(header.bigEndian(UInt16.self, at: 16))
        let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
        let changeCounter = header.bigEndian(UInt32.self, at: 24)
        let pageCount = Int(header.bigEndian(UInt32.self, at: 28))
        let validFor = header.bigEndian(UInt32.self, at: 92)
        // The page count is trusted only when written by the same change as the counter, and
        // only without a write-ahead log, whose frames may hold pages the file does not yet, or
        // a rollback journal: a process killed while committing in rollback mode (a new file's
        // first transaction, before it turns to write-ahead logging) can leave the header of the
        // grown file written and its last pages not, which SQLite rolls back from that journal.
        guard changeCounter == validFor, pageCount > 0, !hasContent(path + "-wal"), !hasContent(path + "-journal") else { return }
        let expected = pageCount * pageSize
        if fileSize < expected {
            throw .damagedFile(
                path: path, offset: fileSize,
                reason: "the file is truncated: its header counts \(pageCount) page(s) of \(pageSize) bytes (\(expected) bytes), the file has \(fileSize)")
        }
    }

    /// Whether a file is at `path` (through symbolic links) and holds a byte.
    static func hasContent(_ path: String) -> Bool {
        (FileStatus.size(atPath: path) ?? 0) > 0
    }
}

extension FileStatus {
    /// The status of the file at `path` (through symbolic links), or the error of `operation`
    /// naming it: "no such file" when there is none, else what the system says.
    ///
    /// - Throws: ``GraphStore/GraphStoreError/fileOperationFailed(path:operation:reason:)``.
    /// - Complexity: one `stat`.
    static func found(atPath path: String, operation: String) throws(GraphStoreError) -> FileStatus {
        switch of(path: path) {
        case .success(let status): return status
        case .failure(let error):
            throw .fileOperationFailed(path: path, operation: operation, reason: error.code == ENOENT ? "no such file" : error.message)
        }
    }
}

extension Data {
    /// The big-endian integer at byte `offset`.
    fileprivate func bigEndian<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        self[(startIndex + offset)..<(startIndex + offset + MemoryLayout<T>.size)].reduce(T(0)) { $0 << 8 | T($1) }
    }
}
