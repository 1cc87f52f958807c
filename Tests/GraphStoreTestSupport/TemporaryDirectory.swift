import Foundation
@testable import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh, uniquely named directory under the system's temporary directory, one per test.
///
/// Nothing removes it by itself: call ``remove()``, typically in a `defer`.
///
/// ```swift
/// let directory = try TemporaryDirectory()
/// defer { directory.remove() }
/// try Data("hi".utf8).write(to: directory.file("a.txt"))
/// #expect(try directory.entries() == ["a.txt"])
/// ```
public struct TemporaryDirectory: Sendable {
    public let url: URL

    /// Creates the directory; its name carries the calling test's name, to tell leftovers apart.
    public init(function: String = #function) throws {
        let name = "GraphStoreTests-\(function.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString)"
        url = FileManager.default.temporaryDirectory.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A URL for `name` inside the directory (nothing is created).
    public func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    /// The names in the directory, sorted; hidden files included.
    public func entries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    /// Deletes the directory and everything in it, also after a test made it read-only.
    ///
    /// A container a test released without `close()` closes in the background, writing its
    /// last snapshot into the directory: that close is waited for first (a write between the
    /// removal of the files and of the directory would leave both behind).
    public func remove() {
        StoreClosings.waitUntilClosed(under: url.standardizedFileURL.path)
        _ = chmod(url.path, 0o700)
        try? FileManager.default.removeItem(at: url)
    }
}
