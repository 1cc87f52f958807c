import ExampleModel
import Foundation
import GraphStore
import Testing

/// Random damage to a file's bytes, for the fuzz tests of opening: replayable from the
/// generator's seed.
public enum FileMutations {
    /// One to six random edits of `bytes`: bit flips, byte sets, truncation, a range deleted,
    /// duplicated elsewhere, or random bytes inserted.
    public static func mutate(_ bytes: Data, using random: inout SplitMix64) -> Data {
        var data = [UInt8](bytes)
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            guard !data.isEmpty else { break }
            let at = Int.random(in: 0..<data.count, using: &random)
            switch Int.random(in: 0..<7, using: &random) {
            case 0, 1: data[at] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            case 2: data[at] = UInt8.random(in: 0...255, using: &random)
            case 3: data.removeSubrange(at...)
            case 4: data.removeSubrange(at..<min(data.count, at + Int.random(in: 1...64, using: &random)))
            case 5:
                let range = at..<min(data.count, at + Int.random(in: 1...64, using: &random))
                data.insert(contentsOf: Array(data[range]), at: Int.random(in: 0...data.count, using: &random))
            default:
                let length = Int.random(in: 1...16, using: &random)
                data.insert(contentsOf: (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }, at: at)
            }
        }
        return Data(data)
    }
}

extension FileMutations {
    /// Opens a store with `open` and checks the outcome of a fuzz iteration: it opens to a
    /// consistent graph, or it is refused with a ``GraphStoreError`` that leaves each of
    /// `files` (as written before the open) byte for byte. Any other error is an issue.
    ///
    /// - Returns: the texts of the notes, when the store opened.
    public static func openOrRefused(
        _ label: String, files: [URL: Data], open: () throws -> GraphContainer, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String]? {
        let container: GraphContainer
        do {
            container = try open()
        } catch is GraphStoreError {
            for (url, bytes) in files {
                #expect(try Data(contentsOf: url) == bytes, "\(label): a refused open changed \(url.lastPathComponent)", sourceLocation: sourceLocation)
            }
            return nil
        } catch {
            Issue.record("\(label): not a GraphStoreError: \(error)", sourceLocation: sourceLocation)
            return nil
        }
        try container.checkInvariants()
        let texts = try container.mainContext.fetch(FetchDescriptor<Note>()).map(\.text)
        try await container.close()
        return texts
    }
}
