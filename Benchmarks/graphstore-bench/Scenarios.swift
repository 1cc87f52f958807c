import ExampleModel
import Foundation
import GRDB
import GraphStore

/// The benchmark scenarios. Each returns rows comparing GraphStore with raw SQLite (GRDB,
/// `DatabaseQueue`, one transaction, Codable records, default durability) in the same run.
struct Scenarios {
    let harness: Harness
    let scale: Double

    func n(_ value: Int) -> Int { max(1, Int(Double(value) * scale)) }

    // MARK: - 1. Write and delete items

    func writeAndDelete() async throws -> [Row] {
        var rows: [Row] = []
        for count in [n(500), n(5_000), n(50_000)] {
            let values = items(count)
            // SQLite: insert all + commit; delete all + commit.
            var sqliteWrite: [Double] = [], sqliteDelete: [Double] = []
            var memoryWrite: [Double] = [], memoryDelete: [Double] = [], insertParts: [Double] = [], batchWrite: [Double] = []
            var fileRows: [(String, [Double], [Double], [Double])] = [
                ("JSON+gzip", [], [], []), ("plist+gzip", [], [], []),
            ]
            for repetition in 0..<(harness.warmups + harness.repetitions) {
                let keep = repetition >= harness.warmups
                // SQLite
                let directory = scratchDirectory()
                defer { try? FileManager.default.removeItem(at: directory) }
                let queue = try makeItemDatabase(directory.appendingPathComponent("items.sqlite"))
                let sw = try time { try queue.write { db in for item in values { try ItemRecord(id: item.id, title: item.title).insert(db) } } }
                let sd = try time { try queue.write { db in _ = try ItemRecord.deleteAll(db) } }
                // In memory
                let memory = try GraphContainer(for: benchModel, store: .inMemory)
                var insertPart = 0.0
                let mw = try time {
                    let context = memory.mainContext
                    insertPart = time { for item in values { context.insert(item) } }
                    try context.save()
                }
                if keep { insertParts.append(insertPart) }
                let batchMemory = try GraphContainer(for: benchModel, store: .inMemory)
                let bw = try time {
                    batchMemory.mainContext.insert(contentsOf: values)
                    try batchMemory.mainContext.save()
                }
                if keep { batchWrite.append(bw) }
                let md = try time {
                    try memory.mainContext.delete(model: Item.self)
                    try memory.mainContext.save()
                }
                if keep {
                    sqliteWrite.append(sw); sqliteDelete.append(sd); memoryWrite.append(mw); memoryDelete.append(md)
                }
                // Files
                for (index, format) in [SnapshotFormat.json, .binaryPropertyList].enumerated() {
                    let url = directory.appendingPathComponent("items.\(format.fileExtension).gz")
                    let container = try GraphContainer(for: benchModel, store: .file(url, format: format, compression: .gzip))
                    var saved = 0.0
                    let durable = try await timeAsync {
                        saved = try time {
                            let context = container.mainContext
                            for item in values { context.insert(item) }
                            try context.save()
                        }
                        try await container.flush()
                    }
                    let deleted = try time {
                        try container.mainContext.delete(model: Item.self)
                        try container.mainContext.save()
                    }
                    try await container.close()
                    if keep {
                        fileRows[index].1.append(saved); fileRows[index].2.append(durable); fileRows[index].3.append(deleted)
                    }
                }
            }
            let sqliteW = median(sqliteWrite), sqliteD = median(sqliteDelete)
            rows.append(Row(scenario: "1. write \(count) items + save", variant: "inMemory (save returned)", graphStore: median(memoryWrite), sqlite: sqliteW, note: "of which insert calls: \(String(format: "%.1f", median(insertParts))) ms"))
            rows.append(Row(scenario: "1. write \(count) items + save", variant: "inMemory, insert(contentsOf:)", graphStore: median(batchWrite), sqlite: sqliteW))
            for (name, saved, durable, _) in fileRows {
                rows.append(Row(scenario: "1. write \(count) items + save", variant: "\(name) save returned", graphStore: median(saved), sqlite: sqliteW))
                rows.append(Row(scenario: "1. write \(count) items + save", variant: "\(name) durable (flush)", graphStore: median(durable), sqlite: sqliteW))
            }
            rows.append(Row(scenario: "1. delete all \(count) items", variant: "inMemory", graphStore: median(memoryDelete), sqlite: sqliteD))
            for (name, _, _, deleted) in fileRows {
                rows.append(Row(scenario: "1. delete all \(count) items", variant: "\(name) save returned", graphStore: median(deleted), sqlite: sqliteD))
            }
        }
        return rows
    }

    // MARK: - 2. Cold open

    func coldOpen() async throws -> [Row] {
        let count = n(50_000)
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let posts = benchPosts(count)
        let sqliteURL = directory.appendingPathComponent("posts.sqlite")
        try fillPostDatabase(try makePostDatabase(sqliteURL), posts: posts)
        var rows: [Row] = []
        for format in [SnapshotFormat.json, .binaryPropertyList] {
            let url = directory.appendingPathComponent("posts.\(format.fileExtension).gz")
            let container = try GraphContainer(for: benchModel, store: .file(url, format: format))
            try fillContainer(container, posts: posts)
            try await container.close()
            let (gs, sq) = try await harness.compareAsync({
                var opened: GraphContainer?
                let elapsed = try time {
                    let container = try GraphContainer(for: benchModel, store: .file(url, format: format))
                    let first = try container.mainContext.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
                    precondition(first.count == 20)
                    opened = container
                }
                try await opened?.close()
                return elapsed
            }, {
                try time {
                    let queue = try DatabaseQueue(path: sqliteURL.path)
                    let all = try queue.read { db in try PostRecord.fetchAll(db) }
                    let links = try queue.read { db in try PostTagRecord.fetchAll(db) }
                    precondition(all.count == count && !links.isEmpty)
                }
            })
            let name = format == .json ? "JSON+gzip" : "plist+gzip"
            rows.append(Row(scenario: "2. cold open \(count) posts → first fetch", variant: name, graphStore: gs, sqlite: sq, note: "SQLite: open + fetch all posts and post–tag rows"))
            rows += try floorRows(of: url, format: format, scenario: "2. cold open \(count) posts → first fetch", name: name, sqlite: sq)
        }
        rows += try await coldOpenItems()
        return rows
    }

    /// The cold open of scenario 1's `Item` table of 50,000 items to all of them fetched,
    /// against SQLite's open and fetch of all rows, with the floor beside it.
    private func coldOpenItems() async throws -> [Row] {
        let count = n(50_000)
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let values = items(count)
        let sqliteURL = directory.appendingPathComponent("items.sqlite")
        let queue = try makeItemDatabase(sqliteURL)
        try syncWrite(queue) { db in for item in values { try ItemRecord(id: item.id, title: item.title).insert(db) } }
        try queue.close()
        var rows: [Row] = []
        for format in [SnapshotFormat.json, .binaryPropertyList] {
            let url = directory.appendingPathComponent("items.\(format.fileExtension).gz")
            let container = try GraphContainer(for: benchModel, store: .file(url, format: format, durability: .coalesced))
            let context = container.newBackgroundContext()
            context.insert(contentsOf: values)
            try context.save()
            try await container.close()
            let (gs, sq) = try await harness.compareAsync({
                var opened: GraphContainer?
                let elapsed = try time {
                    let container = try GraphContainer(for: benchModel, store: .file(url, format: format))
                    let all = try container.mainContext.fetch(FetchDescriptor<Item>())
                    precondition(all.count == count)
                    opened = container
                }
                try await opened?.close()
                return elapsed
            }, {
                try time {
                    let queue = try DatabaseQueue(path: sqliteURL.path)
                    let all = try queue.read { db in try ItemRecord.fetchAll(db) }
                    precondition(all.count == count)
                }
            })
            let name = format == .json ? "JSON+gzip" : "plist+gzip"
            let scenario = "2. cold open \(count) items → all fetched"
            rows.append(Row(scenario: scenario, variant: name, graphStore: gs, sqlite: sq, note: "Item{id: Int32, title: String}; SQLite: open + fetch all rows"))
            rows += try floorRows(of: url, format: format, scenario: scenario, name: name, sqlite: sq)
        }
        return rows
    }

    /// The floor of opening the snapshot at `url`: reading its bytes, gunzip alone, and
    /// parsing alone (JSON into the token tape, a property list into its checked object
    /// table, no object decoded), each on one thread, beside SQLite's open + fetch `sqlite`.
    private func floorRows(of url: URL, format: SnapshotFormat, scenario: String, name: String, sqlite: Double) throws -> [Row] {
        let raw = try SnapshotOpeningFloor.read(url)
        let document = try SnapshotOpeningFloor.gunzip(raw)
        let read = try harness.single {
            try time {
                let bytes = try SnapshotOpeningFloor.read(url)
                precondition(bytes.count == raw.count)
            }
        }
        let gunzip = try harness.single {
            try time {
                let unzipped = try SnapshotOpeningFloor.gunzip(raw)
                precondition(unzipped.count == document.count)
            }
        }
        let parse = try harness.single {
            try time {
                let parsed = try SnapshotOpeningFloor.parse(document, format: format)
                precondition(parsed > 0)
            }
        }
        let sizes = String(format: "%.0f KiB → %.0f KiB", Double(raw.count) / 1024, Double(document.count) / 1024)
        return [
            Row(scenario: scenario, variant: "\(name): floor, read the file", graphStore: read, sqlite: sqlite, note: sizes),
            Row(scenario: scenario, variant: "\(name): floor, gunzip alone", graphStore: gunzip, sqlite: sqlite, note: "CRC and length checked"),
            Row(scenario: scenario, variant: "\(name): floor, parse alone", graphStore: parse, sqlite: sqlite, note: format == .json ? "token tape, no object decoded" : "object table checked, no object decoded"),
        ]
    }

    // MARK: - 3. Fetch

    func fetch() throws -> [Row] {
        let count = n(100_000)
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let posts = benchPosts(count)
        let queue = try makePostDatabase(directory.appendingPathComponent("posts.sqlite"))
        try fillPostDatabase(queue, posts: posts)
        let container = try GraphContainer(for: benchModel, store: .inMemory)
        try fillContainer(container, posts: posts)
        let context = container.mainContext
        let tagID = benchTags[7].id
        let (newestGS, newestSQ) = try harness.compare({
            try time {
                let result = try context.fetch(FetchDescriptor<Post>(
                    predicate: #Predicate { $0.noteCount > 100 && $0.blogName != "blog3" },
                    sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
                precondition(result.count == 20)
            }
        }, {
            try time {
                let result = try queue.read { db in
                    try PostRecord.fetchAll(db, sql: "SELECT * FROM post WHERE noteCount > 100 AND blogName != 'blog3' ORDER BY date DESC LIMIT 20")
                }
                precondition(result.count == 20)
            }
        })
        // Queries a sorted index answers, with the same indexes on both sides.
        let blog = "blog3"
        let (blogNewestGS, blogNewestSQ) = try harness.compare({
            try time {
                let result = try context.fetch(FetchDescriptor<Post>(
                    predicate: #Predicate { $0.blogName == blog }, sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
                precondition(result.count == 20)
            }
        }, {
            try time {
                let result = try queue.read { db in
                    try PostRecord.fetchAll(db, sql: "SELECT * FROM post WHERE blogName = ? ORDER BY date DESC LIMIT 20", arguments: [blog])
                }
                precondition(result.count == 20)
            }
        })
        let (plainNewestGS, plainNewestSQ) = try harness.compare({
            try time {
                let result = try context.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
                precondition(result.count == 20)
            }
        }, {
            try time {
                let result = try queue.read { db in try PostRecord.fetchAll(db, sql: "SELECT * FROM post ORDER BY date DESC LIMIT 20") }
                precondition(result.count == 20)
            }
        })
        let from = benchEpoch.addingTimeInterval(3_600), until = benchEpoch.addingTimeInterval(86_400 * 30)
        let (rangeGS, rangeSQ) = try harness.compare({
            try time {
                let result = try context.fetch(FetchDescriptor<Post>(
                    predicate: #Predicate { $0.date >= from && $0.date < until }, sortBy: [SortDescriptor(\.date)], fetchLimit: 50))
                precondition(result.count == 50)
            }
        }, {
            try time {
                let result = try queue.read { db in
                    try PostRecord.fetchAll(db, sql: "SELECT * FROM post WHERE date >= ? AND date < ? ORDER BY date LIMIT 50", arguments: [from, until])
                }
                precondition(result.count == 50)
            }
        })
        let (blogCountGS, blogCountSQ) = try harness.compare({
            try time {
                let result = try context.fetchCount(FetchDescriptor<Post>(predicate: #Predicate { $0.blogName == blog }))
                precondition(result > 0)
            }
        }, {
            try time {
                let result = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM post WHERE blogName = ?", arguments: [blog])! }
                precondition(result > 0)
            }
        })
        let popular = posts[posts.count / 2].noteCount
        let (lookupGS, lookupSQ) = try harness.compare({
            try time {
                let result = try context.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.noteCount == popular }))
                precondition(!result.isEmpty)
            }
        }, {
            try time {
                let result = try queue.read { db in try PostRecord.fetchAll(db, sql: "SELECT * FROM post WHERE noteCount = ?", arguments: [popular]) }
                precondition(!result.isEmpty)
            }
        })
        let (countGS, countSQ) = try harness.compare({
            time {
                let result = context.fetchCount(Post.self, referencing: tagID, of: Tag.self)
                precondition(result > 0)
            }
        }, {
            try time {
                let result = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM postTag WHERE tagID = ?", arguments: [tagID])! }
                precondition(result > 0)
            }
        })
        // Every object of a large table, and a small table read whole: what tracking the
        // versions a fetch read costs per object and per fetch.
        let (allGS, allSQ) = try harness.compare({
            try time {
                let result = try context.fetch(FetchDescriptor<Post>())
                precondition(result.count == count)
            }
        }, {
            try time {
                let result = try queue.read { db in try PostRecord.fetchAll(db, sql: "SELECT * FROM post") }
                precondition(result.count == count)
            }
        })
        let small = try GraphContainer(for: benchModel, store: .inMemory)
        try fillContainer(small, posts: Array(posts.prefix(20)))
        let smallQueue = try makePostDatabase(directory.appendingPathComponent("small.sqlite"))
        try fillPostDatabase(smallQueue, posts: Array(posts.prefix(20)))
        let (smallGS, smallSQ) = try harness.compare({
            // Many fetches per sample: one takes microseconds.
            try time {
                for _ in 0..<1_000 {
                    let result = try small.mainContext.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)]))
                    precondition(result.count == 20)
                }
            } / 1_000
        }, {
            try time {
                for _ in 0..<1_000 {
                    let result = try smallQueue.read { db in try PostRecord.fetchAll(db, sql: "SELECT * FROM post ORDER BY date DESC") }
                    precondition(result.count == 20)
                }
            } / 1_000
        })
        // The same 20 posts through a window: a fetch that remembers each id it returned.
        let windowGS = try harness.single {
            try time {
                for _ in 0..<1_000 {
                    let result = try small.mainContext.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
                    precondition(result.count == 20)
                }
            } / 1_000
        }
        let scanGS = try harness.single {
            try time {
                let result = try context.fetchCount(FetchDescriptor<Post>(predicate: #Predicate { $0.tagIDs.contains(tagID) }))
                precondition(result > 0)
            }
        }
        return [
            Row(scenario: "3. fetch newest 20 (predicate + sort) of \(count) posts", variant: "inMemory", graphStore: newestGS, sqlite: newestSQ, note: "SQLite has an index on date"),
            Row(scenario: "3. fetch all \(count) posts", variant: "inMemory, no predicate", graphStore: allGS, sqlite: allSQ, note: "SQLite: SELECT * into structs"),
            Row(scenario: "3. fetch all 20 posts (sorted) of a 20-post store", variant: "inMemory", graphStore: smallGS, sqlite: smallSQ, note: "mean of 1,000 fetches"),
            Row(scenario: "3. fetch all 20 posts (sorted) of a 20-post store", variant: "inMemory, fetchLimit 20", graphStore: windowGS, sqlite: smallSQ, note: "mean of 1,000 fetches; remembers each id"),
            Row(scenario: "3. count posts by tag, \(count) posts", variant: "inverse index", graphStore: countGS, sqlite: countSQ, note: "SQLite: indexed join table"),
            Row(scenario: "3. count posts by tag, \(count) posts", variant: "#Predicate scan", graphStore: scanGS, sqlite: countSQ, note: "full scan with a predicate"),
            Row(scenario: "3. newest 20 of one blog, \(count) posts", variant: "index (blogName, date)", graphStore: blogNewestGS, sqlite: blogNewestSQ, note: "blogName == X, date desc"),
            Row(scenario: "3. newest 20, no predicate, \(count) posts", variant: "index date", graphStore: plainNewestGS, sqlite: plainNewestSQ),
            Row(scenario: "3. date range, oldest first, limit 50", variant: "index date", graphStore: rangeGS, sqlite: rangeSQ),
            Row(scenario: "3. count posts of one blog, \(count) posts", variant: "index (blogName, date)", graphStore: blogCountGS, sqlite: blogCountSQ, note: "O(log n) rank difference"),
            Row(scenario: "3. posts with one noteCount (non-unique key)", variant: "index noteCount", graphStore: lookupGS, sqlite: lookupSQ),
        ]
    }

    // MARK: - 4. Small saves

    func smallSaves() throws -> [Row] {
        var rows: [Row] = []
        for count in [n(1_000), n(100_000), n(1_000_000)] {
            let directory = scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let container = try GraphContainer(for: benchModel, store: .inMemory)
            let context = container.mainContext
            let values = items(count)
            for item in values { context.insert(item) }
            try context.save()
            let queue = try makeItemDatabase(directory.appendingPathComponent("items.sqlite"))
            try queue.write { db in for item in values { try ItemRecord(id: item.id, title: item.title).insert(db) } }
            var gs: [Double] = [], sq: [Double] = []
            for round in 0..<200 {
                let id = Int32((round * 7919) % count)
                gs.append(try time {
                    context.insert(Item(id: id, title: "changed \(round)"))
                    try context.save()
                })
                sq.append(try time {
                    try queue.write { db in try ItemRecord(id: id, title: "changed \(round)").update(db) }
                })
            }
            rows.append(Row(scenario: "4. save one changed object", variant: "store of \(count) objects", graphStore: median(gs) * 1000, sqlite: median(sq) * 1000, unit: "µs"))
        }
        return rows
    }

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
        var observer = observed.observe(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20)).makeAsyncIterator()
        _ = try await observer.next()
        var delays: [Double] = []
        for round in 0..<200 {
            let id = Int64(count + 1 + round)
            observed.mainContext.insert(Post(id: id, blogName: "blog1", date: benchEpoch.addingTimeInterval(Double(id) * 37.5), summary: "new \(round)"))
            try observed.mainContext.save()
            delays.append(try await timeAsync {
                let next = try await observer.next()
                precondition(next?.first?.id == id)
            })
        }
        // The same with the difference from the previous element (one inserted, one removed).
        var changes = observed.observeChanges(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20)).makeAsyncIterator()
        _ = try await changes.next()
        var diffDelays: [Double] = []
        for round in 0..<200 {
            let id = Int64(count + 201 + round)
            observed.mainContext.insert(Post(id: id, blogName: "blog1", date: benchEpoch.addingTimeInterval(Double(id) * 37.5), summary: "new \(round)"))
            try observed.mainContext.save()
            diffDelays.append(try await timeAsync {
                let next = try await changes.next()
                precondition(next?.objects.first?.id == id && next?.difference.inserted == [0])
            })
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

    // MARK: - 7. Size and memory

    func sizeAndMemory(executable: String) async throws -> [Row] {
        let count = n(100_000)
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let posts = benchPosts(count)
        let sqliteURL = directory.appendingPathComponent("posts.sqlite")
        try fillPostDatabase(try makePostDatabase(sqliteURL), posts: posts)
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

    private func probe(_ executable: String, _ arguments: [String]) throws -> Int {
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
