import ExampleModel
import Foundation
@testable import GraphStore
import GraphStoreTestSupport
import Testing

/// Random damage to real store files: every mutated snapshot or journal either opens (a
/// consistent graph) or is refused with a ``GraphStoreError``, and a refused open leaves the
/// files byte for byte as they were. Never a crash, a hang or another error type.
///
/// Mutations hit the raw bytes (caught by gzip's CRC or the journal's framing) and, for gzip
/// files, the document inside, compressed again so that the parsers meet them. `swift test`
/// runs a few iterations per file; `scripts/fuzz-open.sh N` runs N.
@Suite struct OpenFuzzTests {
    static let iterations = ProcessInfo.processInfo.environment["GRAPHSTORE_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 40
    static let seed = ProcessInfo.processInfo.environment["GRAPHSTORE_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x5EED

    enum Kind: String, CaseIterable, Sendable {
        case jsonGzip, jsonPlain, plistGzip, plistPlain

        var format: SnapshotFormat { self == .jsonGzip || self == .jsonPlain ? .json : .binaryPropertyList }
        var compression: Compression { self == .jsonGzip || self == .plistGzip ? .gzip : .none }
    }

    /// A store of notes, tags and posts written and closed, plus a journal of later saves
    /// (copied while the container was open, so that it holds records the snapshot does not).
    static func makeStore(_ kind: Kind, in directory: TemporaryDirectory) async throws -> (snapshot: Data, journal: Data) {
        let url = directory.file("seed")
        let first = try GraphContainer(for: exampleModel, store: .file(url, format: kind.format, compression: kind.compression))
        let tags = Fixtures.tagNames.map { ExampleModel.Tag(name: $0) }
        for tag in tags { first.mainContext.insert(tag) }
        for number in 0..<12 {
            first.mainContext.insert(Note(text: "note \(number) é ✓ \"q\"", createdAt: Fixtures.epoch.addingTimeInterval(Double(number) * 0.25), tagIDs: [tags[number % tags.count].id]))
        }
        for post in Fixtures.posts(6, tags: tags.prefix(2).map(\.id)) { first.mainContext.insert(post) }
        try first.mainContext.save()
        try await first.close()
        let snapshot = try Data(contentsOf: url)
        // Later saves, in the journal only: copied before the container folds them at close.
        let second = try GraphContainer(
            for: exampleModel, store: .file(url, format: kind.format, compression: kind.compression, coalescingInterval: .seconds(3_600)))
        let notes = try second.mainContext.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.text)]))
        for (index, var note) in notes.prefix(4).enumerated() {
            note.text += " edited \(index)"
            second.mainContext.insert(note)
            try second.mainContext.save()
        }
        second.mainContext.delete(notes[5])
        second.mainContext.insert(Note(text: "new", createdAt: Fixtures.epoch, tagIDs: [tags[0].id]))
        try second.mainContext.save()
        let journal = try Data(contentsOf: URL(fileURLWithPath: url.path + ".journal"))
        try await second.close()
        return (snapshot, journal)
    }

    /// The bytes of a mutated file: the raw bytes, or (half the time, for gzip) the document
    /// inside, mutated and compressed again.
    static func mutatedFile(_ file: Data, using random: inout SplitMix64) throws -> Data {
        if Gzip.isGzip(file), Bool.random(using: &random) {
            let document = try Gzip.decompress(file, maxOutputBytes: 1 << 30)
            return try Gzip.compress(FileMutations.mutate(document, using: &random))
        }
        return FileMutations.mutate(file, using: &random)
    }

    /// Writes the files, opens them, and checks the outcome (see the suite's description);
    /// returns the notes' texts when the store opened.
    @discardableResult
    static func openOnce(snapshot: Data, journal: Data?, kind: Kind, label: String) async throws -> [String]? {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store")
        let journalURL = URL(fileURLWithPath: url.path + ".journal")
        try snapshot.write(to: url)
        if let journal { try journal.write(to: journalURL) }
        var files = [url: snapshot]
        if let journal { files[journalURL] = journal }
        return try await FileMutations.openOrRefused(label, files: files) {
            try GraphContainer(for: exampleModel, store: .file(url, format: kind.format, compression: kind.compression))
        }
    }

    @Test(arguments: Kind.allCases)
    func mutatedSnapshotsAndJournalsOpenOrAreRefused(kind: Kind) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (snapshot, journal) = try await Self.makeStore(kind, in: directory)
        // The unmutated pair opens, with the journal's saves.
        let texts = try #require(try await Self.openOnce(snapshot: snapshot, journal: journal, kind: kind, label: "\(kind) unmutated"))
        #expect(texts.count == 12 && texts.contains("new") && texts.filter { $0.contains("edited") }.count == 4)
        var random = SplitMix64(seed: Self.seed &+ UInt64(Kind.allCases.firstIndex(of: kind)!))
        for iteration in 0..<Self.iterations {
            let label = "\(kind) iteration \(iteration) (seed \(Self.seed))"
            switch iteration % 3 {
            case 0: try await Self.openOnce(snapshot: try Self.mutatedFile(snapshot, using: &random), journal: nil, kind: kind, label: label)
            case 1: try await Self.openOnce(snapshot: snapshot, journal: FileMutations.mutate(journal, using: &random), kind: kind, label: label)
            default:
                try await Self.openOnce(
                    snapshot: try Self.mutatedFile(snapshot, using: &random), journal: FileMutations.mutate(journal, using: &random), kind: kind, label: label)
            }
        }
    }
}
