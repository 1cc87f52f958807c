import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

@testable import GraphStoreSQLite

/// The claims of this process on SQLite stores: one container's, released only by it.
@Suite struct OpenSQLiteStoresTests {
    /// A container released after another opened the same store in its place must not end
    /// that newer claim (its deinit released whatever claim the path had).
    @Test func anEndedClaimDoesNotReleaseTheNextOne() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("store.sqlite").path
        let first = try OpenSQLiteStores.claim(path)
        #expect(throws: GraphStoreError.self) { _ = try OpenSQLiteStores.claim(path) }
        OpenSQLiteStores.release(path, token: first)
        let second = try OpenSQLiteStores.claim(path)
        OpenSQLiteStores.release(path, token: first)
        #expect(OpenSQLiteStores.isOpen(path))
        OpenSQLiteStores.release(path, token: second)
        #expect(!OpenSQLiteStores.isOpen(path))
    }

    /// A store reached through a linked directory is the same store, whether its file exists
    /// yet or not.
    @Test func aPathThroughALinkedDirectoryIsTheSameStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let real = directory.file("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let link = directory.file("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let viaLink = link.appendingPathComponent("store.sqlite").path
        let direct = real.appendingPathComponent("store.sqlite").path

        let token = try OpenSQLiteStores.claim(viaLink)
        #expect(OpenSQLiteStores.isOpen(direct))
        #expect(FileManager.default.createFile(atPath: direct, contents: Data()))
        #expect(OpenSQLiteStores.isOpen(viaLink) && OpenSQLiteStores.isOpen(direct))
        OpenSQLiteStores.release(direct, token: token)
        #expect(!OpenSQLiteStores.isOpen(viaLink))
    }

    /// A store file that is a link to another store is that store.
    @Test func aLinkedStoreFileIsTheStoreItPointsTo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let real = directory.file("a.sqlite")
        #expect(FileManager.default.createFile(atPath: real.path, contents: Data()))
        let link = directory.file("b.sqlite")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let token = try OpenSQLiteStores.claim(real.path)
        #expect(throws: GraphStoreError.self) { _ = try OpenSQLiteStores.claim(link.path) }
        #expect(OpenSQLiteStores.isOpen(link.path))
        OpenSQLiteStores.release(link.path, token: token)
        #expect(!OpenSQLiteStores.isOpen(real.path))
    }
}
