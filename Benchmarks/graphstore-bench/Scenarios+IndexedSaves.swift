import ExampleModel
import Foundation
import GraphStore

/// `Post` without its sorted indexes: what a save costs without them.
struct PlainPost: Entity {
    var id: Int64
    var blogName: String
    var kind: Post.Kind
    var date: Date
    var summary: String
    var body: String?
    var noteCount: Int
    var tagIDs: [Tag.ID]

    init(_ post: Post) {
        id = post.id
        blogName = post.blogName
        kind = post.kind
        date = post.date
        summary = post.summary
        body = post.body
        noteCount = post.noteCount
        tagIDs = post.tagIDs
    }

    static var relationships: [Relationship<PlainPost>] { [.toMany(\.tagIDs, Tag.self, deleteRule: .nullify)] }
}

extension Scenarios {
    // MARK: - 10. Saves with sorted indexes

    /// One changed post, and a batch of 500 new posts, saved into a store of 100,000 posts:
    /// `Post` (three sorted indexes) against `PlainPost` (none). Both sides are GraphStore;
    /// the `sqlite` column holds the no-index figure.
    /// Saves per single-save row, with and without indexes alternating. A median of 200 moved
    /// by 10–20 % between runs on a busy machine; 2,000 distinct posts (7,919 and 104,729 are
    /// prime to 100,000) keep it within a few per cent and take well under a second.
    static var indexedSaveRounds: Int { 2_000 }

    func indexedSaves() throws -> [Row] {
        let count = n(100_000)
        let posts = benchPosts(count)
        let indexed = try GraphContainer(for: [Post.self, Tag.self], store: .inMemory)
        let plain = try GraphContainer(for: [PlainPost.self, Tag.self], store: .inMemory)
        let fill = plain.newBackgroundContext()
        for tag in benchTags { fill.insert(tag) }
        for post in posts { fill.insert(PlainPost(post)) }
        try fill.save()
        try fillContainer(indexed, posts: posts)
        var one: (indexed: [Double], plain: [Double]) = ([], [])
        var batch: (indexed: [Double], plain: [Double]) = ([], [])
        for round in 0..<Self.indexedSaveRounds {
            var post = posts[(round * 7919) % count]
            post.noteCount += 1
            post.date = post.date.addingTimeInterval(1)
            one.indexed.append(try time {
                indexed.mainContext.insert(post)
                try indexed.mainContext.save()
            })
            one.plain.append(try time {
                plain.mainContext.insert(PlainPost(post))
                try plain.mainContext.save()
            })
        }
        var plainField: (indexed: [Double], plain: [Double]) = ([], [])
        for round in 0..<Self.indexedSaveRounds {
            var post = posts[(round * 104_729) % count]
            post.summary = "edited \(round)"
            plainField.indexed.append(try time {
                indexed.mainContext.insert(post)
                try indexed.mainContext.save()
            })
            plainField.plain.append(try time {
                plain.mainContext.insert(PlainPost(post))
                try plain.mainContext.save()
            })
        }
        for round in 0..<20 {
            let fresh = benchPosts(500, first: Int64(count + 1 + round * 500))
            batch.indexed.append(try time {
                for post in fresh { indexed.mainContext.insert(post) }
                try indexed.mainContext.save()
            })
            batch.plain.append(try time {
                for post in fresh { plain.mainContext.insert(PlainPost(post)) }
                try plain.mainContext.save()
            })
        }
        return [
            Row(scenario: "10. save one changed post, store of \(count)", variant: "3 indexes vs none", graphStore: median(one.indexed) * 1000, sqlite: median(one.plain) * 1000, unit: "µs", note: "SQLite column: the same save without indexes"),
            Row(scenario: "10. save one post with an unindexed field changed, store of \(count)", variant: "3 indexes vs none", graphStore: median(plainField.indexed) * 1000, sqlite: median(plainField.plain) * 1000, unit: "µs", note: "SQLite column: the same save without indexes"),
            Row(scenario: "10. save 500 new posts, store of \(count)", variant: "3 indexes vs none", graphStore: median(batch.indexed), sqlite: median(batch.plain), note: "SQLite column: the same save without indexes"),
        ]
    }
}

extension Scenarios {
    // MARK: - 10. Memory of the sorted indexes

    /// Peak resident memory and heap in use, in separate processes, of a store of 100,000
    /// posts opened from a snapshot and held: `Post` (three sorted indexes) against `PlainPost`
    /// (none). The `sqlite` column holds the no-index figure.
    func indexMemory(executable: String) async throws -> [Row] {
        let count = n(100_000)
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let posts = benchPosts(count)
        let indexedURL = directory.appendingPathComponent("indexed.json.gz")
        let plainURL = directory.appendingPathComponent("plain.json.gz")
        let indexed = try GraphContainer(for: [Post.self, Tag.self], store: .file(indexedURL))
        try fillContainer(indexed, posts: posts)
        try await indexed.close()
        let plain = try GraphContainer(for: [PlainPost.self, Tag.self], store: .file(plainURL))
        let fill = plain.newBackgroundContext()
        for tag in benchTags { fill.insert(tag) }
        for post in posts { fill.insert(PlainPost(post)) }
        try fill.save()
        try await plain.close()
        var peak: (indexed: [Double], plain: [Double]) = ([], [])
        var heap: (indexed: [Double], plain: [Double]) = ([], [])
        for _ in 0..<3 {
            let a = try probeValues(executable, ["--memory-probe", "graphstore-indexed", indexedURL.path])
            let b = try probeValues(executable, ["--memory-probe", "graphstore-plain", plainURL.path])
            peak.indexed.append(a[0] / 1024)
            heap.indexed.append(a[1] / 1024)
            peak.plain.append(b[0] / 1024)
            heap.plain.append(b[1] / 1024)
        }
        return [
            Row(scenario: "10. peak resident memory, \(count) posts held", variant: "3 indexes vs none", graphStore: median(peak.indexed), sqlite: median(peak.plain), unit: "MiB", note: "separate processes, median of 3; SQLite column: the same posts without indexes"),
            Row(scenario: "10. resident memory after open, \(count) posts held", variant: "3 indexes vs none", graphStore: median(heap.indexed), sqlite: median(heap.plain), unit: "MiB", note: "VmRSS once opened and fetched; the difference is the indexes"),
        ]
    }

    /// Runs a probe process and reads the numbers it prints on one line.
    private func probeValues(_ executable: String, _ arguments: [String]) throws -> [Double] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let values = String(decoding: output, as: UTF8.self).split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return values.count == 2 ? values : [.nan, .nan]
    }
}

/// `--memory-probe graphstore-indexed|graphstore-plain PATH`: opens a snapshot of posts with
/// or without their sorted indexes, holds every post, prints peak RSS and the RSS once
/// opened (KiB).
func indexMemoryProbe(_ kind: String, _ path: String) async throws {
    let resident: Int
    if kind == "graphstore-indexed" {
        let container = try GraphContainer(for: [Post.self, Tag.self], store: .file(URL(fileURLWithPath: path)))
        let posts = try container.mainContext.fetch(FetchDescriptor<Post>())
        precondition(!posts.isEmpty)
        resident = residentBytes()
        try await container.close()
    } else {
        let container = try GraphContainer(for: [PlainPost.self, Tag.self], store: .file(URL(fileURLWithPath: path)))
        let posts = try container.mainContext.fetch(FetchDescriptor<PlainPost>())
        precondition(!posts.isEmpty)
        resident = residentBytes()
        try await container.close()
    }
    print(peakResidentKiB(), resident / 1024)
}

/// Resident memory of this process now, in bytes (Linux `VmRSS`).
func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }
    return 0
}
