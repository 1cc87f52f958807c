import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Dropping the records a snapshot covers copies the kept ones into a new file without holding
/// the journal's lock, then moves over, under it, the records appended meanwhile. Those are not
/// fsynced unless a save already waits for them, so a wait for one of them (a `flush()` that
/// took its mark in the old file) must still fsync: it is judged by version, not by file.
@Suite struct JournalRotationFlushTests {
    @Test func aRecordAppendedDuringARotationIsDurableAfterItsWait() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("store.json.gz").path + ".journal"
        let journal = try StoreJournal.start(
            path: path, durability: .journaled, interval: .seconds(3600), clock: ManualWriterClock(),
            lineage: UUID(), openedAt: 0, existing: nil)
        func append(_ version: UInt64, bytes: Int) throws -> StoreJournal.Mark {
            let record = JournalFormatV1.frameRecord(version: version, document: [UInt8](repeating: 0x20, count: bytes))
            return try record.withUnsafeBytes { try journal.append($0, version: version) }
        }
        // Enough kept bytes that the copy outside the lock takes a while.
        var version: UInt64 = 0
        for _ in 0..<48 {
            version += 1
            _ = try append(version, bytes: 1 << 20)
        }
        let rotated = DispatchSemaphore(value: 0)
        let rotationError = Guarded<String?>(nil)
        DispatchQueue.global().async {
            do { try journal.dropRecords(through: 1) } catch { rotationError.withLock { $0 = "\(error)" } }
            rotated.signal()
        }
        // Saves go on appending while the rotation copies; each keeps its mark, as flush() does.
        var marks: [StoreJournal.Mark] = []
        while rotated.wait(timeout: .now()) == .timedOut {
            version += 1
            marks.append(try append(version, bytes: 64))
        }
        #expect(rotationError.withLock { $0 } == nil)
        // The marks of the old file, whose records the rotation moved over after its copy.
        let movedOver = marks.filter { $0.generation == 0 }
        let last = try #require(movedOver.last, "no save landed while the rotation copied")
        try journal.waitUntilDurable(last)
        #expect(journal.durableVersion >= last.version, "the wait for version \(last.version) returned with only \(journal.durableVersion) durable")
    }
}
