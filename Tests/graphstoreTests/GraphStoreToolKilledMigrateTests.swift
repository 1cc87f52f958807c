import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `graphstore migrate` killed with SIGKILL while it writes its destination leaves the
/// temporary file it was writing; run again a minute later, it removes it and leaves only the
/// destination.
@Suite struct GraphStoreToolKilledMigrateTests {
    @Test(arguments: ["copy.sqlite", "copy.json.gz"])
    func migrateKilledWhileWritingAndRunAgainLeavesOnlyTheDestination(_ name: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("source.json.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(source))
        let tags = Fixtures.tagNames.map { Tag(name: $0) }
        for tag in tags { container.mainContext.insert(tag) }
        for post in Fixtures.posts(20_000, tags: tags.map(\.id)) { container.mainContext.insert(post) }
        try container.mainContext.save()
        try await container.close()
        let destination = directory.file(name)
        let tool = try productsDirectory(containing: "graphstore").appendingPathComponent("graphstore")
        func temporaries() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? []).filter { $0.contains(".migrating-") }
        }

        // Killed as soon as its temporary file appears. The second run, killed the same way,
        // removes the first one's file before it writes its own.
        var killedWhileWriting = 0
        for _ in 0..<2 {
            let process = Process()
            process.executableURL = tool
            process.arguments = ["migrate", source.path, destination.path, "--force"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let own = ".migrating-\(process.processIdentifier)-"
            while process.isRunning, !temporaries().contains(where: { $0.contains(own) }) {
                usleep(100)
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let left = temporaries()
            if process.terminationReason == .uncaughtSignal, !left.isEmpty {
                killedWhileWriting += 1
                #expect(left.allSatisfy { $0.contains(own) }, "\(left)")
            }
            // A minute and more passes.
            for name in left {
                try FileManager.default.setAttributes(
                    [.modificationDate: Date(timeIntervalSinceNow: -120)], ofItemAtPath: directory.url.appendingPathComponent(name).path)
            }
        }
        #expect(killedWhileWriting > 0, "no kill landed while a temporary file was there")

        let result = try await runProduct("graphstore", ["migrate", source.path, destination.path, "--force"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(temporaries().isEmpty, "\(temporaries())")
        let snapshot = try Migration.readStore(from: destination).snapshot
        #expect(snapshot.objects(of: "Post").count == 20_000)
    }
}
