import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// A journal continued at open holds records another run appended. That run may have been
/// killed before it fsynced them: they are in the page cache, and a power loss now would still
/// take them. So they count as durable only once this run has fsynced them, and `flush()` must
/// not return before that.
@Suite struct JournalContinuedDurabilityTests {
    @Test func recordsFoundAtOpenAreDurableOnlyAfterThisRunFsyncsThem() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("store.json.gz").path + ".journal"
        let lineage = UUID()
        // A run that appends three records and dies before any fsync (its interval never ends).
        do {
            let killed = try StoreJournal.start(
                path: path, durability: .journaled, interval: .seconds(3600), clock: ManualWriterClock(),
                lineage: lineage, openedAt: 0, existing: nil)
            for version in UInt64(1)...3 {
                let record = JournalFormatV1.frameRecord(version: version, document: [UInt8](repeating: 0x20, count: 32))
                _ = try record.withUnsafeBytes { try killed.append($0, version: version) }
            }
            #expect(killed.durableVersion == 0)
        }
        let existing = try #require(try JournalReplay.read(path))
        #expect(existing.scan.records.count == 3)

        let clock = ManualWriterClock()
        let continued = try StoreJournal.start(
            path: path, durability: .journaled, interval: .seconds(1), clock: clock,
            lineage: lineage, openedAt: 3, existing: existing)
        #expect(continued.durableVersion == 0, "records read back from the page cache were taken as fsynced")
        // The background fsync runs within the interval, without any new save.
        #expect(clock.pendingTimers == 1)
        clock.advance(by: .seconds(1))
        #expect(continued.durableVersion == 3)

        // And a flush fsyncs them itself, before the background fsync is due.
        let again = try #require(try JournalReplay.read(path))
        let reopened = try StoreJournal.start(
            path: path, durability: .journaled, interval: .seconds(3600), clock: ManualWriterClock(),
            lineage: lineage, openedAt: 3, existing: again)
        #expect(reopened.durableVersion == 0)
        try await reopened.flush()
        #expect(reopened.durableVersion == 3)
    }
}
