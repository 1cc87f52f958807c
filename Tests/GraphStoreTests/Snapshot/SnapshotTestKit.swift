import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Helpers shared by the `Snapshot*Tests` suites: reaching the writer, reading snapshot files
/// back, comparing values to the bit, child processes and tmpfs mounts.
enum SnapshotTestKit {
    // MARK: - Configurations

    /// Every document format with every compression.
    static let allLayouts: [(format: SnapshotFormat, compression: Compression)] =
        SnapshotFormat.allCases.flatMap { format in Compression.allCases.map { (format, $0) } }

    /// A file name that says what the layout is, such as `store.json.gz`.
    static func fileName(_ format: SnapshotFormat, _ compression: Compression) -> String {
        "store.\(format.fileExtension)" + (compression == .gzip ? ".gz" : "")
    }

    // MARK: - Reaching internals

    /// The snapshot-file backend of `container`.
    static func backend(of container: GraphContainer) -> SnapshotFileBackend {
        container.core.backend as! SnapshotFileBackend
    }

    /// The coalescing writer of `container`.
    static func writer(of container: GraphContainer) -> SnapshotWriter {
        backend(of: container).writer
    }

    /// The schema of the example model.
    static let exampleSchema = Schema(exampleModel)

    /// The header and graph in the snapshot at `url`, read the way a container opens it.
    static func readSnapshot(
        _ url: URL, schema: Schema = exampleSchema, limit: Int = 1 << 30
    ) throws -> (header: SnapshotHeaderV1, version: GraphVersion) {
        let document = try #require(try SnapshotFileBackend.readDocument(url, limit: limit), "no file at \(url.path)")
        return try SnapshotCodec.decode(document, schema: schema, path: url.path)
    }

    /// The objects of `type` in `version`.
    static func objects<E: Entity>(_ type: E.Type, in version: GraphVersion, schema: Schema = exampleSchema) -> [E] {
        version.tables[schema.index(of: type)].values.map { $0.value as! E }
    }

    /// Every object of `type` the main context sees.
    static func fetchAll<E: Entity>(_ type: E.Type, from container: GraphContainer) throws -> [E] {
        try container.mainContext.fetch(FetchDescriptor<E>())
    }

    // MARK: - Files

    /// The names in `directory`, hidden ones included.
    static func entries(of directory: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
    }

    /// The size of the file at `url`.
    static func fileSize(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.size] as? NSNumber)?.intValue ?? -1
    }

    /// Temporary files left by an atomic write of `url`.
    static func temporaryFiles(for url: URL) -> [String] {
        let prefix = AtomicFile.temporaryPrefix(for: url)
        return entries(of: url.deletingLastPathComponent()).filter { $0.hasPrefix(prefix) || $0.hasSuffix("-staging") }
    }

    // MARK: - Exact comparison

    /// Whether two strings hold the same Unicode scalars (`==` on `String` only checks
    /// canonical equivalence, so "é" and "e\u{301}" would compare equal).
    static func sameScalars(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8)
    }

    static func sameScalars(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case let (a?, b?): sameScalars(a, b)
        default: false
        }
    }

    /// The Unicode scalars of `text` as `U+` numbers, for messages.
    static func scalars(_ text: String) -> String {
        "[" + text.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ") + "]"
    }

    /// Whether two dates hold the same `Double` bits.
    static func sameBits(_ a: Date, _ b: Date) -> Bool {
        a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
    }

    /// Whether two doubles are the same value to the bit; any NaN matches any NaN (a NaN's
    /// payload and sign are not promised to survive a text format).
    static func sameBits(_ a: Double, _ b: Double) -> Bool {
        (a.isNaN && b.isNaN) || a.bitPattern == b.bitPattern
    }

    static func sameBits(_ a: Float, _ b: Float) -> Bool {
        (a.isNaN && b.isNaN) || a.bitPattern == b.bitPattern
    }

    static func exactlyEqual(_ a: Post, _ b: Post) -> Bool {
        a == b && sameScalars(a.blogName, b.blogName) && sameScalars(a.summary, b.summary)
            && sameScalars(a.body, b.body) && sameBits(a.date, b.date)
    }

    static func exactlyEqual(_ a: Note, _ b: Note) -> Bool {
        a == b && sameScalars(a.text, b.text) && sameBits(a.createdAt, b.createdAt) && sameBits(a.modifiedAt, b.modifiedAt)
    }

    static func exactlyEqual(_ a: ExampleModel.Tag, _ b: ExampleModel.Tag) -> Bool {
        a == b && sameScalars(a.name, b.name)
    }

    // MARK: - Errors

    /// The file a file-related error names.
    static func path(of error: GraphStoreError) -> String? {
        switch error {
        case .damagedFile(let path, _, _), .unsupportedFormatVersion(let path, _, _),
             .decompressedSizeLimitExceeded(let path, _), .storeLocked(let path),
             .fileOperationFailed(let path, _, _):
            path
        case .codingFailed(let path, _, _, _):
            path
        default:
            nil
        }
    }

    // MARK: - Blocking work

    /// Runs blocking `work` on a thread of its own rather than on one of the few threads of
    /// the cooperative pool, which other tests share.
    static func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await offCooperativePool(work)
    }

    // MARK: - Child processes

    /// Runs `python3 -c script arguments…` and returns its standard output.
    ///
    /// - Throws: ``ProcessFailure`` with Python's standard error when it exits non-zero.
    static func runPython(_ script: String, _ arguments: [String]) async throws -> Data {
        try await pythonOutput(script, arguments)
    }

    // MARK: - Waiting for the writer

    /// Waits (off the cooperative pool) until the writer's queue has run everything submitted.
    static func waitUntilIdle(_ writer: SnapshotWriter) async throws {
        try await offload { writer.queue.sync {} }
    }
}
