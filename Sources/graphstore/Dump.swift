import ArgumentParser
import Foundation
import GraphStore

struct Dump: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a store as JSON (the whole document, or one entity's objects).")

    @Argument(help: "A snapshot file or a GraphStore SQLite file.") var file: String
    @Option(help: "Print only this entity's objects, as a JSON array.") var entity: String?

    func run() async throws {
        try await reportingErrors {
            let snapshot = try readStore(URL(fileURLWithPath: file))
            let value: SnapshotValue
            if let entity {
                guard snapshot.entities.contains(where: { $0.name == entity }) else {
                    throw ToolError("\(file) has no entity \(entity); it has \(snapshot.entities.map(\.name).joined(separator: ", "))")
                }
                value = .array(snapshot.objects(of: entity))
            } else {
                let document = try JSONSerialization.jsonObject(with: snapshot.encoded(as: .json))
                writeOut(String(decoding: try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .prettyPrinted]), as: UTF8.self) + "\n")
                return
            }
            writeOut(String(decoding: try SnapshotJSON.encode(value, pretty: true), as: UTF8.self) + "\n")
        }
    }
}
