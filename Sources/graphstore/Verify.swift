import ArgumentParser
import Foundation
import GraphStore
import GraphStoreSQLite

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a store; the exit status says whether it is sound (0) or not (1).",
        discussion: """
            A snapshot: checks the gzip CRC and length, the header, the format version, the per-entity \
            counts and that ids are unique. A GraphStore SQLite file: runs SQLite's quick_check, checks the \
            metadata and the column kinds, and that every value of every row decodes as its column's kind. \
            A Core Data, SwiftData or plain SQLite database: checks that it imports (with --model, that it \
            matches the model).
            """)

    @OptionGroup var source: SourceOptions

    func run() async throws {
        try await reportingErrors {
            let file = source.file
            let opened = try source.open()
            switch opened {
            case .graphStoreSQLite: warnAboutOtherNames(of: source.url, kind: .graphStoreSQLite)
            case .read(_, let kind): warnAboutOtherNames(of: source.url, kind: kind)
            }
            switch opened {
            case .graphStoreSQLite:
                let info = try SQLiteStoreInfo.verify(source.url)
                let total = info.entities.reduce(0) { $0 + $1.rows }
                writeOut("\(file): OK (SQLite, \(info.entities.count) entities, \(total) objects, store version \(info.storeVersion))\n")
            case .read(let read, let kind):
                // What an import left out or changed (references to rows that do not exist, NULLs
                // given defaults): the migrated store opens, but without those values.
                for line in read.coreDataReport?.warnings ?? [] { warn(line) }
                let snapshot = read.snapshot
                let total = snapshot.entities.reduce(0) { $0 + $1.objects.count }
                let what = kind == .snapshot ? "" : "\(kind.displayName), "
                writeOut("\(file): OK (\(what)\(snapshot.entities.count) entities, \(total) objects, store version \(snapshot.header.storeVersion))\n")
            }
        }
    }
}
