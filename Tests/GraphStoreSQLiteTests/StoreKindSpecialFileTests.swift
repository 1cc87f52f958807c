import ExampleModel
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
/// refused at once, naming it: reading it would block until some writer came, and a SQLite
/// store's container would have SQLite write its pages into it and block reading them back.
@Suite(.timeLimit(.minutes(1))) struct StoreKindSpecialFileTests {
    /// A Core Data model given as a pipe (`--model`) is refused too, not read.
    @Test func aModelThatIsAPipeIsRefusedWithoutBeingRead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (pipe, link) = try SQLiteTestKit.pipeAndLink(in: directory)
        for url in [pipe, link] {
            let error = SQLiteTestKit.storeError { _ = try CoreDataModelDescription.read(from: url) }
            guard case .fileOperationFailed(let path, _, let reason)? = error else {
                Issue.record("expected fileOperationFailed for \(url.lastPathComponent), got \(String(describing: error))")
                continue
            }
            #expect(path == url.path)
            #expect(reason.contains("pipe"), "\(reason)")
        }
    }

    @Test func aPipeIsRefusedWithoutBeingRead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (pipe, link) = try SQLiteTestKit.pipeAndLink(in: directory)
        for url in [pipe, link] {
            let reads: [() throws -> Void] = [
                { _ = try StoreKind.detect(at: url) }, { _ = try PlainSQLiteImporter.snapshot(from: url) }, { _ = try SQLiteTestKit.open(url) },
            ]
            for read in reads {
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

/// Pipes beside a SQLite store, and a pipe where a database is asked about.
@Suite(.timeLimit(.minutes(1))) struct SQLiteStoreSpecialFileTests {
    /// SQLite opens a hot `-journal` for reading, so a pipe of that name blocked the open; one
    /// named `-wal` or `-shm` failed the first write as an I/O error of the database. Each is
    /// refused, naming it, and the store opens once it is gone.
    @Test(arguments: ["-journal", "-wal", "-shm"])
    func aPipeBesideTheStoreIsRefused(suffix: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try await SQLiteTestKit.makeStore(url, tag: "kept")
        let pipe = url.path + suffix
        try #require(mkfifo(pipe, 0o600) == 0)
        let error = SQLiteTestKit.storeError { _ = try SQLiteTestKit.open(url) }
        guard case .fileOperationFailed(let named, _, let reason)? = error else {
            Issue.record("expected fileOperationFailed naming \(suffix), got \(String(describing: error))")
            return
        }
        #expect(named.hasSuffix("store.sqlite" + suffix), "\(named)")
        #expect(reason.contains("not a regular file"), "\(reason)")
        #expect(unlink(pipe) == 0)
        let reopened = try SQLiteTestKit.open(url)
        #expect(try reopened.mainContext.fetch(FetchDescriptor<ExampleModel.Tag>()).map(\.name) == ["kept"])
        try await reopened.close()
    }

    @Test func aPipeIsNotASQLiteDatabase() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pipe = directory.file("pipe.sqlite")
        try #require(mkfifo(pipe.path, 0o600) == 0)
        #expect(!SQLiteStoreInfo.isSQLiteDatabase(at: pipe))
    }
}
