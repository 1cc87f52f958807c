import ArgumentParser
import Foundation
import GraphStore
import GraphStoreSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Migrate a store between a snapshot file and SQLite, or import a Core Data or plain SQLite database.",
        discussion: """
            What SRC is comes from its bytes and tables: a GraphStore snapshot or SQLite store, a Core \
            Data or SwiftData store, or a plain SQLite database; --from overrides it. Pass a Core Data \
            app's model with --model to keep its names and types. What DST is comes from its name: \
            .sqlite, .sqlite3 and .db are SQLite; .json, .json.gz, .plist and .plist.gz are snapshots in \
            that format and compression; --to, --format and --compression override the name. The destination is written \
            under a temporary name and renamed into place when complete; an existing one is replaced \
            only with --force. On a terminal, stderr shows a progress bar per entity; stdout gets a \
            summary at the end.
            """)

    /// What the destination is.
    enum DestinationKind: String, ExpressibleByArgument, CaseIterable {
        case snapshot, sqlite
    }

    @Argument(help: "The store to read.") var source: String
    @Argument(help: "The file to write.") var destination: String
    @Option(help: "What SRC is: snapshot, sqlite, coredata, swiftdata or plain-sqlite (default: from its bytes and tables).") var from: StoreKind?
    @Option(help: "The app's Core Data model (.xcdatamodeld or .xcdatamodel), for its names and types.") var model: String?
    @OptionGroup var coreDataFlags: CoreDataImportFlags
    @Option(help: "What DST is: snapshot or sqlite (default: from its name).") var to: DestinationKind?
    @OptionGroup var destinationOptions: DestinationOptions

    var format: SnapshotFormat? { destinationOptions.format }
    var compression: Compression? { destinationOptions.compression }
    var force: Bool { destinationOptions.force }

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
            // Before reading: a store read before its lock is taken, then written over itself,
            // would lose the saves an app made meanwhile.
            try Migration.checkDistinct(source: sourceURL, destination: destinationURL)
            let description = try model.map { try CoreDataModelDescription.read(from: URL(fileURLWithPath: $0)) }
            try checkDestination(destinationURL, force: force, source: sourceURL, writesSnapshot: target == .snapshot)
            let options = MigrationOptions(overwrite: force, source: sourceURL)
            let progress = ProgressBar.callbackIfTerminal
            let started = ContinuousClock.now
            // Read the whole source, then write the destination: each phase draws its progress.
            ProgressBar.say("reading \(source)…")
            let read = try Migration.readStore(
                from: sourceURL, kind: from, coreDataOptions: try coreDataFlags.importOptions(model: description), progress: progress?("read"))
            let snapshot = read.snapshot
            let origin = read.kind
            warnAboutOtherNames(of: sourceURL, kind: origin)
            let notes = read.notes
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
        return StoreFileName(fileName: destination).map { $0 == .sqlite ? .sqlite : .snapshot }
    }

    /// `--format`, else the format DST's name gives, else JSON.
    var snapshotFormat: SnapshotFormat {
        format ?? StoreFileName(fileName: destination)?.format ?? .json
    }

    /// `--compression`, else the compression DST's name gives, else gzip.
    var snapshotCompression: Compression {
        compression ?? StoreFileName(fileName: destination)?.compression ?? .gzip
    }

    // MARK: - Private

    private func fileSize(_ url: URL) -> Int {
        FileStatus.size(atPath: url.path) ?? 0
    }
}

/// A one-line progress bar per entity on standard error, redrawn with `\r`.
final class ProgressBar: Sendable {
    private let phase: String
    /// The last report drawn, so a repeated one (an empty entity's `0/0` at start and end) is
    /// drawn once.
    private let last = Guarded<MigrationProgress?>(nil)

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
