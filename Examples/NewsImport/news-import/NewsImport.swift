import ArgumentParser
import Foundation
import GraphStore
import NewsCore

@main
struct NewsImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "news-import",
        abstract: "Import an RSS feed file into a region's articles on a background context.")

    @Argument(help: "An RSS 2.0 feed file.") var feed: String
    @Option(help: "The region the feed belongs to.") var region: String = "World"
    @Option(help: "The store file.") var store: String = ".news/news.json.gz"

    func run() async throws {
        do {
            let url = URL(fileURLWithPath: store)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let container = try GraphContainer(for: newsModel, store: .file(url))
            let importer = NewsImporter(container: container)
            let target = try importer.region(named: region, feedURL: feed)
            let data = try Data(contentsOf: URL(fileURLWithPath: feed))
            let done = try await importer.importFeed(data, into: target.id)
            try await container.close()
            print("\(done.region.name): imported \(done.imported) items; the region holds \(done.articlesInRegion) articles.")
        } catch let error as GraphStoreError {
            FileHandle.standardError.write(Data("news-import: \(error.description)\n".utf8))
            throw ExitCode.failure
        } catch let error as RSSParser.Failure {
            FileHandle.standardError.write(Data("news-import: \(feed): \(error.description)\n".utf8))
            throw ExitCode.failure
        }
    }
}
