import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// A process killed at any moment (SIGKILL: no cleanup, no flush) leaves a snapshot that opens
/// and holds every save it acknowledged as durable.
@Suite struct SnapshotCrashSafetyTests {
    /// The layouts the helper writes, varied from run to run.
    private static let layouts = [("json", "gzip"), ("plist", "gzip"), ("json", "none"), ("plist", "none")]

    @Test func killedWriterKeepsEveryAcknowledgedSave() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.snapshot")
        var lastAcked = 0  // Every number up to this one was acknowledged as durable.
        // The highest number on disk: the next run continues after it. Not the last
        // acknowledged number: saves after the last "acked" line are often on disk too, and
        // starting below them would make the helper insert "tagN" again, which its unique
        // constraint refuses (the helper would exit with uniqueConstraintViolation).
        var highest = 0
        var immediateKills = 0
        var acknowledgements = 0
        var midWriteKills = 0

        for run in 0..<50 {
            let (format, compression) = Self.layouts.randomElement()!
            let helper = try CrashHelperProcess(store: url, format: format, compression: compression, start: highest)
            if run % 6 == 0 {
                // Right after launch: maybe while it opens the store, maybe mid-write.
                try await helper.kill()
                immediateKills += 1
            } else {
                let wanted = Int.random(in: 1...6)
                guard let acked = try await helper.waitForAcks(wanted) else {
                    Issue.record("run \(run): the helper stopped acknowledging: \(helper.standardError())")
                    try await helper.kill()
                    break
                }
                if run % 3 == 0 {
                    // In the middle of a write: as soon as its temporary file exists.
                    if try await helper.killDuringWrite(of: url) { midWriteKills += 1 }
                } else {
                    try await helper.kill()
                }
                #expect(acked >= lastAcked + 5 * wanted, "run \(run): acks go up by five saves")
                lastAcked = acked
                acknowledgements += wanted
            }
            #expect(helper.diedOfSIGKILL, "run \(run): the helper exited by itself: \(helper.standardError())")

            // The file opens without error (and without recovery) and holds every acknowledged
            // save: notes and tags 1...N with N at least the last acknowledged number.
            let container = try GraphContainer(for: exampleModel, store: .file(url))
            let notes = try SnapshotTestKit.fetchAll(Note.self, from: container)
            let tags = try SnapshotTestKit.fetchAll(ExampleModel.Tag.self, from: container)
            let numbers = notes.compactMap { note in
                note.text.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            }
            #expect(numbers.count == notes.count, "run \(run): every note is \"note N …\"")
            highest = numbers.max() ?? 0
            #expect(highest >= lastAcked, "run \(run): acknowledged up to \(lastAcked), the file holds up to \(highest)")
            #expect(numbers.count == highest && Set(numbers) == Set((0..<highest).map { $0 + 1 }),
                    "run \(run): the saves on disk are 1...\(highest) without gaps or duplicates")
            #expect(tags.count == notes.count, "run \(run)")
            let tagIDs = Dictionary(tags.map { ($0.name, $0.id) }, uniquingKeysWith: { first, _ in first })
            for (note, number) in zip(notes, numbers) {
                #expect(note.text.hasPrefix("note \(number) ") && note.text.count == "note \(number) ".count + number % 200)
                #expect(note.tagIDs == [tagIDs["tag\(number)"]].compactMap { $0 }, "run \(run): note \(number)'s tag")
            }
            try container.checkInvariants()
            try await container.close()
            // A killed write leaves its temporary file; opening the store removes it.
            #expect(SnapshotTestKit.temporaryFiles(for: url).isEmpty, "run \(run): \(SnapshotTestKit.temporaryFiles(for: url))")
        }
        #expect(lastAcked > 0)
        #expect(acknowledgements >= 40, "most runs were killed after acknowledgements")
        #expect(immediateKills >= 5)
        #expect(midWriteKills >= 5, "kills that caught a write in progress")
    }

    /// What a killed write leaves (its temporary file, the staging link of the previous copy,
    /// a journal being created or rotated, a copy of the store being kept by an open that
    /// migrated it) is removed when the store opens, and nothing else is.
    @Test func openingRemovesOnlyLeftoversOfKilledWrites() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let stale = [
            ".store.json.gz.tmp-4242-deadbeef00c0ffee", "store.json.gz.previous-staging",
            "store.json.gz.journal.tmp-4242-5eed", "store.json.gz.journal.rotating", "store.json.gz.journal.rotating.tmp-17-ab",
            // Copies of the store, and its previous snapshot, an open that migrated it was
            // writing (by processes that no longer run: no process has so large an id).
            ".store.json.gz.v1.tmp-999999999-deadbeef", ".store.json.gz.v2-3.tmp-999999998-c0ffee",
            ".store.json.gz.v1.journal.tmp-999999999-ab", ".store.json.gz.v12-2.journal.tmp-999999997-0",
            ".store.json.gz.previous.tmp-4242-5eed",
        ]
        let unrelated = [
            // The kept copies themselves, and names that only look like their temporaries.
            "store.json.gz.v1", "store.json.gz.v1.journal", "store.json.gz.v2-3", ".store.json.gz.v1.tmp-notes",
            ".store.json.gz.vx.tmp-1-ab", ".store.json.gz.v1-2-3.tmp-1-ab", ".store.json.gz.v.tmp-1-ab", ".other.json.gz.v1.tmp-1-ab",
            ".store.json.gz.v1.backup.tmp-1-ab",
            // Could be the write of a live process: a store named `store.json.gz.v2` beside this one.
            ".store.json.gz.v2.tmp-\(getpid())-ab",
            ".store.json.gz.tmp-notes.txt", ".store.json.gz.tmp-1-2-3", "other.json.gz", ".other.json.gz.tmp-1-ab",
            "store.json.gz.journal.tmp-notes", "store.json.gz.journal.rotating-old", "other.json.gz.journal.tmp-1-ab",
        ]
        for name in stale + unrelated { try Data("x".utf8).write(to: directory.file(name)) }

        let container = try GraphContainer(for: exampleModel, store: .file(url))
        let names = SnapshotTestKit.entries(of: directory.url)
        #expect(names.isDisjoint(with: stale))
        #expect(names.isSuperset(of: unrelated))
        try await container.close()
    }
}
