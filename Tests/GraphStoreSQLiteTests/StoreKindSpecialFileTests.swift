import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pipe given where a store or database is expected, directly or through a symbolic link, is
/// refused at once, naming it: reading it would block until some writer came.
@Suite struct StoreKindSpecialFileTests {
    @Test func aPipeIsRefusedWithoutBeingRead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pipe = directory.file("store.sqlite"), link = directory.file("link.sqlite")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: pipe.lastPathComponent)
        for url in [pipe, link] {
            for read in [{ _ = try StoreKind.detect(at: url) }, { _ = try PlainSQLiteImporter.snapshot(from: url) }] as [() throws -> Void] {
                let error = SQLiteTestKit.storeError { try read() }
                guard case .fileOperationFailed(_, _, let reason)? = error else {
                    Issue.record("expected fileOperationFailed for \(url.lastPathComponent), got \(String(describing: error))")
                    continue
                }
                #expect(reason.contains("not a regular file"), "\(reason)")
            }
        }
    }
}

/// A pipe given as a SQLite store is refused when the container opens, naming it: SQLite
/// would open it, write its pages into it and block reading them back.
@Suite struct SQLiteStoreSpecialFileTests {
    @Test func aPipeAsTheStoreIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pipe = directory.file("store.sqlite"), link = directory.file("link.sqlite")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: pipe.lastPathComponent)
        for url in [pipe, link] {
            let error = SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url) }
            guard case .fileOperationFailed(_, _, let reason)? = error else {
                Issue.record("expected fileOperationFailed for \(url.lastPathComponent), got \(String(describing: error))")
                continue
            }
            #expect(reason.contains("not a regular file"), "\(reason)")
        }
    }
}
