import ArgumentParser
import Foundation
import GraphStore
import GraphStoreSQLite
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Migrate a store between a snapshot file and SQLite, or import a Core Data or plain SQLite database.",
        discussion: """
            What SRC and DST are comes from their names: .sqlite, .sqlite3 and .db are SQLite; \
            .json, .json.gz, .plist and .plist.gz are snapshots in that format and compression. \
            --from, --to, --format and --compression override the names. The destination is written \
            under a temporary name and renamed into place when complete; an existing one is replaced \
            only with --force. On a terminal, stderr shows a progress bar per entity; stdout gets a \
            summary at the end.
            """)

    /// What the source is.
    enum SourceKind: String, ExpressibleByArgument, CaseIterable {
        case snapshot, sqlite, coredata
        case plainSQLite = "plain-sqlite"
    }

    /// What the destination is.
    enum DestinationKind: String, ExpressibleByArgument, CaseIterable {
        case snapshot, sqlite
    }

    @Argument(help: "The store to read.") var source: String
    @Argument(help: "The file to write.") var destination: String
    @Option(help: "What SRC is: snapshot, sqlite, coredata or plain-sqlite (default: from its name).") var from: SourceKind?
    @Option(help: "What DST is: snapshot or sqlite (default: from its name).") var to: DestinationKind?
    @Option(help: "The snapshot format: json or plist (default: from DST's name, else json).") var format: SnapshotFormat?
    @Option(help: "The snapshot compression: gzip or none (default: from DST's name, else gzip).") var compression: Compression?
    @Flag(help: "Overwrite an existing destination.") var force = false

    func validate() throws {
        if destinationKind == .sqlite, format != nil || compression != nil {
            throw ValidationError("--format and --compression apply to a snapshot destination, not to SQLite")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let sourceURL = URL(fileURLWithPath: source)
            let destinationURL = URL(fileURLWithPath: destination)
            guard let target = destinationKind else {
                throw ToolError("cannot tell what \(destination) should be from its name; name it .sqlite, .json.gz, .plist… or pass --to snapshot|sqlite")
            }
            let origin = try sourceKind(sourceURL)
            try checkDestination(destinationURL, force: force)
            let options = MigrationOptions(overwrite: force)
            let progress = ProgressBar.callbackIfTerminal
            let started = ContinuousClock.now
            // Read the whole source, then write the destination: each phase draws its progress.
            var notes: [String] = []
            let snapshot: GenericSnapshot
            switch origin {
            case .snapshot:
                ProgressBar.say("reading \(source)…")
                snapshot = try GenericSnapshot.read(from: sourceURL)
            case .sqlite:
                snapshot = try withImportHint { try Migration.readSQLite(from: sourceURL, progress: progress?("read")) }
            case .coredata:
                let (imported, report) = try CoreDataImporter.snapshot(from: sourceURL, progress: progress?("read"))
                snapshot = imported
                notes += report.skippedTables.map { "skipped table \($0)" } + report.skippedEntities.map { "skipped entity \($0)" } + report.warnings
            case .plainSQLite:
                let (imported, report) = try PlainSQLiteImporter.snapshot(from: sourceURL, progress: progress?("read"))
                snapshot = imported
                notes += report.skippedTables.map { "skipped table \($0)" }
            }
            var summary: MigrationSummary
            switch target {
            case .sqlite:
                summary = try Migration.writeSQLite(snapshot, to: destinationURL, options: options, progress: progress?("write"))
            case .snapshot:
                ProgressBar.say("writing \(destination)…")
                summary = try Migration.writeSnapshot(
                    snapshot, to: destinationURL, format: snapshotFormat, compression: snapshotCompression, options: options)
            }
            summary.source = sourceURL
            summary.bytesRead = fileSize(sourceURL)
            summary.duration = ContinuousClock.now - started
            let what = target == .sqlite ? "SQLite" : "\(snapshotFormat == .json ? "JSON" : "binary property list") snapshot, \(snapshotCompression.rawValue)"
            writeOut("migrated \(source) (\(origin.rawValue)) to \(destination) (\(what))\n" + summary.description + "\n")
            if !notes.isEmpty { writeOut(notes.joined(separator: "\n") + "\n") }
        }
    }

    // MARK: - Kinds from names

    /// The destination's kind: `--to`, or its name.
    var destinationKind: DestinationKind? {
        if let to { return to }
        return Self.nameKind(destination).map { $0.isSQLite ? .sqlite : .snapshot }
    }

    var snapshotFormat: SnapshotFormat {
        format ?? Self.nameKind(destination)?.format ?? .json
    }

    var snapshotCompression: Compression {
        compression ?? Self.nameKind(destination)?.compression ?? .gzip
    }

    /// The source's kind: `--from`, its name, or its first bytes.
    func sourceKind(_ url: URL) throws -> SourceKind {
        if let from { return from }
        if let kind = Self.nameKind(source) { return kind.isSQLite ? .sqlite : .snapshot }
        if SQLiteStoreInfo.isSQLiteDatabase(at: url) { return .sqlite }
        if let handle = FileHandle(forReadingAtPath: url.path) {
            defer { try? handle.close() }
            let start = (try? handle.read(upToCount: 8)) ?? Data()
            if start.starts(with: [0x1F, 0x8B]) || start.starts(with: Array("bplist00".utf8)) || start.first == UInt8(ascii: "{") {
                return .snapshot
            }
        }
        throw ToolError("cannot tell what \(source) is from its name or contents; pass --from snapshot|sqlite|coredata|plain-sqlite")
    }

    /// What a file name says: SQLite, or a snapshot's format and compression.
    static func nameKind(_ name: String) -> (isSQLite: Bool, format: SnapshotFormat?, compression: Compression?)? {
        let lowercased = name.lowercased()
        if [".sqlite", ".sqlite3", ".db"].contains(where: lowercased.hasSuffix) { return (true, nil, nil) }
        let compression: Compression = lowercased.hasSuffix(".gz") ? .gzip : .none
        let base = compression == .gzip ? String(lowercased.dropLast(3)) : lowercased
        if base.hasSuffix(".json") { return (false, .json, compression) }
        if base.hasSuffix(".plist") { return (false, .binaryPropertyList, compression) }
        return nil
    }

    // MARK: - Private

    /// Runs `body`; a SQLite source that is not a GraphStore store gets a hint to import it.
    private func withImportHint<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as GraphStoreError {
            if case .damagedFile(_, _, let reason) = error, reason.contains("not a GraphStore store") {
                throw ToolError("\(error.description) To import it, pass --from coredata (a Core Data store) or --from plain-sqlite.")
            }
            throw error
        }
    }

    private func fileSize(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}

/// A one-line progress bar per entity on standard error, redrawn with `\r`.
final class ProgressBar: Sendable {
    private let phase: String
    /// The last report drawn, so a repeated one (an empty entity's `0/0` at start and end) is
    /// drawn once.
    private let last = Mutex<MigrationProgress?>(nil)

    private init(phase: String) {
        self.phase = phase
    }

    /// A callback factory (given the phase, "read" or "write") when standard error is a terminal;
    /// `nil` otherwise, so nothing is printed until the summary.
    static var callbackIfTerminal: ((String) -> @Sendable (MigrationProgress) -> Void)? {
        guard isatty(2) == 1 else { return nil }
        return { phase in
            let bar = ProgressBar(phase: phase)
            return { progress in bar.draw(progress) }
        }
    }

    /// A line on standard error when it is a terminal, such as "reading store.json.gz…".
    static func say(_ line: String) {
        if isatty(2) == 1 { FileHandle.standardError.write(Data((line + "\n").utf8)) }
    }

    /// `Post (write)   [##########          ]  50%   50000/100000`, ending the line when the
    /// entity is complete.
    private func draw(_ progress: MigrationProgress) {
        let isRepeat = last.withLock { last in
            defer { last = progress }
            return last == progress
        }
        guard !isRepeat else { return }
        let width = 30
        let filled = Int((progress.fractionCompleted * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let label = "\(progress.entity) (\(phase))".padding(toLength: max(24, progress.entity.count + 8), withPad: " ", startingAt: 0)
        let percent = String(Int((progress.fractionCompleted * 100).rounded(.down))).leftPadded(3)
        let line = "\r\(label) [\(bar)] \(percent)%  \(progress.done)/\(progress.total)" + (progress.done >= progress.total ? "\n" : "")
        FileHandle.standardError.write(Data(line.utf8))
    }
}
