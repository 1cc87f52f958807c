import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite

extension Scenarios {
    // MARK: - 11. Migration of 100,000 posts

    /// `Migration` (what `graphstore migrate` runs) between snapshot files of 100,000 posts and
    /// 50 tags and a GraphStore SQLite file, in both directions and both snapshot formats:
    /// objects per second of wall-clock time (the migration uses both cores for encoding and
    /// compressing, so thread CPU time would miss part of it), with the median time and the
    /// process's CPU time in the note.
    func migration() async throws -> [Row] {
        let count = n(100_000)
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let posts = benchPosts(count)
        let objects = count + benchTags.count
        var rows: [Row] = []
        for format in [SnapshotFormat.json, .binaryPropertyList] {
            let name = format == .json ? "JSON+gzip" : "plist+gzip"
            let snapshot = directory.appendingPathComponent("posts.\(format.fileExtension).gz")
            let container = try GraphContainer(for: benchModel, store: .file(snapshot, format: format, durability: .coalesced))
            try fillContainer(container, posts: posts)
            try await container.close()
            let sqlite = directory.appendingPathComponent("posts-\(format.rawValue).sqlite")
            let written = directory.appendingPathComponent("written.\(format.fileExtension).gz")
            let options = MigrationOptions(overwrite: true)
            let toSQLite = try measureMigration {
                try Migration.snapshotToSQLite(from: snapshot, to: sqlite, options: options)
            }
            let toSnapshot = try measureMigration {
                try Migration.sqliteToSnapshot(from: sqlite, to: written, format: format, compression: .gzip, options: options)
            }
            for (direction, measured) in [("snapshot → SQLite", toSQLite), ("SQLite → snapshot", toSnapshot)] {
                rows.append(Row(
                    scenario: "11. migrate \(count) posts + \(benchTags.count) tags, \(direction)", variant: name,
                    graphStore: Double(objects) / (measured.wall / 1000), sqlite: nil, unit: "objects/s",
                    note: String(format: "%.0f ms wall, %.0f ms CPU (all threads)", measured.wall, measured.cpu)))
            }
        }
        return rows
    }

    /// Medians of the wall-clock time and the process's CPU time of `body`, in milliseconds,
    /// after the harness's warm-ups.
    private func measureMigration(_ body: () throws -> Void) throws -> (wall: Double, cpu: Double) {
        for _ in 0..<harness.warmups { try body() }
        var walls: [Double] = [], cpus: [Double] = []
        for _ in 0..<harness.repetitions {
            let cpu = processCPUTime()
            let start = ContinuousClock.now
            try body()
            walls.append(milliseconds(ContinuousClock.now - start))
            cpus.append((processCPUTime() - cpu) * 1000)
        }
        return (median(walls), median(cpus))
    }
}
