import Foundation
import GraphStore

/// URLs with a base (`URL(string: "sub/file.txt", relativeTo: base)`, a file URL made from a
/// relative path) beside ones without, wherever a value can hold a URL: a field, an optional,
/// an array, a nested value, a dictionary's values. A URL with a base is `==` only to a URL with
/// the same relative string and base, so one read back from its absolute string is another URL.
/// Version 2 adds a field.
public enum RelativeURLModels {
    /// The objects of `type` in the store, by id: opened at `version`, read, closed.
    public static func fetch<E: Entity>(_ type: E.Type, _ store: StoreConfiguration, version: Int = 1, migrations: [SchemaMigration] = [])
        async throws -> [E] where E.ID == Int
    {
        try await StoreRoundTrips.fetch(type, store, version: version, migrations: migrations)
    }

    public struct Place: Codable, Sendable, Equatable {
        public var home: URL
        public var mirror: URL?
    }

    public struct V1: Entity, Equatable {
        public var id: Int
        public var link: URL
        public var origin: URL?
        public var links: [URL]
        public var place: Place
        public var byName: [String: URL]
        public static var entityName: String { "Link" }
    }

    /// Version 1 with `origin` renamed to `source` and no new model version: a store of
    /// version 1 must be refused, not opened with every `origin` dropped.
    public struct Renamed: Entity {
        public var id: Int
        public var link: URL
        public var source: URL?
        public var links: [URL]
        public var place: Place
        public var byName: [String: URL]
        public static var entityName: String { "Link" }
    }

    public struct V2: Entity, Equatable {
        public var id: Int
        public var link: URL
        public var origin: URL?
        public var links: [URL]
        public var place: Place
        public var byName: [String: URL]
        public var note: String
        public static var entityName: String { "Link" }
    }

    public static let migrations = [SchemaMigration(from: 1, to: 2, [.addField("note", in: "Link", default: .string(""))])]

    public static let base = URL(string: "https://a.example/dir/")!

    /// `sub/file.txt` relative to ``base``: its absolute string is `https://a.example/dir/sub/file.txt`.
    public static let relative = URL(string: "sub/file.txt", relativeTo: base)!

    /// URLs with a base and without.
    public static let urls: [URL] = [
        relative,
        URL(string: "../up.html?q=1#top", relativeTo: base)!,
        URL(fileURLWithPath: "notes/today.txt", relativeTo: URL(fileURLWithPath: "/tmp/library/", isDirectory: true)),
        URL(string: "https://b.example/x%20y?z=1")!,
        URL(string: "file:///tmp/a%20b")!,
        // A relative string without a base: its absolute string is itself.
        URL(string: "just/relative")!,
        // Strings JSON readers take for non-finite doubles, with a base and without.
        URL(string: "NaN", relativeTo: base)!,
        URL(string: "Infinity")!,
    ]

    /// Every URL of ``urls`` in every place, and a few objects holding only URLs without a base.
    public static let links: [V1] = (0..<16).map(link)

    public static func link(_ n: Int) -> V1 {
        let url = urls[n % urls.count]
        let other = urls[(n + 1) % urls.count]
        return V1(
            id: n, link: url, origin: n % 3 == 0 ? nil : other, links: [other, url],
            place: Place(home: url, mirror: n % 2 == 0 ? other : nil), byName: ["a": url, "b": other])
    }

    /// What version 2 reads from `link`.
    public static func migrated(_ link: V1) -> V2 {
        V2(id: link.id, link: link.link, origin: link.origin, links: link.links, place: link.place, byName: link.byName, note: "")
    }
}
