import ExampleModel
import Foundation
import GraphStore

/// The demo `swift run dashboard` runs: import generated pages on background contexts while
/// the main context watches, then show the newest posts and the store's statistics.
public struct DashboardDemo: Sendable {
    public let container: GraphContainer
    public let storeURL: URL?
    public let output: @Sendable (String) -> Void

    public init(container: GraphContainer, storeURL: URL?, output: @escaping @Sendable (String) -> Void) {
        self.container = container
        self.storeURL = storeURL
        self.output = output
    }

    /// Runs the demo and returns the import report.
    ///
    /// - Throws: `GraphStoreError` from saving or flushing.
    @discardableResult
    public func run(pages: [Data] = DemoPages.pages()) async throws -> DashboardImporter.Report {
        let importer = DashboardImporter(container: container)
        let before = container.count(of: Post.self)
        output(before == 0
            ? "The store is empty: importing the demo pages."
            : "The store already holds \(before) posts from an earlier run: importing the same pages again (an upsert: no duplicates).")

        // The newest posts, observed as a UI list would: new results after each commit that
        // changes them (through the index on date), the latest winning when commits come fast.
        let newestPosts = container.observe(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)], fetchLimit: 20))
        let main = container.mainContext
        let output = output
        let container = container
        let watcher = Task {
            var updates = 0
            for try await newest in newestPosts {
                updates += 1
                guard updates % 5 == 0 else { continue }
                let count = (try? main.fetchCount(FetchDescriptor<Post>())) ?? 0
                output("  main context: \(count) posts visible, newest “\(newest.first?.summary ?? "-")” (store version \(container.version))")
            }
        }
        let parsed = try pages.map(TumblrPage.parse)
        let start = ContinuousClock.now
        let report = try await importer.importPages(parsed)
        let imported = ContinuousClock.now - start
        try await container.flush()
        let durable = ContinuousClock.now - start
        watcher.cancel()

        output("")
        output("Imported \(report.posts) posts from \(report.pages) pages (\(report.skipped) broken posts skipped) in \(format(imported)); durable on disk after \(format(durable)).")
        output("")
        output("Newest posts:")
        for post in try importer.newestPosts(8) {
            let tags = importer.tagNames(of: post).map { "#\($0)" }.joined(separator: " ")
            output("  \(post.date.formatted(.iso8601.year().month().day())) \(post.blogName.padding(toLength: 14, withPad: " ", startingAt: 0)) \(post.kind.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) \(post.summary)  \(tags)")
        }
        output("")
        let status = container.storeStatus
        output("Store: \(container.count(of: Post.self)) posts, \(container.count(of: Tag.self)) tags, \(container.count(of: Note.self)) notes; version \(container.version); \(status.writesCompleted) background write(s) this run.")
        if let storeURL {
            // Until the store closes, recent saves sit in its journal (a snapshot store, and a
            // SQLite store between writes) or its write-ahead log (SQLite): counted with it.
            let size = [storeURL.path, storeURL.path + ".journal", storeURL.path + "-wal"].reduce(0) { total, path in
                total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0)
            }
            output("Store file: \(storeURL.path) (\(size) bytes with its journal until it closes). Run again: the posts are still there.")
        }
        return report
    }

    private func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.1f ms", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }
}
