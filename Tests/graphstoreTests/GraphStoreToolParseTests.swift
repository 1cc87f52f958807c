import ArgumentParser
import GraphStore
import GraphStoreSQLite
import Testing

@testable import graphstore

/// The `graphstore` tool's arguments parsed in process: options, defaults and validation errors,
/// without running a command.
@Suite struct GraphStoreToolParseTests {
    /// The message ArgumentParser prints for the error `body` throws, or `nil` when it throws none.
    static func parseError(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return GraphStoreTool.message(for: error)
        }
    }

    // MARK: - Migrate

    @Test func migrateTakesTheDestinationKindFromItsName() throws {
        let toSQLite = try Migrate.parse(["store.json.gz", "store.sqlite"])
        #expect(toSQLite.destinationKind == .sqlite)
        #expect(toSQLite.force == false)

        let toPlist = try Migrate.parse(["store.sqlite", "back.PLIST"])
        #expect(toPlist.destinationKind == .snapshot)
        #expect(toPlist.snapshotFormat == .binaryPropertyList)
        #expect(toPlist.snapshotCompression == Compression.none)

        let toJSON = try Migrate.parse(["store.sqlite", "back.json.gz"])
        #expect(toJSON.snapshotFormat == .json)
        #expect(toJSON.snapshotCompression == .gzip)

        let unnamed = try Migrate.parse(["store.sqlite", "back.txt"])
        #expect(unnamed.destinationKind == nil)
        #expect(unnamed.snapshotFormat == .json)
        #expect(unnamed.snapshotCompression == .gzip)
    }

    @Test func migrateOptionsOverrideTheName() throws {
        let command = try Migrate.parse([
            "store.sqlite", "back.json.gz", "--format", "plist", "--compression", "none", "--force",
            "--from", "sqlite", "--model", "App.xcdatamodeld",
        ])
        #expect(command.snapshotFormat == .binaryPropertyList)
        #expect(command.snapshotCompression == Compression.none)
        #expect(command.force)
        #expect(command.from == .graphStoreSQLite)
        #expect(command.model == "App.xcdatamodeld")

        let forced = try Migrate.parse(["store.json.gz", "out.db", "--to", "snapshot"])
        #expect(forced.destinationKind == .snapshot)
    }

    @Test func migrateRefusesSnapshotOptionsForASQLiteDestination() {
        let message = Self.parseError { _ = try Migrate.parse(["store.json.gz", "store.sqlite", "--format", "json"]) }
        #expect(message == "--format and --compression apply to a snapshot destination, not to SQLite")
        let viaTo = Self.parseError { _ = try Migrate.parse(["store.json.gz", "x.json", "--to", "sqlite", "--compression", "gzip"]) }
        #expect(viaTo == "--format and --compression apply to a snapshot destination, not to SQLite")
    }

    @Test func migrateRefusesUnknownValues() {
        #expect(Self.parseError { _ = try Migrate.parse(["a", "b.sqlite", "--from", "yaml"]) }?.contains("yaml") == true)
        #expect(Self.parseError { _ = try Migrate.parse(["a", "b.json", "--format", "yaml"]) }?.contains("yaml") == true)
        #expect(Self.parseError { _ = try Migrate.parse(["a", "b.json", "--compression", "zip"]) }?.contains("zip") == true)
        #expect(Self.parseError { _ = try Migrate.parse(["a"]) } != nil)
    }

    // MARK: - Convert

    @Test func convertNeedsAFormatAndDefaultsToGzip() throws {
        let message = Self.parseError { _ = try Convert.parse(["store.json.gz"]) }
        #expect(message?.contains("--format") == true)

        let command = try Convert.parse(["store.json.gz", "--format", "bplist"])
        #expect(command.format == .binaryPropertyList)
        #expect(command.compression == .gzip)
        #expect(command.force == false)
        #expect(command.output == nil)

        let full = try Convert.parse(["store.json.gz", "--format", "json", "--compression", "none", "-o", "out.json", "--force"])
        #expect(full.format == .json)
        #expect(full.compression == Compression.none)
        #expect(full.force)
        #expect(full.output == "out.json")
    }

    // MARK: - The root command

    @Test func theRootCommandDispatchesToSubcommands() throws {
        let convert = try #require(try GraphStoreTool.parseAsRoot(["convert", "x.json.gz", "--format", "plist"]) as? Convert)
        #expect(convert.file == "x.json.gz")
        #expect(convert.format == .binaryPropertyList)

        let inspect = try #require(try GraphStoreTool.parseAsRoot(["inspect", "App.sqlite", "--from", "coredata"]) as? Inspect)
        #expect(inspect.source.file == "App.sqlite")
        #expect(inspect.source.from == .coreData)
        #expect(inspect.source.model == nil)

        let migrate = try #require(try GraphStoreTool.parseAsRoot(["migrate", "a.sqlite", "b.plist.gz", "--force"]) as? Migrate)
        #expect(migrate.snapshotFormat == .binaryPropertyList)
        #expect(migrate.snapshotCompression == .gzip)
        #expect(migrate.force)

        #expect(Self.parseError { _ = try GraphStoreTool.parseAsRoot(["explode"]) } != nil)
    }
}
