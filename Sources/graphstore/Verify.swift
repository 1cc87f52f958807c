import ArgumentParser
import Foundation
import GraphStore

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a store; the exit status says whether it is sound (0) or not (1).",
        discussion: "Checks the gzip CRC and length, the header, the format version, the per-entity counts and that ids are unique.")

    @Argument(help: "A snapshot file.") var file: String

    func run() async throws {
        try await reportingErrors {
            let snapshot = try GenericSnapshot.read(from: URL(fileURLWithPath: file))
            let total = snapshot.entities.reduce(0) { $0 + $1.objects.count }
            writeOut("\(file): OK (\(snapshot.entities.count) entities, \(total) objects, store version \(snapshot.header.storeVersion))\n")
        }
    }
}
