import ArgumentParser
import Foundation
import GraphStore
import GraphStoreSQLite

struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a store's format, versions and entities with counts and sizes.")

    @OptionGroup var source: SourceOptions

    func run() async throws {
        try await reportingErrors {
            let url = source.url
            guard case .read(let read, let kind) = try source.open() else {
                writeOut(Self.describe(try SQLiteStoreInfo.inspect(url)))
                return
            }
            let snapshot = read.snapshot
            let size = FileStatus.size(atPath: url.path) ?? 0
            let header = snapshot.header
            let what = kind == .snapshot
                ? "snapshot, \(snapshot.format == .json ? "JSON" : "binary property list"), \(snapshot.compression == .gzip ? "gzip" : "uncompressed")"
                : "\(kind.displayName) (read as a snapshot would hold it)"
            var lines = [
                "file:            \(url.path) (\(size) bytes)",
                "kind:            \(what)",
                "format:          \(header.format) \(header.formatVersion)",
                "model version:   \(header.modelVersion)",
                "store version:   \(header.storeVersion)",
                "saved at:        \(header.savedAt.formatted(.iso8601))",
                "",
                "entity                objects        bytes",
            ]
            for (name, objects) in snapshot.entities {
                let bytes = try SnapshotJSON.encode(.array(objects)).count
                lines.append("\(name.padding(toLength: 20, withPad: " ", startingAt: 0)) \(String(objects.count).leftPadded(8)) \(String(bytes).leftPadded(12))")
            }
            writeOut((lines + read.notes.map { "note: \($0)" }).joined(separator: "\n") + "\n")
        }
    }

    /// The lines for a SQLite file: as for a snapshot, with the bytes of each table's pages.
    static func describe(_ info: SQLiteStoreInfo) -> String {
        var lines = [
            "file:            \(info.path) (\(info.fileSize) bytes)",
            "kind:            SQLite, \(info.isWriteAheadLog ? "write-ahead log" : "rollback journal"), \(info.pageSize)-byte pages",
            "format:          \(info.format) \(info.formatVersion)",
            "model version:   \(info.modelVersion)",
            "store version:   \(info.storeVersion)",
            "",
            "entity                objects        bytes  columns",
        ]
        for entity in info.entities {
            let bytes = entity.bytes.map(String.init) ?? "-"
            let columns = entity.columns.map { "\($0.name):\($0.kind)" }.joined(separator: " ")
            lines.append("\(entity.name.padding(toLength: 20, withPad: " ", startingAt: 0)) \(String(entity.rows).leftPadded(8)) \(bytes.leftPadded(12))  \(columns)")
        }
        if info.entities.contains(where: { $0.bytes == nil }) {
            lines.append("(bytes: this SQLite has no dbstat table; the file holds \(info.fileSize) bytes in all)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

/// JSON text for generic values, as the snapshot writes it.
enum SnapshotJSON {
    static func encode(_ value: SnapshotValue, pretty: Bool = false) throws -> Data {
        let object = value.jsonObject
        var options: JSONSerialization.WritingOptions = [.sortedKeys, .fragmentsAllowed]
        if pretty { options.insert(.prettyPrinted) }
        return try JSONSerialization.data(withJSONObject: object, options: options)
    }
}
