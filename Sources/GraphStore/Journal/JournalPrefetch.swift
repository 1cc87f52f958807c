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
    /// their stored field names and their fold (what opening applies when the store's file
    /// holds none of them, as after a crash).
    struct Prefetched: Sendable {
        var contents: JournalContents
        var records: [JournalRecord]
        var survey: JournalSurvey
        var fold: JournalFold
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
            // One thread only: the store's file is decoded on every processor meanwhile, and
            // a helper thread here would take more of their time than it saves.
            guard let contents = try? JournalReplay.read(path), contents.scan.header != nil,
                  let records = try? JournalRecord.decode(
                      contents.scan.records, in: contents.data, schema: schema, path: path, parallel: false),
                  records.count == contents.scan.records.count
            else { return }
            let survey = JournalSurvey(records)
            let fold = JournalFold(records, schema: schema)
            outcome.withLock { $0 = Prefetched(contents: contents, records: records, survey: survey, fold: fold) }
        }
        thread.name = "GraphStore.JournalPrefetch"
        thread.qualityOfService = .userInitiated
        thread.start()
    }

    /// Waits for the read to end and hands over what it read, so that the caller holds the
    /// only reference; `nil` when it failed or was taken already (the caller reads the journal
    /// itself).
    ///
    /// - Complexity: waits for the other thread at most once.
    func take() -> Prefetched? {
        finished.wait()
        finished.signal()
        return outcome.withLock { $0.take() }
    }
}
