import ArgumentParser
import Foundation
import GraphStore
import GraphStoreSQLite

struct Convert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rewrite a snapshot in another format or compression.",
        discussion: "--format is required; --compression defaults to gzip.")

    @Argument(help: "A snapshot file.") var file: String
    @Option(name: .shortAndLong, help: "Where to write (default: the input's name with the new extension).") var output: String?
    @OptionGroup var destinationOptions: DestinationOptions

    /// The format to write: `--format`, which ``validate()`` requires.
    var format: SnapshotFormat { destinationOptions.format ?? .json }
    /// The compression to write: `--compression`, else gzip.
    var compression: Compression { destinationOptions.compression ?? .gzip }
    var force: Bool { destinationOptions.force }

    func validate() throws {
        guard destinationOptions.format != nil else {
            throw ValidationError("Missing expected argument '--format <format>'")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let source = URL(fileURLWithPath: file)
            let destination = output.map { URL(fileURLWithPath: $0) } ?? Self.defaultDestination(for: source, format: format, compression: compression)
            // Told from its bytes and tables first, so that a sound store of another kind is
            // called what it is rather than a damaged snapshot.
            let kind = try StoreKind.detect(at: source)
            guard kind == .snapshot else {
                let suggested = source.deletingPathExtension().path + "." + format.fileExtension + (compression == .gzip ? ".gz" : "")
                throw ToolError(
                    "\(file) is a \(kind.displayName), not a snapshot: convert rewrites snapshots in another format or compression; to write it as a snapshot, use `graphstore migrate \(file) \(suggested)`")
            }
            // Before reading: a store read before its lock is taken, then written over itself,
            // would lose the saves an app made meanwhile.
            try Migration.checkDistinct(source: source, destination: destination, operation: "convert")
            try checkDestination(destination, force: force, source: source)
            let snapshot = try GenericSnapshot.read(from: source)
            warnAboutOtherNames(of: source, kind: kind)
            // As `migrate` writes: refused over a store that is open or whose journal holds saves
            // its file does not, built under a temporary name and renamed into place.
            try Migration.writeSnapshot(snapshot, to: destination, format: format, compression: compression, options: MigrationOptions(overwrite: force, source: source))
            writeOut("wrote \(destination.path) (\(format == .json ? "JSON" : "binary property list"), \(compression.rawValue))\n")
        }
    }

    /// `store.json.gz` → `store.plist` etc.
    static func defaultDestination(for source: URL, format: SnapshotFormat, compression: Compression) -> URL {
        var base = source.lastPathComponent
        for suffix in [".gz", ".json", ".plist"] where base.hasSuffix(suffix) { base = String(base.dropLast(suffix.count)) }
        return source.deletingLastPathComponent().appendingPathComponent(base + "." + format.fileExtension + (compression == .gzip ? ".gz" : ""))
    }
}

/// Refuses to replace an existing file unless forced, and, unless forced, to write a snapshot
/// store where only the previous snapshot of a store is left (its file removed): that snapshot
/// is the last copy of that store, and the migration removes it so that the new store's
/// recovery never opens it. (A SQLite store never reads a previous snapshot.)
func checkDestination(_ url: URL, force: Bool, source: URL, writesSnapshot: Bool = true) throws {
    guard !force else { return }
    if FileManager.default.fileExists(atPath: url.path) {
        throw ToolError("\(url.path) exists; pass --force to overwrite it")
    }
    guard writesSnapshot else { return }
    // As the migration resolves it: the store's previous snapshot is beside the file a link names.
    let previous = PreviousSnapshot.path(forStoreAt: StorePath.canonical(url).path)
    if case .success(let found) = FileStatus.of(path: previous), (try? FileStatus.of(path: source.path).get()).map(found.isSameFile(as:)) != true {
        throw ToolError(
            "\(previous) exists: the previous snapshot of a store that was at \(url.path), and the last copy of it; a store written there would take it for its own previous snapshot. Move it away, or pass --force to remove it")
    }
}
