import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The append-only journal beside a store (`<store>.journal`): every committed change set is
/// appended before `save()` returns, so a save survives the process dying; the background
/// writer's snapshots (or SQLite transactions) make the records redundant, and they are
/// dropped once a durable copy covers them.
///
/// Appends happen under the core's commit lock, so records are in commit order. An fsync runs
/// in the background within the coalescing interval (``Durability/journaled``), before
/// `save()` returns (``Durability/synchronous``, one fsync shared by the saves waiting for it),
/// and in ``flush()``.
package final class StoreJournal: Sendable {
    /// The journal file.
    package let path: String
    package let durability: Durability
    /// Whether ``start(path:durability:interval:clock:lineage:openedAt:existing:refusal:beforeFirstRecord:)``
    /// opened nothing for writing (read-only media, a store opened without its lock): the file
    /// stays as it was and every append throws.
    package let isReadOnly: Bool
    private let interval: Duration
    private let clock: any WriterClock
    /// The seam of the fsync that makes records durable; tests inject failures here.
    private let fileSystem: any FileSystem
    /// Runs once before this run's first record (see ``start(path:durability:interval:clock:lineage:openedAt:existing:refusal:beforeFirstRecord:)``).
    private let beforeFirstRecord: (@Sendable () throws(GraphStoreError) -> Void)?
    private let state: Guarded<State>
    private let gate = SyncGate()
    private let logger = Logger(label: "GraphStore.StoreJournal")

    /// Where an append ended: the file (which a rotation replaces) and the byte.
    package struct Mark: Sendable {
        var generation: Int
        var end: Int
        var version: UInt64
    }

    private struct RecordMark: Sendable {
        var version: UInt64
        var start: Int
    }

    private struct State: Sendable {
        var file: JournalFile?
        var generation = 0
        var header: JournalFormatV1.Header
        var end: Int
        var records: [RecordMark]
        var lastVersion: UInt64
        /// Set when a failed append could not be cut off again: no more appends.
        var broken: String?
        /// Set by ``refuseAppends(_:)``: every later append throws it.
        var refusal: GraphStoreError?
        var backgroundSyncArmed = false
        /// A rotation renamed a new file into place; its directory entry is not fsynced yet.
        var needsDirectorySync = false
        /// No journal file exists yet: the first append creates it (see ``start(path:durability:interval:clock:lineage:openedAt:existing:refusal:beforeFirstRecord:)``).
        var createsOnFirstAppend = false
        /// `beforeFirstRecord` has not run (or not succeeded) yet.
        var awaitsFirstRecord = true
    }

    private init(
        path: String, durability: Durability, interval: Duration, clock: any WriterClock, fileSystem: any FileSystem,
        beforeFirstRecord: (@Sendable () throws(GraphStoreError) -> Void)?, file: JournalFile?,
        header: JournalFormatV1.Header, end: Int, records: [RecordMark], createsOnFirstAppend: Bool = false,
        synced: Bool = true, refusal: GraphStoreError? = nil
    ) {
        self.path = path
        self.durability = durability
        isReadOnly = refusal != nil
        self.interval = interval
        self.clock = clock
        self.fileSystem = fileSystem
        self.beforeFirstRecord = beforeFirstRecord
        state = Guarded(State(
            file: file, header: header, end: end, records: records, lastVersion: records.last?.version ?? header.baseVersion,
            refusal: refusal, createsOnFirstAppend: createsOnFirstAppend))
        if synced {
            gate.markSynced(generation: 0, end: end, version: records.last?.version ?? header.baseVersion)
        } else {
            // Records another run appended: only its header is known to be on the device.
            gate.markSynced(generation: 0, end: records.first?.start ?? end, version: header.baseVersion)
        }
    }

    /// Starts journaling at `path` for a store opened at `version` of `lineage`: continues the
    /// journal found there when it ends exactly at `version` (cutting a torn tail off), and
    /// otherwise replaces it with an empty one based on `version`. Where there is no journal
    /// file, none is created until the first append: opening a store (and closing one nothing was
    /// saved to) costs no file creation and no fsync, as SQLite creates its WAL file on the
    /// first write.
    ///
    /// A journal that cannot be opened for writing, cut or replaced because the place cannot be
    /// written (`EROFS`, `EACCES`: read-only media) is left byte for byte as it is: its records
    /// were replayed already, and the journal returned has no file and refuses every append with
    /// an error naming the journal, so every save throws and commits nothing. With `refusal`
    /// (a store opened without its lock), nothing is opened for writing at all, and every
    /// append throws `refusal`.
    ///
    /// `beforeFirstRecord` runs once, before the first record of this run is appended (and
    /// before the journal file is created for it), under the commit lock but outside the
    /// journal's own; when it throws, that append throws and the next one runs it again. A
    /// snapshot-file store with no snapshot yet writes one there, so that the records always
    /// continue a file that names the model version they are in.
    ///
    /// - Throws: ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` when the file
    ///   cannot be replaced or cut for another reason (a full disk, an I/O error).
    /// - Complexity: one file creation (two fsyncs) when a journal found there must be
    ///   replaced; otherwise no I/O beyond cutting a torn tail. Records found there count as
    ///   durable once fsynced again (in the background within `interval`, or by ``flush()``):
    ///   the run that appended them may have died before its fsync.
    package static func start(
        path: String, durability: Durability, interval: Duration, clock: any WriterClock,
        lineage: UUID, openedAt version: UInt64, existing: JournalContents?, refusal: GraphStoreError? = nil,
        fileSystem: any FileSystem = PosixFileSystem(),
        beforeFirstRecord: (@Sendable () throws(GraphStoreError) -> Void)? = nil
    ) throws(GraphStoreError) -> StoreJournal {
        do {
            if let existing, let header = existing.scan.header, header.lineage == lineage, existing.scan.lastVersion == version {
                let records = existing.scan.records.map { RecordMark(version: $0.version, start: $0.start) }
                if let refusal {
                    return readOnly(
                        at: path, durability: durability, interval: interval, clock: clock, header: header,
                        end: existing.scan.validEnd, records: records, refusal: refusal)
                }
                let opened = try openForAppending(path)
                guard case .opened(let file) = opened else {
                    // Read-only: the records were replayed, and stay as they are (a torn tail
                    // too: replay stops before it, as it did now).
                    return readOnly(
                        at: path, durability: durability, interval: interval, clock: clock, header: header,
                        end: existing.scan.validEnd, records: records, refusal: opened.refusal(path))
                }
                if existing.scan.hasTornTail {
                    try file.truncate(to: existing.scan.validEnd)
                    try file.sync()
                }
                // The run that appended these records may have been killed before it fsynced
                // them: they reached the page cache, not necessarily the device. They count as
                // durable once this run fsyncs them (in the background within the interval, or
                // in a flush), not merely because they were read back.
                let synced = records.isEmpty || existing.scan.hasTornTail
                let journal = StoreJournal(
                    path: path, durability: durability, interval: interval, clock: clock, fileSystem: fileSystem, beforeFirstRecord: beforeFirstRecord,
                    file: file, header: header, end: existing.scan.validEnd, records: records, synced: synced)
                if !synced { journal.armBackgroundSync() }
                return journal
            }
            let header = JournalFormatV1.Header(lineage: lineage, baseVersion: version)
            if let refusal {
                return readOnly(
                    at: path, durability: durability, interval: interval, clock: clock, header: header, end: 0,
                    records: [], refusal: refusal)
            }
            // Created by the first append. A store in a place that cannot be written (read-only
            // media, no space) opens and reads; every save throws the reason the journal cannot
            // be created until it can.
            func createdByFirstAppend() -> StoreJournal {
                StoreJournal(
                    path: path, durability: durability, interval: interval, clock: clock, fileSystem: fileSystem, beforeFirstRecord: beforeFirstRecord,
                    file: nil, header: header, end: 0, records: [], createsOnFirstAppend: true)
            }
            // A file there that is not continued (one a migration set aside, say) is replaced
            // now: it must not outlive this open.
            guard existing != nil || access(path, F_OK) == 0 else { return createdByFirstAppend() }
            let bytes = JournalFormatV1.encodeHeader(header)
            let created: Opening
            do {
                created = try create(at: path, contents: bytes)
            } catch let error as FileLayerError {
                guard case .io(_, _, let code, _) = error, code == ENOSPC || code == EDQUOT else { throw error }
                // No room for the new file (the store's own file is written by now: a replay or
                // a migration committed). The old one must still go, and removing it takes no
                // room; the first append creates the journal, and throws while there is none.
                guard unlink(path) == 0 || errno == ENOENT else { throw error }
                try JournalFile.syncDirectory(of: path)
                return createdByFirstAppend()
            }
            guard case .opened(let file) = created else {
                // Nothing of it is needed (the store's file holds every record it has, or it is
                // another store's), and nothing can replace it here.
                return readOnly(
                    at: path, durability: durability, interval: interval, clock: clock, header: header, end: 0,
                    records: [], refusal: created.refusal(path))
            }
            return StoreJournal(
                path: path, durability: durability, interval: interval, clock: clock, fileSystem: fileSystem, beforeFirstRecord: beforeFirstRecord,
                file: file, header: header, end: bytes.count, records: [])
        } catch let error as SystemCallError {
            throw failure(path, "open the journal", error)
        } catch let error as FileLayerError {
            throw GraphStoreError(error, path: path)
        } catch {
            throw .fileOperationFailed(path: path, operation: "open the journal", reason: "\(error)")
        }
    }

    /// A journal with no file that keeps what is on disk as it is and refuses every append.
    private static func readOnly(
        at path: String, durability: Durability, interval: Duration, clock: any WriterClock,
        header: JournalFormatV1.Header, end: Int, records: [RecordMark], refusal: GraphStoreError
    ) -> StoreJournal {
        StoreJournal(
            path: path, durability: durability, interval: interval, clock: clock, fileSystem: PosixFileSystem(), beforeFirstRecord: nil,
            file: nil, header: header, end: end, records: records, refusal: refusal)
    }

    /// A journal file opened for writing, or the `errno` that says its place cannot be written
    /// at all (read-only media, no permission), rather than that a write failed.
    private enum Opening {
        case opened(JournalFile)
        case unwritable(Int32)

        /// What every append to a journal that could not be opened for writing throws.
        func refusal(_ path: String) -> GraphStoreError {
            let code = if case .unwritable(let code) = self { code } else { EROFS }
            return .fileOperationFailed(
                path: path, operation: "append to the journal",
                reason: "\(systemErrorMessage(code)) (the store was opened read-only: its journal was replayed but cannot be written, so it takes no saves)")
        }

        static func isUnwritable(_ code: Int32) -> Bool {
            code == EROFS || code == EACCES || code == EPERM
        }
    }

    /// Opens the existing journal at `path` for appending.
    private static func openForAppending(_ path: String) throws(SystemCallError) -> Opening {
        do throws(SystemCallError) {
            return .opened(try JournalFile(appendingTo: path))
        } catch {
            guard Opening.isUnwritable(error.code) else { throw error }
            return .unwritable(error.code)
        }
    }

    /// Creates (or replaces) the journal at `path`, as ``JournalFile/create(at:contents:copying:)``.
    private static func create(at path: String, contents: [UInt8]) throws -> Opening {
        do {
            return .opened(try JournalFile.create(at: path, contents: contents))
        } catch let error as FileLayerError {
            guard case .io(_, _, let code, _) = error, Opening.isUnwritable(code) else { throw error }
            return .unwritable(code)
        }
    }

    /// The names of what a process killed while creating or rotating the journal at `path`
    /// leaves beside it: the `<journal>.rotating` staging file, and `<journal>.tmp-<pid>-<hex>`
    /// and `<journal>.rotating.tmp-<pid>-<hex>` temporaries (by their prefixes), for
    /// ``AtomicFile/removeLeftovers(in:named:temporaryPrefixes:)``.
    static func leftoverNames(beside path: String) -> (names: Set<String>, temporaryPrefixes: [String]) {
        let name = URL(fileURLWithPath: path).lastPathComponent
        return ([name + ".rotating"], [name + ".tmp-", name + ".rotating.tmp-"])
    }

    /// Removes what a process killed while creating or rotating the journal at `path` left
    /// beside it (see ``leftoverNames(beside:)``), and the files `alsoMatching` accepts, in one
    /// listing of the directory. Call it only while holding the store's lock,
    /// when no other process can be at work. Best effort; never touches another file.
    ///
    /// - Complexity: one listing of the directory.
    package static func removeLeftovers(beside path: String, alsoMatching: (String) -> Bool = { _ in false }) {
        let leftovers = leftoverNames(beside: path)
        AtomicFile.removeLeftovers(
            in: URL(fileURLWithPath: path).deletingLastPathComponent(), named: leftovers.names,
            temporaryPrefixes: leftovers.temporaryPrefixes, alsoMatching: alsoMatching)
    }

    // MARK: - Appending

    /// Appends a framed record of store version `version` with `write(2)`; call it under the
    /// commit lock, in commit order. When it throws, nothing of the record stays in the file.
    ///
    /// - Throws: ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` (`ENOSPC`,
    ///   `EROFS`, `EIO`, a closed journal).
    /// - Complexity: one system call for the record's bytes.
    package func append(_ record: UnsafeRawBufferPointer, version: UInt64) throws(GraphStoreError) -> Mark {
        try prepareFirstRecord()
        let appended = state.withLock { (state) -> Result<(Mark, Bool), GraphStoreError> in
            Result { () throws(GraphStoreError) -> (Mark, Bool) in try append(record, version: version, to: &state) }
        }
        let (mark, armSync) = try appended.get()
        if armSync {
            clock.schedule(at: clock.now + interval) { [weak self] in self?.backgroundSync() }
        }
        return mark
    }

    private func append(_ record: UnsafeRawBufferPointer, version: UInt64, to state: inout State) throws(GraphStoreError) -> (Mark, Bool) {
        if let broken = state.broken {
            throw .fileOperationFailed(path: path, operation: "append to the journal", reason: broken)
        }
        if let refusal = state.refusal { throw refusal }
        if state.file == nil, state.createsOnFirstAppend { try create(&state) }
        guard let file = state.file else {
            throw .fileOperationFailed(path: path, operation: "append to the journal", reason: "the journal is closed")
        }
        precondition(version == state.lastVersion + 1, "GraphStore: journal record \(version) after \(state.lastVersion)")
        do throws(SystemCallError) {
            try file.append(record)
        } catch {
            let reason = String(cString: strerror(error.code))
            // Cut off what the failed write left, so the next record follows an intact one.
            do throws(SystemCallError) {
                try file.truncate(to: state.end)
            } catch let cut {
                state.broken = "an earlier append failed (\(reason)) and its bytes could not be cut off (\(String(cString: strerror(cut.code))))"
            }
            throw .fileOperationFailed(path: path, operation: "append to the journal", reason: reason)
        }
        state.records.append(RecordMark(version: version, start: state.end))
        state.end += record.count
        state.lastVersion = version
        let arm = durability == .journaled && !state.backgroundSyncArmed
        if arm { state.backgroundSyncArmed = true }
        return (Mark(generation: state.generation, end: state.end, version: version), arm)
    }

    /// Runs `beforeFirstRecord` before the first record of this run, unless the append would
    /// fail anyway. Outside the journal's lock: the snapshot writer it may wait for drops
    /// records under that lock. Appends come one at a time (under the commit lock), so it runs
    /// once.
    private func prepareFirstRecord() throws(GraphStoreError) {
        guard let beforeFirstRecord else { return }
        let awaits = state.withLock { state in
            state.awaitsFirstRecord && state.broken == nil && state.refusal == nil && (state.file != nil || state.createsOnFirstAppend)
        }
        guard awaits else { return }
        try beforeFirstRecord()
        state.withLock { $0.awaitsFirstRecord = false }
    }

    /// Creates the journal file, based on the latest version, for the first append: the
    /// header is on the device (two fsyncs) before any record follows it. When it fails,
    /// nothing is left (a file renamed into place before a later step failed is removed: no
    /// file was there when the store opened, and the store's lock is held) and the next append
    /// tries again.
    private func create(_ state: inout State) throws(GraphStoreError) {
        state.header.baseVersion = state.lastVersion
        let bytes = JournalFormatV1.encodeHeader(state.header)
        do {
            state.file = try JournalFile.create(at: path, contents: bytes)
        } catch let error as FileLayerError {
            unlink(path)
            // As `start` reports a failed replacement: the step, the journal's path, strerror.
            throw GraphStoreError(error, path: path)
        } catch {
            unlink(path)
            throw .fileOperationFailed(path: path, operation: "create the journal", reason: "\(error)")
        }
        state.createsOnFirstAppend = false
        state.end = bytes.count
        gate.markSynced(generation: state.generation, end: state.end, version: state.lastVersion)
    }

    /// Returns once the record that ended at `mark` is on the device. Saves waiting at the
    /// same time share one fsync.
    ///
    /// - Throws: ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` when fsync fails.
    /// - Complexity: at most one fsync, or the wait for one already running.
    package func waitUntilDurable(_ mark: Mark) throws(GraphStoreError) {
        try gate.waitUntilSynced(mark) { () throws(GraphStoreError) -> Mark? in
            try self.syncNow()
        }
    }

    /// Where the records appended so far end.
    private var appendedMark: Mark {
        state.withLock { Mark(generation: $0.generation, end: $0.end, version: $0.lastVersion) }
    }

    /// Returns when every record appended before the call is on the device.
    ///
    /// - Throws: as ``waitUntilDurable(_:)``.
    package func flush() async throws {
        let mark = appendedMark
        guard !gate.isSynced(mark) else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try self.waitUntilDurable(mark) })
            }
        }
    }

    /// Returns when every record appended before the call is on the device: through the
    /// journal's fsync, or, after an fsync of the journal failed, through `writeStore`, which
    /// must return once the store's own file (a snapshot, a database transaction) durably holds
    /// every earlier commit. No later fsync proves those records are on the device: the kernel
    /// may have dropped the pages it could not write.
    ///
    /// - Throws: as ``flush()``, or what `writeStore` throws.
    package func flush(orWritingTheStore writeStore: () async throws -> Void) async throws {
        let mark = appendedMark
        do {
            try await flush()
        } catch {
            // A store write that holds the records (a coalesced snapshot retried in the
            // background) may have cleared the failure after the fsync reported it: the records
            // are durable, and the flush is done.
            if gate.isSynced(mark) { return }
            guard hasFailedSync else { throw error }
            try await writeStore()
        }
    }

    /// The newest store version whose record is on the device.
    package var durableVersion: UInt64 {
        gate.syncedVersion
    }

    /// The fsync itself: the current file up to its current end (and the directory entry of a
    /// file a rotation just renamed into place). Returns the mark it made durable.
    private func syncNow() throws(GraphStoreError) -> Mark? {
        let (file, mark, needsDirectory) = state.withLock { state in
            (state.file, Mark(generation: state.generation, end: state.end, version: state.lastVersion), state.needsDirectorySync)
        }
        guard let file else { return nil }
        do throws(SystemCallError) {
            if needsDirectory { try syncDirectory(generation: mark.generation) }
        } catch {
            throw Self.failure(path, "fsync the journal", error)
        }
        do throws(SystemCallError) {
            try file.sync(using: fileSystem)
        } catch {
            // The kernel reports a failed write-back once: the next fsync may succeed although
            // the pages it failed to write are lost. So no later fsync of this file counts for
            // the records appended so far; only a store file (or database transaction) that
            // holds them does.
            let reason = String(cString: strerror(error.code))
            gate.recordFailure(
                .fileOperationFailed(
                    path: path, operation: "fsync the journal",
                    reason: "an earlier fsync of the journal failed (\(reason)), so the saves since the last durable one are not known to be on the device; they are once a snapshot holds them (flush() writes one)"),
                through: state.withLock { $0.lastVersion })
            throw Self.failure(path, "fsync the journal", error)
        }
        return mark
    }

    /// Tells the journal that the store's own file (or database) durably holds every version up
    /// to `version`: flushes and synchronous saves up to it return, and a failed fsync of the
    /// journal stops counting once the store holds every record appended before it.
    ///
    /// - Complexity: O(1).
    package func storeIsDurable(through version: UInt64) {
        gate.storeIsDurable(through: version)
    }

    /// Whether a failed fsync keeps records of this journal from counting as durable until the
    /// store's own file holds them (see ``storeIsDurable(through:)``): a flush must then write
    /// the store instead.
    package var hasFailedSync: Bool {
        gate.hasFailure
    }

    /// Schedules a background fsync within the interval, unless one is armed already.
    private func armBackgroundSync() {
        let arm = state.withLock { state in
            defer { state.backgroundSyncArmed = true }
            return !state.backgroundSyncArmed
        }
        if arm {
            clock.schedule(at: clock.now + interval) { [weak self] in self?.backgroundSync() }
        }
    }

    private func backgroundSync() {
        let mark = state.withLock { state in
            state.backgroundSyncArmed = false
            return Mark(generation: state.generation, end: state.end, version: state.lastVersion)
        }
        do {
            try waitUntilDurable(mark)
        } catch {
            logger.error("Background fsync of the journal failed; flush() will report it", metadata: ["error": "\(error)"])
        }
    }

    /// Makes every later append throw `error`, so saves fail instead of piling up changes the
    /// store cannot write (a store whose writer met an error retrying cannot fix, such as a
    /// value that no longer fits its SQLite column). Appended records stay.
    package func refuseAppends(_ error: GraphStoreError) {
        state.withLock { if $0.refusal == nil { $0.refusal = error } }
    }

    // MARK: - Dropping covered records

    /// Drops the records of versions up to `version`, which a durable snapshot (or database
    /// transaction) now holds, by writing the newer records into a new journal that replaces
    /// this one. Saves keep appending meanwhile; they wait only while the few records they
    /// appended during the copy are moved over.
    ///
    /// - Throws: ``GraphStoreError/fileOperationFailed(path:operation:reason:)``; the journal is
    ///   then left as it was (still correct: replay skips covered records).
    /// - Complexity: O(bytes of the records kept), plus two or three fsyncs.
    package func dropRecords(through version: UInt64) throws(GraphStoreError) {
        gate.storeIsDurable(through: version)
        let plan = state.withLock { state -> (source: String, keep: Range<Int>, header: JournalFormatV1.Header, drop: Int)? in
            guard state.file != nil, state.broken == nil, version > state.header.baseVersion else { return nil }
            let drop = state.records.prefix { $0.version <= version }.count
            let keepStart = drop < state.records.count ? state.records[drop].start : state.end
            let base = drop > 0 ? state.records[drop - 1].version : state.header.baseVersion
            return (path, keepStart..<state.end, JournalFormatV1.Header(lineage: state.header.lineage, baseVersion: base), drop)
        }
        guard let plan, plan.drop > 0 else { return }
        let staging = path + ".rotating"
        let headerBytes = JournalFormatV1.encodeHeader(plan.header)
        let synced: Mark
        do {
            // The bulk is copied and fsynced without holding the journal's lock.
            let file = try JournalFile.create(at: staging, contents: headerBytes, copying: (plan.source, plan.keep))
            // With no fsync in flight: one of the old file finishing after the check below
            // would report records durable that the new file holds unsynced.
            synced = try gate.exclusively { try state.withLock { (state) throws -> Mark in
                // Records appended during the copy follow; then the new file takes the name.
                // A synchronous save among them was fsynced in the old file, and must be in the
                // new one before the old one goes; a journaled one waits for the next fsync.
                let tail = plan.keep.upperBound..<state.end
                // So must any of them a flush already made durable in the old file (it fsynced
                // while the bulk was copied): the old file, and that fsync, go with the rename.
                let syncsTail = !tail.isEmpty
                    && (durability == .synchronous || gate.hasSynced(generation: state.generation, beyond: tail.lowerBound))
                if !tail.isEmpty {
                    try file.copy(from: path, range: tail)
                    if syncsTail { try file.sync() }
                }
                guard rename(staging, path) == 0 else { throw SystemCallError(errno) }
                let shift = headerBytes.count - plan.keep.lowerBound
                state.records = state.records.dropFirst(plan.drop).map { RecordMark(version: $0.version, start: $0.start + shift) }
                state.end += shift
                state.header = plan.header
                state.file = file
                state.generation += 1
                state.needsDirectorySync = true
                let syncedEnd = syncsTail || tail.isEmpty ? state.end : headerBytes.count + plan.keep.count
                let syncedVersion = state.records.last { $0.start < syncedEnd }?.version ?? plan.header.baseVersion
                return Mark(generation: state.generation, end: syncedEnd, version: syncedVersion)
            } }
        } catch {
            unlink(staging)
            let reason = (error as? SystemCallError).map { String(cString: strerror($0.code)) } ?? "\(error)"
            throw .fileOperationFailed(path: path, operation: "drop the journal records a snapshot covers", reason: reason)
        }
        // The new file's records count as durable only once its name is: until the directory is
        // on the device, a power loss can bring back the old file, whose last appends may never
        // have been fsynced. Outside the lock, so that saves keep appending meanwhile; until it
        // is done, a waiting flush fsyncs the directory itself.
        do throws(SystemCallError) {
            try syncDirectory(generation: synced.generation)
        } catch {
            throw Self.failure(path, "fsync the directory of the rotated journal", error)
        }
        gate.markSynced(generation: synced.generation, end: synced.end, version: synced.version)
    }

    /// Fsyncs the journal's directory, so that the file a rotation renamed into place (of
    /// `generation`) keeps its name through a power loss.
    private func syncDirectory(generation: Int) throws(SystemCallError) {
        try JournalFile.syncDirectory(of: path)
        state.withLock { if $0.generation == generation { $0.needsDirectorySync = false } }
    }

    /// Removes the journal file: the store's own file now holds everything. No append works
    /// afterwards.
    ///
    /// - Throws: ``GraphStoreError/fileOperationFailed(path:operation:reason:)``.
    package func remove() throws(GraphStoreError) {
        guard releaseFile() != nil else { return }
        do throws(SystemCallError) {
            try JournalFile.remove(path)
        } catch {
            throw Self.failure(path, "remove the journal", error)
        }
    }

    /// Stops appending and releases the file, leaving it on disk (a close whose last write
    /// failed: the journal still holds what the store file lacks). It is fsynced first, so that
    /// what it holds survives a power loss too: after this no `flush()` can. So is its
    /// directory, when a rotation's fsync of it has not succeeded yet: until then a power loss
    /// can bring back the journal the rotation replaced, without the records appended since.
    ///
    /// The first fsync goes through the group commit, with the file still in place: a
    /// `.synchronous` save still waiting for its fsync takes that one's outcome, and one that
    /// failed throws to it. (A save that waited after the file was released would find no file
    /// to sync, which only a removed journal, one a durable store file covers, may mean.)
    ///
    /// - Throws: ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` when an fsync
    ///   fails; the file is released all the same.
    package func detach() throws(GraphStoreError) {
        let mark = appendedMark
        let groupSync = Result { () throws(GraphStoreError) in try waitUntilDurable(mark) }
        guard let released = releaseFile() else { return try groupSync.get() }
        // Both are tried: either one that succeeds keeps more of what the journal holds.
        let fileSync = Result { () throws(SystemCallError) in try released.file.sync(using: fileSystem) }
        // No test reaches a failure here: the journal's directory fsync is a direct system call
        // without a fault-injection seam, so no test can make a rotation's one fail and leave
        // `needsDirectorySync` set.
        let directorySync = released.needsDirectorySync
            ? Result { () throws(SystemCallError) in try JournalFile.syncDirectory(of: path) } : .success(())
        if case .failure(let error) = fileSync {
            throw Self.failure(path, "fsync the journal a failed close keeps", error)
        }
        if case .failure(let error) = directorySync {
            throw Self.failure(path, "fsync the directory of the journal a failed close keeps", error)
        }
        // The file's fsync succeeding now proves nothing of the records before a failed one.
        try groupSync.get()
    }

    /// Stops appending: takes the open file (if any) away from later appends, and returns it
    /// with whether its directory entry still needs an fsync (read together: a rotation changes
    /// both under the lock).
    private func releaseFile() -> (file: JournalFile, needsDirectorySync: Bool)? {
        state.withLock { state in
            defer {
                state.file = nil
                state.createsOnFirstAppend = false
            }
            return state.file.map { ($0, state.needsDirectorySync) }
        }
    }

    /// `operation` on the journal at `path` failed with `error`.
    private static func failure(_ path: String, _ operation: String, _ error: SystemCallError) -> GraphStoreError {
        .fileOperationFailed(path: path, operation: operation, reason: String(cString: strerror(error.code)))
    }
}

// MARK: - Group commit

/// Who has fsynced how far, and the saves waiting for it.
private final class SyncGate: @unchecked Sendable {
    // @unchecked Sendable: every stored property is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var syncedGeneration = 0
    private var syncedEnd = 0
    private var synced: UInt64 = 0
    private var isSyncing = false
    /// The newest version the store's own file (or database) holds durably.
    private var storeDurable: UInt64 = 0
    /// A failed fsync, unless the store has since held every record appended before it: what
    /// later waits throw, the last version appended when it failed, and the last version an
    /// earlier fsync had made durable (`synced` then).
    private var failure: (error: GraphStoreError, through: UInt64, trusted: UInt64)?

    var syncedVersion: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return max(failure?.trusted ?? synced, storeDurable)
    }

    var hasFailure: Bool {
        condition.lock()
        defer { condition.unlock() }
        return failure != nil
    }

    /// Records that an fsync failed while versions up to `version` were appended: until the
    /// store holds them, no later fsync counts for any record after the last durable one, and
    /// a wait for one throws `error`.
    func recordFailure(_ error: GraphStoreError, through version: UInt64) {
        condition.lock()
        if let current = failure {
            failure = (current.error, max(current.through, version), current.trusted)
        } else if version > storeDurable {
            failure = (error, version, synced)
        }
        condition.broadcast()
        condition.unlock()
    }

    /// The store's own file (or database) durably holds every version up to `version`.
    func storeIsDurable(through version: UInt64) {
        condition.lock()
        storeDurable = max(storeDurable, version)
        if let failure, storeDurable >= failure.through { self.failure = nil }
        condition.broadcast()
        condition.unlock()
    }

    /// Runs `body` while no fsync runs: it waits for one in flight, and holds off the next.
    func exclusively<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        while isSyncing { condition.wait() }
        isSyncing = true
        condition.unlock()
        defer {
            condition.lock()
            isSyncing = false
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }

    /// Whether an fsync reported durable bytes of file `generation` past `offset`.
    func hasSynced(generation: Int, beyond offset: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return syncedGeneration > generation || (syncedGeneration == generation && syncedEnd > offset)
    }

    func isSynced(_ mark: StoreJournal.Mark) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return covers(mark)
    }

    private func covers(_ mark: StoreJournal.Mark) -> Bool {
        if mark.version <= storeDurable { return true }
        // After a failed fsync, only the store can make the records after the last durable
        // one durable: replay needs every record before them too.
        if let failure, mark.version > failure.trusted { return false }
        if mark.generation == syncedGeneration { return mark.end <= syncedEnd }
        // A rotation moves an older file's records into the new one, but fsyncs those appended
        // while it copied only when a save already waits for them: a mark of an older file is
        // judged by its store version, which goes on rising across files.
        return mark.generation < syncedGeneration && mark.version <= synced
    }

    func markSynced(generation: Int, end: Int, version: UInt64) {
        condition.lock()
        if generation > syncedGeneration || (generation == syncedGeneration && end > syncedEnd) {
            syncedGeneration = generation
            syncedEnd = end
        }
        synced = max(synced, version)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `mark` is synced, running `sync` itself when no other thread is.
    func waitUntilSynced(_ mark: StoreJournal.Mark, sync: () throws(GraphStoreError) -> StoreJournal.Mark?) throws(GraphStoreError) {
        condition.lock()
        while !covers(mark) {
            if let failure {
                condition.unlock()
                throw failure.error
            }
            if isSyncing {
                condition.wait()
                continue
            }
            isSyncing = true
            condition.unlock()
            let result = Result { () throws(GraphStoreError) -> StoreJournal.Mark? in try sync() }
            condition.lock()
            isSyncing = false
            condition.broadcast()
            switch result {
            case .success(let done?):
                if done.generation > syncedGeneration || (done.generation == syncedGeneration && done.end > syncedEnd) {
                    syncedGeneration = done.generation
                    syncedEnd = done.end
                }
                synced = max(synced, done.version)
            case .success(nil):
                // The journal was removed: the store's own file holds everything.
                condition.unlock()
                return
            case .failure(let error):
                // The store's own file may have come to hold the mark's records while the
                // fsync ran (a snapshot written meanwhile): then they are durable all the same.
                let isCovered = covers(mark)
                condition.unlock()
                if isCovered { return }
                throw error
            }
        }
        condition.unlock()
    }
}
