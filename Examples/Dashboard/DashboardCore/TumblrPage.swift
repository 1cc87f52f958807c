import ExampleModel
import Foundation

/// One page of a Tumblr API v2 `/posts` response: `{"meta": …, "response": {"posts": [...]}}`.
///
/// Decoding is lenient, as a client of a real API must be: a post without an id is skipped
/// (and counted), an unknown post type becomes ``Post/Kind/other``, missing text fields are
/// empty, and fields GraphStore does not keep are ignored.
public struct TumblrPage: Decodable, Sendable {
    /// The posts that could be read.
    public var posts: [TumblrPost]
    /// Posts skipped because they had no usable id.
    public var skipped: Int

    private enum CodingKeys: String, CodingKey { case response }
    private enum ResponseKeys: String, CodingKey { case posts }

    public init(posts: [TumblrPost], skipped: Int = 0) {
        self.posts = posts
        self.skipped = skipped
    }

    public init(from decoder: any Decoder) throws {
        let response = try decoder.container(keyedBy: CodingKeys.self).nestedContainer(keyedBy: ResponseKeys.self, forKey: .response)
        var array = try response.nestedUnkeyedContainer(forKey: .posts)
        var posts: [TumblrPost] = [], skipped = 0
        while !array.isAtEnd {
            if let post = try array.decode(LenientPost.self).post { posts.append(post) } else { skipped += 1 }
        }
        self.posts = posts
        self.skipped = skipped
    }

    /// Reads a page from a response body.
    ///
    /// - Throws: `DecodingError` when the body is not a `/posts` response at all.
    public static func parse(_ data: Data) throws -> TumblrPage {
        try JSONDecoder().decode(TumblrPage.self, from: data)
    }
}

/// The fields of a Tumblr post the dashboard keeps.
public struct TumblrPost: Codable, Sendable, Hashable {
    public var id: Int64
    public var blogName: String
    public var type: String
    public var timestamp: Int64
    public var noteCount: Int
    public var tags: [String]
    public var summary: String
    public var body: String?

    public init(id: Int64, blogName: String, type: String, timestamp: Int64, noteCount: Int, tags: [String], summary: String, body: String?) {
        self.id = id
        self.blogName = blogName
        self.type = type
        self.timestamp = timestamp
        self.noteCount = noteCount
        self.tags = tags
        self.summary = summary
        self.body = body
    }

    /// The post as the example model's ``Post``, with its tags' ids.
    public func post(tagIDs: [Tag.ID]) -> Post {
        Post(
            id: id, blogName: blogName, kind: Post.Kind(rawValue: type) ?? .other,
            date: Date(timeIntervalSince1970: TimeInterval(timestamp)), summary: summary, body: body,
            noteCount: noteCount, tagIDs: tagIDs)
    }
}

/// Decodes one post without failing on missing or oddly typed fields.
private struct LenientPost: Decodable {
    let post: TumblrPost?

    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        guard let container = try? decoder.container(keyedBy: Key.self) else {
            post = nil
            return
        }
        func string(_ key: String) -> String? { try? container.decodeIfPresent(String.self, forKey: Key(key)) }
        func int(_ key: String) -> Int64? { try? container.decodeIfPresent(Int64.self, forKey: Key(key)) }
        guard let id = int("id") ?? string("id_string").flatMap(Int64.init) else {
            post = nil
            return
        }
        let type = string("type") ?? "other"
        // The type's own text: legacy posts have body / caption / text / question; NPF posts
        // carry a summary.
        let body = string("body") ?? string("caption") ?? string("text") ?? string("question") ?? string("description")
        let summary = string("summary") ?? string("title") ?? body.map { String($0.prefix(140)) } ?? ""
        post = TumblrPost(
            id: id, blogName: string("blog_name") ?? "unknown", type: type, timestamp: int("timestamp") ?? 0,
            noteCount: Int(int("note_count") ?? 0),
            tags: (try? container.decodeIfPresent([String].self, forKey: Key("tags"))) ?? [],
            summary: summary, body: body)
    }
}
