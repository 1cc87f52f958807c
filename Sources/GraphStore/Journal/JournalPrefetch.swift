import Foundation

/// A journal read and decoded on another thread while the store's own file is read and
/// decompressed, so that opening a store with pending records mostly costs applying them.
///
/// It only ever saves work: when reading or decoding fails here, ``JournalReplay`` reads the
/// journal again itself, and reports what it finds (damage, an object that does not decode)
/// exactly as without a prefetch. Records the store's file turns out to cover are decoded in
/// vain, on the other thread.
package final class JournalPrefetch: Sendable {
    /// What was read: the contents and every record, decoded, in order, with the survey of
    /// their stored field names.
    struct Prefetched: Sendable {
        var contents: JournalContents
        var records: [JournalRecord]
        var survey: JournalSurvey
    }

    private let finished = DispatchSemaphore(value: 0)
    private let outcome = Guarded<Prefetched?>(nil)

    /// Starts reading the journal at `path`, or returns `nil` when there is no file there.
    ///
    /// - Complexity: O(1) here (a thread is started); O(journal size) on that thread.
    static func start(path: String, schema: Schema) -> JournalPrefetch? {
        guard access(path, F_OK) == 0 else { return nil }
        return JournalPrefetch(path: path, schema: schema)
    }

    private init(path: String, schema: Schema) {
        // A thread of its own, not a dispatch queue's: the opening thread waits for it, and a
        // pool whose workers all wait so could never run it.
        let thread = Thread { [self] in
            defer { finished.signal() }
            guard let contents = try? JournalReplay.read(path), contents.scan.header != nil,
                  let records = try? JournalRecord.decode(contents.scan.records, in: contents.data, schema: schema, path: path),
                  records.count == contents.scan.records.count
            else { return }
            let survey = JournalSurvey(records)
            outcome.withLock { $0 = Prefetched(contents: contents, records: records, survey: survey) }
        }
        thread.name = "GraphStore.JournalPrefetch"
        thread.qualityOfService = .userInitiated
        thread.start()
    }

    /// Waits for the read to end; `nil` when it failed (the caller reads the journal itself).
    ///
    /// - Complexity: waits for the other thread at most once.
    func wait() -> Prefetched? {
        finished.wait()
        finished.signal()
        return outcome.withLock { $0 }
    }
}
