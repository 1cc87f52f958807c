import ExampleModel
import Foundation
import GRDB
import GraphStore

extension Scenarios {
    // MARK: - 7. Size and memory

    func sizeAndMemory(executable: String) async throws -> [Row] {
        let count = n(100_000)
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let posts = benchPosts(count)
        let sqliteURL = try makeFilledPostDatabase(posts, in: directory)
        var rows: [Row] = []
        var snapshotURL = directory
        for (format, compression) in [(SnapshotFormat.json, Compression.gzip), (.binaryPropertyList, .gzip), (.json, .none)] {
            let url = directory.appendingPathComponent("posts.\(format.fileExtension)\(compression == .gzip ? ".gz" : "")")
            let container = try GraphContainer(for: benchModel, store: .file(url, format: format, compression: compression))
            try fillContainer(container, posts: posts)
            try await container.close()
            if format == .json && compression == .gzip { snapshotURL = url }
            rows.append(Row(scenario: "7. file size, \(count) posts", variant: "\(format.rawValue)+\(compression.rawValue)", graphStore: Double(fileSize(url)) / 1024, sqlite: Double(fileSize(sqliteURL)) / 1024, unit: "KiB"))
        }
        let gsMemory = try probe(executable, ["--memory-probe", "graphstore", snapshotURL.path])
        let sqMemory = try probe(executable, ["--memory-probe", "sqlite", sqliteURL.path])
        rows.append(Row(scenario: "7. peak resident memory, \(count) posts", variant: "open + hold all", graphStore: Double(gsMemory) / 1024, sqlite: Double(sqMemory) / 1024, unit: "MiB", note: "separate processes; SQLite fetches all rows into structs"))
        return rows
    }

    func probe(_ executable: String, _ arguments: [String]) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Int(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}

/// `--memory-probe graphstore|sqlite PATH`: opens the store, holds every post, prints peak RSS in KiB.
func memoryProbe(_ kind: String, _ path: String) async throws {
    switch kind {
    case "graphstore-indexed", "graphstore-plain":
        try await indexMemoryProbe(kind, path)
        return
    case "graphstore":
        let container = try GraphContainer(for: benchModel, store: .file(URL(fileURLWithPath: path)))
        let posts = try container.mainContext.fetch(FetchDescriptor<Post>())
        precondition(!posts.isEmpty)
        try await container.close()
    default:
        let queue = try DatabaseQueue(path: path)
        let posts = try syncRead(queue) { db in try PostRecord.fetchAll(db) }
        let links = try syncRead(queue) { db in try PostTagRecord.fetchAll(db) }
        precondition(!posts.isEmpty && !links.isEmpty)
    }
    print(peakResidentKiB())
}

extension Scenarios {
    // MARK: - 8. Snapshot files of 50,000 posts

    /// For every format × compression: the writer's encode+compress+write time, the file size,
    /// and the time to open the file (until the first fetch returns).
    func snapshotFiles() async throws -> [Row] {
        let count = n(50_000)
        let posts = benchPosts(count)
        var rows: [Row] = []
        for format in [SnapshotFormat.json, .binaryPropertyList] {
            for compression in [Compression.gzip, .none] {
                let directory = scratchDirectory()
                defer { try? FileManager.default.removeItem(at: directory) }
                let url = directory.appendingPathComponent("posts.\(format.fileExtension)\(compression == .gzip ? ".gz" : "")")
                var writes: [Double] = [], opens: [Double] = []
                for repetition in 0..<(harness.warmups + harness.repetitions) {
                    try? FileManager.default.removeItem(at: url)
                    // Coalesced, so that flush() writes the snapshot this row times (a journaled
                    // store's flush only syncs its journal).
                    let container = try GraphContainer(
                        for: benchModel, store: .file(url, format: format, compression: compression, durability: .coalesced))
                    try fillContainer(container, posts: posts)
                    try await container.flush()
                    let written = container.storeStatus.lastWriteDuration.map(milliseconds) ?? .nan
                    try await container.close()
                    var opened: GraphContainer?
                    let open = try time {
                        let container = try GraphContainer(for: benchModel, store: .file(url, format: format, compression: compression))
                        _ = try container.mainContext.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
                        opened = container
                    }
                    try await opened?.close()
                    if repetition >= harness.warmups {
                        writes.append(written)
                        opens.append(open)
                    }
                }
                let name = "\(format == .json ? "JSON" : "plist")+\(compression.rawValue)"
                rows.append(Row(scenario: "8. snapshot of \(count) posts: encode+compress+write", variant: name, graphStore: median(writes), sqlite: nil))
                rows.append(Row(scenario: "8. snapshot of \(count) posts: file size", variant: name, graphStore: Double(fileSize(url)) / 1024, sqlite: nil, unit: "KiB"))
                rows.append(Row(scenario: "8. snapshot of \(count) posts: open to first fetch", variant: name, graphStore: median(opens), sqlite: nil))
            }
        }
        return rows
    }
}

/// `--open-loop items|posts|posts-newest|posts-journal PATH N`: opens the snapshot at PATH N
/// times, each time to every object of the kind fetched (`posts-newest`: scenario 2's first
/// fetch, the newest 20 posts), and prints the median milliseconds. For a profiler: one process
/// that does nothing but a cold open (with `posts-journal`, scenario 9's, 10,000 journal records
/// pending). A missing file is first written with scenario 2's 50,000 items or posts, in the
/// format its name ends with (`.json.gz`, `.plist.gz`). A store with a journal is opened from a
/// fresh copy each time, because closing it folds the journal away.
func openLoop(_ kind: String, _ path: String, _ count: Int) async throws {
    let url = URL(fileURLWithPath: path)
    let journalURL = URL(fileURLWithPath: path + ".journal")
    if !FileManager.default.fileExists(atPath: path) {
        let format: SnapshotFormat = path.contains(".plist") ? .binaryPropertyList : .json
        let container = try GraphContainer(for: benchModel, store: .file(url, format: format, durability: .coalesced))
        if kind == "items" {
            let context = container.newBackgroundContext()
            context.insert(contentsOf: items(50_000))
            try context.save()
        } else {
            try fillContainer(container, posts: benchPosts(50_000))
        }
        try await container.close()
        if kind == "posts-journal" {
            // As scenario 9 leaves it: 10,000 one-post saves only in the journal.
            let live = URL(fileURLWithPath: path + ".live")
            try FileManager.default.copyItem(at: url, to: live)
            var posts = benchPosts(50_000)
            let container = try GraphContainer(for: benchModel, store: .file(live, coalescingInterval: .seconds(3600)))
            try saveChangedPosts(container, &posts, records: 10_000)
            try await container.flush()
            try FileManager.default.copyItem(atPath: live.path + ".journal", toPath: journalURL.path)
            try await container.close()
            try FileManager.default.removeItem(at: live)
        }
    }
    let journal = FileManager.default.fileExists(atPath: journalURL.path)
    let run = URL(fileURLWithPath: path + ".run")
    var times: [Double] = []
    for _ in 0..<count {
        if journal {
            try? FileManager.default.removeItem(at: run)
            try FileManager.default.copyItem(at: url, to: run)
            try FileManager.default.copyItem(atPath: journalURL.path, toPath: run.path + ".journal")
        }
        var opened: GraphContainer?
        let elapsed = try time {
            let container = try GraphContainer(for: benchModel, store: .file(journal ? run : url))
            let fetched = switch kind {
            case "items": try container.mainContext.fetch(FetchDescriptor<Item>()).count
            // Scenario 2's first fetch.
            case "posts-newest": try container.mainContext.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20)).count
            default: try container.mainContext.fetch(FetchDescriptor<Post>()).count
            }
            precondition(fetched > 0)
            opened = container
        }
        try await opened?.close()
        times.append(elapsed)
    }
    print(String(format: "%.2f ms", median(times)))
}

/// `--save-loop N`: scenario 9's one-object `.journaled` save, N times in a row on a store of
/// 1,000 items in a scratch directory, and prints the median microseconds. For a profiler.
func saveLoop(_ count: Int) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("save-loop-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let container = try GraphContainer(for: benchModel, store: .file(directory.appendingPathComponent("items.json.gz"), durability: .journaled))
    let context = container.mainContext
    context.insert(contentsOf: items(1_000))
    try context.save()
    var times: [Double] = []
    times.reserveCapacity(count)
    for round in 0..<count {
        let id = Int32((round * 7919) % 1_000)
        times.append(try time {
            context.insert(Item(id: id, title: "changed \(round)"))
            try context.save()
        })
    }
    try await container.close()
    print(String(format: "%.2f µs", median(times) * 1000))
}

/// `--write-loop json|plist N`: scenario 8's snapshot write of 50,000 posts (gzip), N times in
/// a row: each round changes one post, saves, and flushes a `.coalesced` store, which writes the
/// whole snapshot. Prints the median of the writer's own timing (encode, compress, write, sync).
/// For a profiler.
func writeLoop(_ kind: String, _ count: Int) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("write-loop-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let format: SnapshotFormat = kind == "plist" ? .binaryPropertyList : .json
    let url = directory.appendingPathComponent("posts.\(format.fileExtension).gz")
    let container = try GraphContainer(for: benchModel, store: .file(url, format: format, compression: .gzip, durability: .coalesced))
    var posts = benchPosts(50_000)
    try fillContainer(container, posts: posts)
    try await container.flush()
    var times: [Double] = []
    for round in 0..<count {
        posts[round % posts.count].summary = "changed \(round)"
        container.mainContext.insert(posts[round % posts.count])
        try container.mainContext.save()
        try await container.flush()
        times.append(container.storeStatus.lastWriteDuration.map(milliseconds) ?? .nan)
    }
    try await container.close()
    print(String(format: "%.1f ms", median(times)))
}

/// `--bulk-save-loop N`: scenario 1's largest file save (50,000 items inserted into a new
/// JSON+gzip `.journaled` store and saved), N times, and prints the median milliseconds until
/// `save()` returned. For a profiler.
func bulkSaveLoop(_ count: Int) async throws {
    let values = items(50_000)
    var times: [Double] = []
    for _ in 0..<count {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bulk-save-loop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try GraphContainer(for: benchModel, store: .file(directory.appendingPathComponent("items.json.gz")))
        times.append(try time {
            let context = container.mainContext
            for item in values { context.insert(item) }
            try context.save()
        })
        try await container.close()
    }
    print(String(format: "%.2f ms", median(times)))
}

/// `--indexed-save-loop N`: scenario 10's save of one changed post (three sorted indexes) into
/// an in-memory store of 100,000 posts, N times, and prints the median microseconds. For a
/// profiler.
func indexedSaveLoop(_ count: Int) throws {
    var posts = benchPosts(100_000)
    let container = try GraphContainer(for: [Post.self, Tag.self], store: .inMemory)
    try fillContainer(container, posts: posts)
    var times: [Double] = []
    times.reserveCapacity(count)
    for round in 0..<count {
        let index = (round * 7919) % posts.count
        posts[index].noteCount += 1
        posts[index].date = posts[index].date.addingTimeInterval(1)
        let post = posts[index]
        times.append(try time {
            container.mainContext.insert(post)
            try container.mainContext.save()
        })
    }
    print(String(format: "%.2f µs", median(times) * 1000))
}
