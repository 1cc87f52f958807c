import ArgumentParser
import DashboardCore
import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite

@main
struct Dashboard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A Tumblr-style dashboard on GraphStore: imports posts on background contexts while the main context shows the newest.",
        subcommands: [Demo.self, Import.self],
        defaultSubcommand: Demo.self)
}

/// Options shared by every subcommand.
struct StoreOptions: ParsableArguments {
    @Option(help: "The store file (default .dashboard/dashboard.json.gz, or .dashboard/dashboard.sqlite with --sqlite).")
    var store: String?

    @Flag(help: "Use a SQLite store instead of a snapshot file.")
    var sqlite = false

    @Option(help: "The snapshot format: json or plist.")
    var format: String = "json"

    @Flag(help: "Delete the store before starting.")
    var reset = false

    func validate() throws {
        guard ["json", "plist"].contains(format) else { throw ValidationError("--format must be json or plist, not \(format)") }
    }

    var path: String { store ?? (sqlite ? ".dashboard/dashboard.sqlite" : ".dashboard/dashboard.json.gz") }
    var url: URL { URL(fileURLWithPath: path) }
    var description: String { sqlite ? "SQLite" : "\(format), gzip" }

    func openContainer() throws -> GraphContainer {
        if reset {
            for suffix in ["", ".previous", ".lock", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if sqlite { return try GraphContainer(for: exampleModel, store: .sqlite(url)) }
        return try GraphContainer(
            for: exampleModel,
            store: .file(url, format: format == "plist" ? .binaryPropertyList : .json, compression: .gzip))
    }
}

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the demo on generated pages (the default).")

    @OptionGroup var options: StoreOptions

    func run() async throws {
        try await runReportingErrors {
            let container = try options.openContainer()
            print("GraphStore dashboard demo — store \(options.path) (\(options.description))")
            try await DashboardDemo(container: container, storeURL: options.url, output: { print($0) }).run()
            try await container.close()
        }
    }
}

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Import Tumblr API v2 /posts responses (JSON files).")

    @OptionGroup var options: StoreOptions

    @Argument(help: "Response files to import.")
    var files: [String]

    func run() async throws {
        try await runReportingErrors {
            let container = try options.openContainer()
            let importer = DashboardImporter(container: container)
            var total = DashboardImporter.Report()
            for file in files {
                let page: TumblrPage
                do {
                    page = try TumblrPage.parse(Data(contentsOf: URL(fileURLWithPath: file)))
                } catch {
                    throw CLIError("\(file) is not a Tumblr /posts response: \(error)")
                }
                let report = try await importer.importPage(page)
                print("\(file): \(report.posts) posts, \(report.skipped) skipped, \(report.tags) tags")
                total.posts += report.posts
                total.skipped += report.skipped
            }
            try await container.flush()
            print("Imported \(total.posts) posts (\(total.skipped) skipped); the store holds \(container.count(of: Post.self)) posts and \(container.count(of: Tag.self)) tags.")
            for post in try importer.newestPosts(5) {
                print("  \(post.date.formatted(.iso8601.year().month().day())) \(post.blogName) \(post.kind.rawValue): \(post.summary)")
            }
            try await container.close()
        }
    }
}

struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Prints an error's description on one line to stderr and exits non-zero.
func runReportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as GraphStoreError {
        FileHandle.standardError.write(Data("dashboard: \(error.description)\n".utf8))
        throw ExitCode.failure
    } catch let error as CLIError {
        FileHandle.standardError.write(Data("dashboard: \(error.description)\n".utf8))
        throw ExitCode.failure
    }
}
