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
        let sqliteURL = try makeFilledPostDatabase(posts, in: directory)
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
    /// parsing alone (JSON in chunks of tokens as opening parses it, a property list into its checked object
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
            Row(scenario: scenario, variant: "\(name): floor, parse alone", graphStore: parse, sqlite: sqlite, note: format == .json ? "entity arrays in chunks of tokens, no object decoded" : "object table checked, no object decoded"),
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
}
