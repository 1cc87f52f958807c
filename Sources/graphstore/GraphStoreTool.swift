import ArgumentParser
import Foundation
import GraphStore
import GraphStoreSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `graphstore`: inspect, verify, dump, convert and migrate GraphStore stores without the app's
/// Swift types.
@main
struct GraphStoreTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graphstore",
        abstract: "Inspect, verify, dump, convert and migrate GraphStore stores.",
        subcommands: [Inspect.self, Dump.self, Verify.self, Convert.self, Migrate.self, Generate.self])
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

/// The store at `url` as generic values, whatever its kind (detected unless `kind` says); a
/// Core Data or SwiftData store with the model at `model` and the ids and names `flags` give.
func readStore(_ url: URL, kind: StoreKind? = nil, model: String? = nil, flags: CoreDataImportFlags? = nil) throws -> Migration.ReadStore {
    let description = try model.map { try CoreDataModelDescription.read(from: URL(fileURLWithPath: $0)) }
    let options = try flags?.importOptions(model: description) ?? CoreDataImportOptions(model: description)
    return try Migration.readStore(from: url, kind: kind, coreDataOptions: options)
}

/// The store a command reads and how to read it: shared by inspect, dump and verify (generate
/// takes the model as required and a narrower `--from`).
struct SourceOptions: ParsableArguments {
    @Argument(help: "A snapshot, a GraphStore SQLite store, a Core Data or SwiftData store, or a plain SQLite database.") var file: String
    @Option(help: "What the file is: snapshot, sqlite, coredata, swiftdata or plain-sqlite (default: from its bytes and tables).") var from: StoreKind?
    @Option(help: "The app's Core Data model (.xcdatamodeld or .xcdatamodel), for its names and types.") var model: String?
    @OptionGroup var coreDataFlags: CoreDataImportFlags

    /// The file as a URL.
    var url: URL { URL(fileURLWithPath: file) }

    /// The store, read as its kind (``from``, or detected) allows.
    ///
    /// - Throws: the errors of `StoreKind.detect(at:)` and of ``readStore(_:kind:model:flags:)``.
    func open() throws -> SourceStore {
        let kind = try from ?? StoreKind.detect(at: url)
        return kind == .graphStoreSQLite ? .graphStoreSQLite : .read(try readStore(url, kind: kind, model: model, flags: coreDataFlags), kind: kind)
    }
}

/// A store as ``SourceOptions/open()`` gives it.
enum SourceStore {
    /// A GraphStore SQLite file: left to `SQLiteStoreInfo`, which looks at it in place.
    case graphStoreSQLite
    /// Any other kind, read as a snapshot would hold it.
    case read(Migration.ReadStore, kind: StoreKind)
}

/// How to write a snapshot destination and whether to replace an existing one: shared by
/// convert and migrate.
struct DestinationOptions: ParsableArguments {
    @Option(help: "The snapshot format: json or plist.") var format: SnapshotFormat?
    @Option(help: "The snapshot compression: gzip or none.") var compression: Compression?
    @Flag(help: "Overwrite an existing destination, and remove the previous snapshot (<file>.previous) of the store it replaces.") var force = false
}

extension StoreKind: ExpressibleByArgument {}

/// Writes `text` to standard output.
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

/// Writes `line` to standard error as a warning.
func warn(_ line: String) {
    FileHandle.standardError.write(Data("graphstore: warning: \(line)\n".utf8))
}

/// Warns when the store at `url`, of `kind`, is a file with other hard links and no journal
/// beside this name: an app that opened it under another name keeps its journal (saves its file
/// does not hold yet) beside that name, where no reader of this name can find it, so those
/// saves would be missing from what is read here without a word.
func warnAboutOtherNames(of url: URL, kind: StoreKind) {
    guard kind == .snapshot || kind == .graphStoreSQLite, let message = otherNamesWarning(for: url) else { return }
    warn(message)
}

/// The warning of ``warnAboutOtherNames(of:kind:)``, or `nil` when the file has one name or a
/// journal beside this one.
func otherNamesWarning(for url: URL) -> String? {
    var info = stat()
    guard stat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink > 1 else { return nil }
    let names = [url.path, url.resolvingSymlinksInPath().path]
    guard !names.contains(where: { FileManager.default.fileExists(atPath: $0 + ".journal") }) else { return nil }
    let others = info.st_nlink - 1
    return "\(url.path) has \(others) other hard link\(others == 1 ? "" : "s") (the same file, inode \(info.st_ino), under another name): "
        + "an app that opened the store under another name keeps its journal beside that name, and saves still only in that journal "
        + "are not seen here; read the store under the name the app opens, or open and close it with the app first"
}

/// `--id-column` and `--attribute-name`: how to read a Core Data or SwiftData store's ids and
/// names, shared by every command that reads one, so that the types `generate` prints open the
/// snapshot `migrate` writes with the same flags, and `verify`, `inspect` and `dump` read the
/// store as `migrate` does.
struct CoreDataImportFlags: ParsableArguments {
    @Option(
        name: .customLong("id-column"),
        help: ArgumentHelp(
            "For a Core Data or SwiftData store: the column whose values become ENTITY's ids, or Z_PK (repeatable; CoreDataImportOptions.idColumns).",
            valueName: "ENTITY=COLUMN"))
    var idColumns: [String] = []
    @Option(
        name: .customLong("attribute-name"),
        help: ArgumentHelp(
            "For a Core Data or SwiftData store: the field name of ENTITY's column COLUMN (repeatable; CoreDataImportOptions.attributeNames).",
            valueName: "ENTITY.COLUMN=NAME"))
    var attributeNames: [String] = []

    /// `--id-column` and `--attribute-name` as Core Data import options, with `model`.
    func importOptions(model: CoreDataModelDescription?) throws -> CoreDataImportOptions {
        /// `text` cut at its first `separator`, both parts non-empty, or an error quoting `whole`.
        func split(_ text: Substring, at separator: Character, of whole: String, _ flag: String, _ form: String) throws -> (Substring, Substring) {
            let parts = text.split(separator: separator, maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError("\(flag) takes \(form), not \(whole)")
            }
            return (parts[0], parts[1])
        }
        // Names match in any case, so two entries that differ only in case are one named twice.
        var seen = Set<String>()
        var ids: [String: String] = [:]
        for pair in idColumns {
            let (entity, column) = try split(pair[...], at: "=", of: pair, "--id-column", "ENTITY=COLUMN (for example Person=Z_PK)")
            guard seen.insert("id/" + entity.uppercased()).inserted else { throw ValidationError("--id-column names \(entity) twice") }
            ids[String(entity)] = String(column)
        }
        var names: [String: [String: String]] = [:]
        for pair in attributeNames {
            let form = "ENTITY.COLUMN=NAME (for example Person.ZID=importedID)"
            let (field, name) = try split(pair[...], at: "=", of: pair, "--attribute-name", form)
            let (entity, column) = try split(field, at: ".", of: pair, "--attribute-name", form)
            guard seen.insert("name/" + entity.uppercased() + "." + column.uppercased()).inserted else {
                throw ValidationError("--attribute-name names \(entity).\(column) twice")
            }
            names[String(entity), default: [:]][String(column)] = String(name)
        }
        return CoreDataImportOptions(attributeNames: names, idColumns: ids, model: model)
    }

    func validate() throws {
        _ = try importOptions(model: nil)
    }
}
