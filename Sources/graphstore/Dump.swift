import ArgumentParser
import Foundation
import GraphStore
import GraphStoreSQLite

struct Dump: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a store as JSON (the whole document, or one entity's objects).")

    @OptionGroup var source: SourceOptions
    @Option(help: "Print only this entity's objects, as a JSON array.") var entity: String?

    func run() async throws {
        try await reportingErrors {
            let snapshot = try readStore(source.url, kind: source.from, model: source.model).snapshot
            let value: SnapshotValue
            if let entity {
                guard snapshot.entities.contains(where: { $0.name == entity }) else {
                    throw ToolError("\(source.file) has no entity \(entity); it has \(snapshot.entities.map(\.name).joined(separator: ", "))")
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
