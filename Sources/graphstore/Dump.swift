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
            let snapshot = try readStore(source.url, kind: source.from, model: source.model, flags: source.coreDataFlags).snapshot
            if let entity, !snapshot.entities.contains(where: { $0.name == entity }) {
                throw ToolError("\(source.file) has no entity \(entity); it has \(snapshot.entities.map(\.name).joined(separator: ", "))")
            }
            // The snapshot's own writer, so that every value prints as stored (-0.0, integers
            // beyond 64 bits), indented without reading the numbers again.
            let text: Data
            do {
                text = try snapshot.sortedJSON(entity: entity)
            } catch GraphStoreError.codingFailed(nil, let entity, let id, let reason) {
                throw GraphStoreError.codingFailed(path: source.url.path, entity: entity, id: id, reason: reason)
            }
            writeOut(JSONIndentation.indented(text) + "\n")
        }
    }
}

/// JSON text laid out on lines, two spaces a level, its tokens kept byte for byte.
enum JSONIndentation {
    /// `json` (valid JSON text) with a line per member and element; an empty object or array
    /// stays on one line.
    ///
    /// - Complexity: O(bytes).
    static func indented(_ json: Data) -> String {
        let bytes = [UInt8](json)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 2)
        var depth = 0
        var inString = false, escaped = false
        func newline() {
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * 2))
        }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if inString {
                out.append(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                out.append(byte)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var next = index
                while next < bytes.count, isSpace(bytes[next]) { next += 1 }
                if next < bytes.count, bytes[next] == UInt8(ascii: "}") || bytes[next] == UInt8(ascii: "]") {
                    out.append(byte)
                    out.append(bytes[next])
                    index = next + 1
                } else {
                    out.append(byte)
                    depth += 1
                    newline()
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                newline()
                out.append(byte)
            case UInt8(ascii: ","):
                out.append(byte)
                newline()
            case UInt8(ascii: ":"):
                out.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
            case _ where isSpace(byte):
                break
            default:
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
