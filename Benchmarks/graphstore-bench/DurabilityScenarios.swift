import ExampleModel
import Foundation
import GRDB
import GraphStore

extension Scenarios {
    // MARK: - 9. Durability: one-object saves per level, and opening with a journal

    /// One-object saves on the main context of a store of 1,000 items, at each durability
    /// level, against a SQLite commit of the same change in WAL mode at the matching
    /// `synchronous` setting; then the cold open of 50,000 posts with 10,000 journal records
    /// pending against the same open without a journal.
    func durability() async throws -> [Row] {
        var rows: [Row] = []
        let count = n(1_000)
        let values = items(count)
        let rounds = 400
        for (level, pragma) in [(Durability.coalesced, "OFF"), (.journaled, "NORMAL"), (.synchronous, "FULL")] {
            let directory = scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let container = try GraphContainer(
                for: benchModel, store: .file(directory.appendingPathComponent("items.json.gz"), durability: level))
            let context = container.mainContext
            context.insert(contentsOf: values)
            try context.save()
            let queue = try makeItemDatabase(directory.appendingPathComponent("items.sqlite"))
            try setUpWAL(queue, synchronous: pragma)
            try syncWrite(queue) { db in for item in values { try ItemRecord(id: item.id, title: item.title).insert(db) } }
            var gs: [Double] = [], sq: [Double] = []
            for round in 0..<rounds {
                let id = Int32((round * 7919) % count)
                gs.append(try time {
                    context.insert(Item(id: id, title: "changed \(round)"))
                    try context.save()
                })
                sq.append(try time {
                    try queue.write { db in try ItemRecord(id: id, title: "changed \(round)").update(db) }
                })
            }
            try await container.close()
            let scenario = "9. save one changed object, \(level)"
            let variant = "vs SQLite WAL, synchronous = \(pragma)"
            rows.append(Row(scenario: scenario, variant: "p50, \(variant)", graphStore: percentile(gs, 0.5) * 1000, sqlite: percentile(sq, 0.5) * 1000, unit: "µs", note: "\(rounds) saves, store of \(count) items"))
            rows.append(Row(scenario: scenario, variant: "p99, \(variant)", graphStore: percentile(gs, 0.99) * 1000, sqlite: percentile(sq, 0.99) * 1000, unit: "µs"))
        }
        rows += try await openWithJournal()
        return rows
    }

    /// Switches `queue` to WAL with the given `synchronous` setting (outside a transaction).
    private func setUpWAL(_ queue: DatabaseQueue, synchronous: String) throws {
        try queue.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
        }
    }

    /// Cold open of 50,000 posts whose last 10,000 saves (one post each) are only in the
    /// journal, as a killed process leaves it, against the open of the same graph folded into
    /// the snapshot.
    private func openWithJournal() async throws -> [Row] {
        let count = n(50_000), records = n(10_000)
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let live = directory.appendingPathComponent("live.json.gz")
        let crashed = directory.appendingPathComponent("crashed.json.gz")
        let folded = directory.appendingPathComponent("folded.json.gz")
        var posts = benchPosts(count)
        let seeding = try GraphContainer(for: benchModel, store: .file(live))
        try fillContainer(seeding, posts: posts)
        try await seeding.close()
        let container = try GraphContainer(for: benchModel, store: .file(live, coalescingInterval: .seconds(3600)))
        try saveChangedPosts(container, &posts, records: records)
        try await container.flush()
        for suffix in ["", ".journal"] {
            try FileManager.default.copyItem(atPath: live.path + suffix, toPath: crashed.path + suffix)
        }
        try await container.close()
        try FileManager.default.copyItem(at: live, to: folded)

        func open(_ url: URL, crashCopy: Bool) async throws -> Double {
            // Each run opens a fresh copy: opening a crashed store folds nothing, but the
            // journal it leaves must be the same for every repetition.
            let run = directory.appendingPathComponent("run-\(UUID().uuidString).json.gz")
            try FileManager.default.copyItem(at: url, to: run)
            if crashCopy { try FileManager.default.copyItem(atPath: url.path + ".journal", toPath: run.path + ".journal") }
            var opened: GraphContainer?
            let elapsed = try time {
                let container = try GraphContainer(for: benchModel, store: .file(run, coalescingInterval: .seconds(3600)))
                let first = try container.mainContext.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
                precondition(first.count == 20 && container.count(of: Post.self) == count)
                opened = container
            }
            try await opened?.close()
            return elapsed
        }
        var withJournal: [Double] = [], without: [Double] = []
        for repetition in 0..<(harness.warmups + harness.repetitions) {
            let a = try await open(crashed, crashCopy: true)
            let b = try await open(folded, crashCopy: false)
            if repetition >= harness.warmups { withJournal.append(a); without.append(b) }
        }
        let ratio = median(withJournal) / median(without)
        return [Row(
            scenario: "9. cold open \(count) posts → first fetch", variant: "\(records) journal records pending (JSON+gzip)",
            graphStore: median(withJournal), sqlite: nil,
            note: String(format: "same open without a journal: %.1f ms (%.2f×)", median(without), ratio))]
    }
}
