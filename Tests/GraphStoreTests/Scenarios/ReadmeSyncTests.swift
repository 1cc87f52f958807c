import Foundation
import Testing

/// Keeps the README's example and the example the tests run (ReadmeExampleTests.swift) the same
/// code: both are read as text and compared line by line.
@Suite struct ReadmeSyncTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func lines(in text: String, between begin: String, and end: String) throws -> [String] {
        let all = text.components(separatedBy: "\n")
        let start = try #require(all.firstIndex { $0.contains(begin) }, "marker \(begin) missing")
        let stop = try #require(all[(start + 1)...].firstIndex { $0.contains(end) }, "marker \(end) missing")
        return all[(start + 1)..<stop]
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("```") }
    }

    @Test func readmeExampleIsTheTestedExample() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let test = try String(
            contentsOf: Self.root.appendingPathComponent("Tests/GraphStoreTests/Scenarios/ReadmeExampleTests.swift"), encoding: .utf8)
        let shown = try Self.lines(in: readme, between: "<!-- example:begin -->", and: "<!-- example:end -->")
        let tested = try Self.lines(in: test, between: "// README-EXAMPLE-BEGIN", and: "// README-EXAMPLE-END")
        #expect(shown == tested)
        #expect(shown.count <= 15, "the README promises a 15-line example")
    }
}
