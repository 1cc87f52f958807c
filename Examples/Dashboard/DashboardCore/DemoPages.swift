import Foundation

/// Generated pages in the Tumblr API v2 response shape, for the demo: the same on every run,
/// so running the demo twice upserts the same posts.
public enum DemoPages {
    static let blogs = ["staff", "engineering", "photos-of-cats", "changes", "swiftlang", "linuxdaily"]
    static let words = ["graph", "snapshot", "context", "merge", "commit", "swift", "tags", "notes", "dashboard", "linux"]
    static let tags = ["swift", "linux", "databases", "cats", "photography", "release notes", "concurrency", "design"]
    static let types = ["text", "photo", "quote", "link", "video", "answer", "audio", "chat", "blocks"]

    /// `count` pages of `postsPerPage` posts each, as JSON response bodies.
    public static func pages(count: Int = 20, postsPerPage: Int = 50) -> [Data] {
        (0..<count).map { page in
            let posts = (0..<postsPerPage).map { index -> [String: Any] in
                let n = page * postsPerPage + index
                var post: [String: Any] = [
                    "id": 700_000_000_000_000_000 + Int64(n) * 7_919,
                    "id_string": String(700_000_000_000_000_000 + Int64(n) * 7_919),
                    "blog_name": blogs[n % blogs.count],
                    "type": types[n % types.count],
                    "timestamp": 1_700_000_000 + n * 3_600,
                    "note_count": (n * 37) % 1_000,
                    "tags": [tags[n % tags.count], tags[(n / 3) % tags.count]],
                    "summary": "\(words[n % words.count].capitalized) \(words[(n / 2) % words.count]) #\(n)",
                ]
                if n % 9 != 8 { post["body"] = "<p>Post \(n): \(words[(n / 5) % words.count]) and \(words[(n / 7) % words.count]).</p>" }
                if n % 97 == 96 { post["id"] = nil; post["id_string"] = nil }  // a broken post: skipped
                return post
            }
            let body: [String: Any] = ["meta": ["status": 200, "msg": "OK"], "response": ["posts": posts, "total_posts": count * postsPerPage]]
            return try! JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        }
    }
}
