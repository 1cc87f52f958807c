import ExampleModel
import GraphStoreSQLite
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// A process saving one note at a time and reporting each `save()` that returned, killed with
/// SIGKILL at a random moment (mid-append and mid-snapshot-write included): the store always
/// opens, and holds every reported save, with no gap.
///
/// `swift test` runs a few trials per store kind, one kind at a time (each trial keeps a child
/// process busy); `scripts/kill-trials.sh N` runs N per kind.
@Suite(.serialized) struct JournalKillTrialsTests {
    /// Trials per store kind: `GRAPHSTORE_KILL_TRIALS`, or a few for `swift test`.
    static let trials = ProcessInfo.processInfo.environment["GRAPHSTORE_KILL_TRIALS"].flatMap(Int.init) ?? 10

    static let kinds = ["json", "plist", "sqlite"]

    @Test(arguments: kinds)
    func everyReturnedSaveSurvivesSIGKILL(kind: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file(kind == "sqlite" ? "store.sqlite" : "store.\(kind)")
        var highest = 0
        var reported = 0
        var killedDuringWrite = 0
        for trial in 0..<Self.trials {
            let compression = Bool.random() ? "gzip" : "none"
            let helper = try CrashHelperProcess(store: url, format: kind, compression: compression, start: nil, reportsEverySave: true)
            switch trial % 4 {
            case 0:
                // Right after launch: while it opens the store and replays the journal.
                _ = try await helper.lastSaveReported(within: .milliseconds(Int.random(in: 0...40)))
                try await helper.kill()
            case 1 where kind != "sqlite":
                // In the middle of a snapshot write.
                #expect(try await helper.waitForFirstSave(), "trial \(trial): the helper did not save: \(helper.standardError())")
                _ = try await helper.lastSaveReported(within: .milliseconds(Int.random(in: 20...200)))
                if try await helper.killDuringWrite(of: url) { killedDuringWrite += 1 }
            default:
                // Once the store is open and saving (a loaded machine may take a while), at a
                // random moment.
                #expect(try await helper.waitForFirstSave(), "trial \(trial): the helper did not save: \(helper.standardError())")
                _ = try await helper.lastSaveReported(within: .milliseconds(Int.random(in: 20...400)))
                try await helper.kill()
            }
            #expect(helper.diedOfSIGKILL, "trial \(trial): the helper exited by itself: \(helper.standardError())")
            let last = try await helper.lastSaveReportedBeforeDeath() ?? highest
            if last > highest { reported += last - highest }

            if trial % 3 == 2 && trial + 1 < Self.trials {
                // The next helper opens what this one left, journal and all, and goes on.
                highest = max(highest, last)
                continue
            }
            let container = try GraphContainer(for: exampleModel, store: kind == "sqlite" ? .sqlite(url) : .file(url))
            let notes = try SnapshotTestKit.fetchAll(Note.self, from: container)
            let numbers = notes.compactMap { $0.text.split(separator: " ").dropFirst().first.flatMap { Int($0) } }.sorted()
            let top = numbers.last ?? 0
            #expect(top >= max(last, highest), "trial \(trial): save \(max(last, highest)) returned, the store holds up to \(top)")
            #expect(numbers == Array(0..<top).map { $0 + 1 }, "trial \(trial): the saves in the store are 1...\(top) without gaps or duplicates")
            #expect(try container.mainContext.fetchCount(FetchDescriptor<ExampleModel.Tag>()) == top, "trial \(trial)")
            try container.checkInvariants()
            highest = top
            try await container.close()
            #expect(!FileManager.default.fileExists(atPath: url.path + ".journal"), "trial \(trial): close leaves no journal")
        }
        #expect(reported > 0, "the helper reported saves")
        print("kill trials (\(kind)): \(Self.trials) trials, \(reported) saves reported, \(killedDuringWrite) kills during a snapshot write, none lost")
    }
}
