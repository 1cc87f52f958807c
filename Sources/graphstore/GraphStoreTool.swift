import ArgumentParser
import Foundation
import GraphStore
import GraphStoreSQLite

/// `graphstore`: inspect, verify, dump, convert and migrate GraphStore stores without the app's
/// Swift types.
@main
struct GraphStoreTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graphstore",
        abstract: "Inspect, verify, dump, convert and migrate GraphStore stores.",
        subcommands: [Inspect.self, Dump.self, Verify.self, Convert.self, Migrate.self])
}

/// An error the tool reports as one line on stderr.
struct ToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body`; a `GraphStoreError` or ``ToolError`` becomes one line on stderr and exit status 1.
func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as GraphStoreError {
        FileHandle.standardError.write(Data("graphstore: \(error.description)\n".utf8))
        throw ExitCode.failure
    } catch let error as ToolError {
        FileHandle.standardError.write(Data("graphstore: \(error.description)\n".utf8))
        throw ExitCode.failure
    }
}

/// The store at `url` as generic values: a GraphStore SQLite file (told by SQLite's magic) or a
/// snapshot file.
func readStore(_ url: URL) throws -> GenericSnapshot {
    SQLiteStoreInfo.isSQLiteDatabase(at: url) ? try Migration.readSQLite(from: url) : try GenericSnapshot.read(from: url)
}

/// Writes `data` to standard output.
func writeOut(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

extension SnapshotFormat: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument.lowercased() {
        case "json": self = .json
        case "plist", "binaryplist", "binarypropertylist", "bplist": self = .binaryPropertyList
        default: return nil
        }
    }
}

extension Compression: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument.lowercased())
    }
}
