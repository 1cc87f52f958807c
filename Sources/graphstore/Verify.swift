import ArgumentParser
import Foundation
import GraphStore
import GraphStoreSQLite

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a store; the exit status says whether it is sound (0) or not (1).",
        discussion: """
            A snapshot: checks the gzip CRC and length, the header, the format version, the per-entity \
            counts and that ids are unique. A SQLite file: runs SQLite's quick_check, checks the metadata \
            and the column kinds, and that every value of every row decodes as its column's kind.
            """)

    @Argument(help: "A snapshot file or a GraphStore SQLite file.") var file: String

    func run() async throws {
        try await reportingErrors {
            let url = URL(fileURLWithPath: file)
            if SQLiteStoreInfo.isSQLiteDatabase(at: url) {
                let info = try SQLiteStoreInfo.verify(url)
                let total = info.entities.reduce(0) { $0 + $1.rows }
                writeOut("\(file): OK (SQLite, \(info.entities.count) entities, \(total) objects, store version \(info.storeVersion))\n")
                return
            }
            let snapshot = try GenericSnapshot.read(from: url)
            let total = snapshot.entities.reduce(0) { $0 + $1.objects.count }
            writeOut("\(file): OK (\(snapshot.entities.count) entities, \(total) objects, store version \(snapshot.header.storeVersion))\n")
        }
    }
}
