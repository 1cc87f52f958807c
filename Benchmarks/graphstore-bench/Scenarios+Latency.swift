import ExampleModel
import Foundation
import GRDB
import GraphStore

extension Scenarios {
    // MARK: - 5. Main-context latency during an import

    func latency() async throws -> [Row] {
        let count = n(100_000)
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("posts.json.gz")
        let container = try GraphContainer(for: benchModel, store: .file(url))
        let main = container.mainContext
        main.insert(Note(text: "main"))
        try main.save()
        let posts = benchPosts(count)
        let importTask = Task.detached {
            let context = container.newBackgroundContext()
            context.mergePolicy = .contextWins
            for tag in benchTags { context.insert(tag) }
            try context.save()
            for start in stride(from: 0, to: posts.count, by: 500) {
                for post in posts[start..<min(start + 500, posts.count)] { context.insert(post) }
                try context.save()
            }
        }
        var saves: [Double] = [], fetches: [Double] = []
        var round = 0
        while !importTask.isCancelled {
            round += 1
            saves.append(try time {
                main.insert(Note(text: "main \(round)"))
                try main.save()
            })
            fetches.append(try time {
                _ = try main.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
            })
            if container.count(of: Post.self) >= count { break }
        }
        try await importTask.value
        try await container.close()

        // SQLite: the same with a DatabasePool (WAL), main-thread writes and reads.
        let pool = try DatabasePool(path: directory.appendingPathComponent("posts.sqlite").path)
        try syncWrite(pool) { db in
            try db.execute(sql: "CREATE TABLE note(id TEXT PRIMARY KEY, text TEXT)")
            try db.execute(sql: "CREATE TABLE post(id INTEGER PRIMARY KEY, blogName TEXT, kind TEXT, date DATETIME, summary TEXT, body TEXT, noteCount INTEGER)")
            try db.execute(sql: "CREATE INDEX post_date ON post(date)")
        }
        let sqliteImport = Task.detached {
            for start in stride(from: 0, to: posts.count, by: 500) {
                try pool.write { db in
                    for post in posts[start..<min(start + 500, posts.count)] { try postRecord(post).insert(db) }
                }
            }
        }
        var sqliteSaves: [Double] = [], sqliteFetches: [Double] = []
        round = 0
        while true {
            round += 1
            sqliteSaves.append(try time {
                try pool.write { db in try db.execute(sql: "INSERT INTO note VALUES (?, ?)", arguments: [UUID().uuidString, "main \(round)"]) }
            })
            sqliteFetches.append(try time {
                _ = try pool.read { db in try PostRecord.fetchAll(db, sql: "SELECT * FROM post ORDER BY date DESC LIMIT 20") }
            })
            if try syncRead(pool, { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM post")! }) >= count { break }
        }
        try await sqliteImport.value
        // An observer of the newest 20: from a save's return (the commit is visible) to the
        // observer's next element, which a commit of a newer post changes every time.
        let observed = try GraphContainer(for: benchModel, store: .inMemory)
        try fillContainer(observed, posts: posts)
        let newest = FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20)
        let delays = try await commitToNextElement(in: observed, observing: observed.observe(newest), firstID: Int64(count + 1)) { next, id in
            next.first?.id == id
        }
        // The same with the difference from the previous element (one inserted, one removed).
        let diffDelays = try await commitToNextElement(in: observed, observing: observed.observeChanges(newest), firstID: Int64(count + 201)) { next, id in
            next.objects.first?.id == id && next.difference.inserted == [0]
        }
        var rows: [Row] = []
        rows.append(Row(scenario: "5. commit → observer's next element (newest 20 of \(count))", variant: "p50", graphStore: percentile(delays, 0.5), sqlite: nil, note: "\(delays.count) commits"))
        rows.append(Row(scenario: "5. commit → observer's next element (newest 20 of \(count))", variant: "p99", graphStore: percentile(delays, 0.99), sqlite: nil))
        rows.append(Row(scenario: "5. commit → observeChanges' next element, with its difference", variant: "p50", graphStore: percentile(diffDelays, 0.5), sqlite: nil, note: "\(diffDelays.count) commits"))
        rows.append(Row(scenario: "5. commit → observeChanges' next element, with its difference", variant: "p99", graphStore: percentile(diffDelays, 0.99), sqlite: nil))
        for (name, gsValues, sqValues) in [("save", saves, sqliteSaves), ("fetch newest 20", fetches, sqliteFetches)] {
            rows.append(Row(scenario: "5. main-context \(name) during a \(count)-post import", variant: "p50", graphStore: percentile(gsValues, 0.5), sqlite: percentile(sqValues, 0.5), note: "\(gsValues.count) / \(sqValues.count) samples"))
            rows.append(Row(scenario: "5. main-context \(name) during a \(count)-post import", variant: "p99", graphStore: percentile(gsValues, 0.99), sqlite: percentile(sqValues, 0.99)))
            rows.append(Row(scenario: "5. main-context \(name) during a \(count)-post import", variant: "max", graphStore: gsValues.max() ?? .nan, sqlite: sqValues.max()))
        }
        return rows
    }

    /// From each of 200 saves of a newer post on the main context to the next element of
    /// `sequence` (whose current element is taken first), which `check` confirms shows it.
    private func commitToNextElement<S: AsyncSequence>(
        in container: GraphContainer, observing sequence: S, firstID: Int64, check: (S.Element, Int64) -> Bool
    ) async throws -> [Double] {
        var iterator = sequence.makeAsyncIterator()
        _ = try await iterator.next()
        var delays: [Double] = []
        for round in 0..<200 {
            let id = firstID + Int64(round)
            container.mainContext.insert(Post(id: id, blogName: "blog1", date: benchEpoch.addingTimeInterval(Double(id) * 37.5), summary: "new \(round)"))
            try container.mainContext.save()
            delays.append(try await timeAsync {
                let next = try await iterator.next()
                precondition(next.map { check($0, id) } ?? false)
            })
        }
        return delays
    }

    // MARK: - 6. Coalescing

    func coalescing() async throws -> [Row] {
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("notes.json.gz")
        let container = try GraphContainer(for: benchModel, store: .file(url, coalescingInterval: .seconds(1)))
        let events = container.storeEvents
        let collector = Task { () -> (Int, Int) in
            var writes = 0, bytes = 0
            for await event in events {
                if case .wrote(_, let size, _) = event { writes += 1; bytes += size }
            }
            return (writes, bytes)
        }
        let context = container.mainContext
        let start = ContinuousClock.now
        for index in 0..<1_000 {
            context.insert(Note(text: "note \(index)"))
            try context.save()
            let due = start + .milliseconds(index + 1)
            let now = ContinuousClock.now
            if due > now { try await Task.sleep(for: due - now) }
        }
        try await container.close()
        let (writes, bytes) = await collector.value
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("notes.sqlite").path)
        try syncWrite(queue) { db in try db.execute(sql: "CREATE TABLE note(id TEXT PRIMARY KEY, text TEXT)") }
        let sqliteTime = try time {
            for index in 0..<1_000 {
                try queue.write { db in try db.execute(sql: "INSERT INTO note VALUES (?, ?)", arguments: [UUID().uuidString, "note \(index)"]) }
            }
        }
        return [
            Row(scenario: "6. 1,000 saves in one second", variant: "snapshot writes / SQLite commits", graphStore: Double(writes), sqlite: 1000, unit: "writes"),
            Row(scenario: "6. 1,000 saves in one second", variant: "bytes written", graphStore: Double(bytes), sqlite: nil, unit: "B", note: "SQLite's 1,000 commits took \(String(format: "%.0f", sqliteTime)) ms"),
        ]
    }
}
