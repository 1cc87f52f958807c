import Foundation
import Logging

/// A journal file as read when a store opens.
package struct JournalContents: Sendable {
    let data: Data
    let scan: JournalFormatV1.Scan

    /// The lineage in the journal's header (`nil` for an empty file).
    package var lineage: UUID? { scan.header?.lineage }
}

/// Opening a store: the journal's records newer than the store's file are replayed onto it.
package enum JournalReplay {
    /// The journal beside the store file at `storePath`.
    package static func path(forStoreAt storePath: String) -> String {
        storePath + ".journal"
    }

    /// The store file a journal file belongs to: the inverse of ``path(forStoreAt:)``, also for
    /// a file staged to replace the journal (`<store>.journal.rotating`). The path up to its last
    /// `.journal`; `nil` when it has none.
    ///
    /// ```swift
    /// JournalReplay.storePath(forJournalFileAt: "/s/notes.json.gz.journal.rotating")  // "/s/notes.json.gz"
    /// ```
    ///
    /// - Complexity: O(length of the path).
    static func storePath(forJournalFileAt path: String) -> String? {
        guard let suffix = path.range(of: ".journal", options: .backwards) else { return nil }
        return String(path[..<suffix.lowerBound])
    }

    /// What the journal at `path` holds, or `nil` when there is no file.
    ///
    /// - Throws: ``JournalFormatV1/Damage`` for a damaged journal,
    ///   ``GraphStoreError/unsupportedFormatVersion(path:found:supported:)``,
    ///   ``GraphStoreError/fileOperationFailed(path:operation:reason:)``.
    /// - Complexity: O(file size).
    static func read(_ path: String) throws -> JournalContents? {
        let data: Data?
        do {
            data = try FileReader.readFile(at: URL(fileURLWithPath: path))
        } catch {
            throw GraphStoreError(error, path: path)
        }
        guard let data else { return nil }
        let scan = try data.withUnsafeBytes { try JournalFormatV1.scan($0, path: path) }
        return JournalContents(data: data, scan: scan)
    }

    /// The result of opening: the graph with the journal replayed, the store's lineage, and
    /// the journal as read (`nil` when there was none, or it was set aside).
    package struct Opened: Sendable {
        package var version: GraphVersion?
        package var lineage: UUID
        package var journal: JournalContents?
        /// What each replayed record changed, in order: a store that writes changed rows (SQLite)
        /// writes these before the journal's records can be dropped.
        package var replayed: [GraphChange] = []
    }

    /// Replays the journal beside a store onto what the store's own file held, record by
    /// record (what each record changed can be reported). A store that builds its graph once
    /// from objects folds the records into them instead: see ``pending(journalAt:storedNumber:storedLineage:storePath:schema:recover:prefetched:)``
    /// and ``JournalFold``.
    ///
    /// - Parameters:
    ///   - stored: The graph in the store's file (`nil`: no file), with its store version.
    ///   - storedLineage: The lineage the store's file names (`nil`: a file written before
    ///     journals existed, or no file).
    ///   - recover: Whether a damaged journal is set aside (copied to
    ///     `<journal>.damaged-<unix time>`) and only its intact records are replayed, instead of
    ///     refusing to open.
    ///   - reportingChanges: Whether ``Opened/replayed`` lists what each record changed.
    ///   - prefetch: The journal as read and decoded while the store's file was read, if it
    ///     was; when its read failed, the journal is read here.
    /// - Throws: as ``pending(journalAt:storedNumber:storedLineage:storePath:schema:recover:prefetched:)``;
    ///   ``GraphStoreError/damagedFile(path:offset:reason:)`` naming the journal, the record's
    ///   store version, the entity and the id for a record that leaves a reference to a missing
    ///   object, a reference into what it deleted, or a unique value held twice (see
    ///   ``JournalRecord/checkGraph(_:taken:schema:)``).
    /// - Complexity: O(journal size + changed objects × log n).
    package static func open(
        journalAt path: String, stored: GraphVersion?, storedLineage: UUID?, storePath: String, schema: Schema, recover: Bool,
        reportingChanges: Bool = true, prefetched prefetch: JournalPrefetch? = nil
    ) throws -> Opened {
        let pending = try pending(
            journalAt: path, storedNumber: stored?.number, storedLineage: storedLineage, storePath: storePath, schema: schema,
            recover: recover, prefetched: prefetch)
        var version = stored ?? GraphVersion(schema: schema)
        var changes: [GraphChange] = []
        for decoded in pending.records {
            if reportingChanges { changes.append(decoded.change(replayedOnto: version, schema: schema)) }
            let taken = decoded.takenUniqueValues(in: version, schema: schema)
            decoded.apply(to: &version, schema: schema)
            // As a folded journal's objects are checked when the graph is built from them.
            do {
                try decoded.checkGraph(version, taken: taken, schema: schema)
            } catch {
                throw GraphStoreError.damagedFile(
                    path: path, offset: nil,
                    reason: "its record of store version \(decoded.version), replayed onto \(storePath), leaves objects that do not form a graph: \(error.description)")
            }
        }
        let replayed = stored == nil && !pending.holdsRecords ? nil : version
        return Opened(version: replayed, lineage: pending.lineage, journal: pending.journal, replayed: changes)
    }

    /// The journal beside a store, checked against the store's file, with its records newer
    /// than that file decoded and not yet applied.
    package struct Pending: Sendable {
        /// The store's lineage: the journal's, or the file's (a new one when neither names one).
        var lineage: UUID
        /// The journal as read (`nil` when there was none).
        var journal: JournalContents?
        /// The records newer than the store's file, in order.
        var records: [JournalRecord]
        /// Whether the journal holds any record at all, newer or not: then the store exists even
        /// without its file.
        var holdsRecords: Bool
        /// The fold of `records`, when it was made while the store's file was read (`nil`:
        /// fold them when needed).
        var fold: JournalFold? = nil
    }

    /// Reads the journal beside a store (or takes it as prefetched), checks that it continues
    /// the store's file, and decodes its records newer than that file.
    ///
    /// - Parameters:
    ///   - storedNumber: The store version of the store's file (`nil`: no file).
    ///   - storedLineage: The lineage the store's file names (`nil`: a file written before
    ///     journals existed, or no file).
    ///   - recover: Whether a damaged journal is set aside (copied to
    ///     `<journal>.damaged-<unix time>`) and only its intact records are returned, instead of
    ///     refusing to open.
    ///   - prefetch: The journal as read and decoded while the store's file was read, if it
    ///     was; when its read failed, the journal is read here.
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` naming the journal and the
    ///   byte for a damaged record, a journal of another store (its lineage differs), a journal
    ///   that does not continue the store's file (records missing between them), or a journal
    ///   without its store file; ``GraphStoreError/codingFailed(path:entity:id:reason:)`` for a
    ///   record that does not decode with the app's types, or one holding a field whose values
    ///   the app's types would lose (see ``UnkeptFields``);
    ///   ``GraphStoreError/unsupportedFormatVersion(path:found:supported:)``.
    /// - Complexity: O(journal size), less what the prefetch did.
    static func pending(
        journalAt path: String, storedNumber: UInt64?, storedLineage: UUID?, storePath: String, schema: Schema, recover: Bool,
        prefetched prefetch: JournalPrefetch? = nil
    ) throws -> Pending {
        var contents: JournalContents?
        let prefetched = prefetch?.take()
        // The damage of a journal recovered from: it is copied aside only once its intact
        // records are known to continue the store's file, so that a refused open adds nothing.
        var recovered: GraphStoreError?
        do {
            contents = try prefetched?.contents ?? read(path)
        } catch let damage as JournalFormatV1.Damage {
            let error = GraphStoreError.damagedFile(path: path, offset: damage.offset, reason: damage.reason)
            guard recover, let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else { throw error }
            recovered = error
            var intact = damage.intact
            intact.fileSize = data.count
            contents = JournalContents(data: data, scan: intact)
        }
        guard let contents, let header = contents.scan.header else {
            if let recovered { try keepDamaged(path, damage: recovered) }
            return Pending(lineage: storedLineage ?? UUID(), journal: contents, records: [], holdsRecords: false)
        }
        try checkContinuity(
            of: contents, header: header, storedNumber: storedNumber, storedLineage: storedLineage, path: path, storePath: storePath)
        let newer = storedNumber ?? 0
        let records: [JournalRecord]
        let survey: JournalSurvey
        var fold: JournalFold?
        if let prefetched {
            // The common case (a crash): the store's file holds none of the records, and the
            // fold made with them applies as it is.
            if prefetched.records.first.map({ $0.version > newer }) ?? true {
                records = prefetched.records
                fold = prefetched.fold
            } else {
                records = prefetched.records.filter { $0.version > newer }
            }
            survey = prefetched.survey
        } else {
            let pending = contents.scan.records.filter { $0.version > newer }
            records = try JournalRecord.decode(pending, in: contents.data, schema: schema, path: path)
            survey = JournalSurvey(records)
        }
        try survey.check(after: newer, contents: contents, schema: schema, path: path)
        if let recovered { try keepDamaged(path, damage: recovered) }
        return Pending(
            lineage: header.lineage, journal: contents, records: records, holdsRecords: !contents.scan.records.isEmpty, fold: fold)
    }

    /// Copies the damaged journal at `path` aside (see ``DamagedFileCopy``) before recovery
    /// replays its intact records, and logs it.
    ///
    /// - Throws: ``GraphStoreError/fileOperationFailed(path:operation:reason:)`` when the copy
    ///   cannot be made or synced.
    private static func keepDamaged(_ path: String, damage: GraphStoreError) throws {
        let aside: String
        do {
            aside = try DamagedFileCopy.keep(path)
        } catch {
            throw GraphStoreError.fileOperationFailed(path: path, operation: "copy the damaged journal aside", reason: "\(error)")
        }
        Logger(label: "GraphStore.JournalReplay").warning("Replayed only the intact records of a damaged journal", metadata: [
            "damage": "\(damage)", "keptAs": "\(aside)",
        ])
    }

    /// Checks that the journal continues the store's file: the same lineage (or, for a file
    /// written before journals, the version the journal started on), and no records missing in
    /// between. `storedNumber` is `nil` when the store's file does not exist: then only a
    /// journal started on an empty store continues it.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` naming the journal.
    static func checkContinuity(
        of contents: JournalContents, header: JournalFormatV1.Header, storedNumber: UInt64?, storedLineage: UUID?,
        path: String, storePath: String
    ) throws {
        if let gap = discontinuity(of: contents, header: header, storedNumber: storedNumber, storedLineage: storedLineage, storePath: storePath) {
            throw GraphStoreError.damagedFile(path: path, offset: gap.offset, reason: gap.reason)
        }
    }

    /// Why the journal at `path` does not continue a store file holding `storedNumber` of
    /// `storedLineage`, or `nil` when it does (or there is no journal, or it holds no header).
    /// Changes nothing: a damaged journal is judged by its header, which recovery would keep.
    /// `storePath` names the file in the reason.
    ///
    /// - Throws: the reading errors of ``read(_:)`` other than damage:
    ///   ``GraphStoreError/unsupportedFormatVersion(path:found:supported:)``,
    ///   ``GraphStoreError/fileOperationFailed(path:operation:reason:)``.
    /// - Complexity: O(journal size).
    static func discontinuity(
        ofJournalAt path: String, storedNumber: UInt64, storedLineage: UUID?, storePath: String
    ) throws -> String? {
        let contents: JournalContents?
        do {
            contents = try read(path)
        } catch let damage as JournalFormatV1.Damage {
            contents = JournalContents(data: Data(), scan: damage.intact)
        }
        guard let contents, let header = contents.scan.header else { return nil }
        return discontinuity(of: contents, header: header, storedNumber: storedNumber, storedLineage: storedLineage, storePath: storePath)?.reason
    }

    /// The offset and reason for ``checkContinuity(of:header:storedNumber:storedLineage:path:storePath:)``'s
    /// error, or `nil` when the journal continues the store's file.
    static func discontinuity(
        of contents: JournalContents, header: JournalFormatV1.Header, storedNumber: UInt64?, storedLineage: UUID?,
        storePath: String
    ) -> (offset: Int?, reason: String)? {
        guard let storedNumber else {
            guard header.baseVersion == 0 else {
                return (0, "the journal continues store version \(header.baseVersion) of \(storePath), but that file does not exist; put the store file back, or move the journal away to open an empty store")
            }
            return nil
        }
        if let storedLineage {
            guard storedLineage == header.lineage else {
                return (16, "the journal belongs to another store (lineage \(header.lineage.uuidString), but \(storePath) has lineage \(storedLineage.uuidString)); it was not replayed. Move it away to open the store as its file holds it")
            }
        } else {
            // A store file written before journals: only the journal started on it continues it.
            guard header.baseVersion == storedNumber else {
                return (16, "the journal (lineage \(header.lineage.uuidString), from store version \(header.baseVersion)) does not belong to \(storePath), which has no lineage and holds version \(storedNumber); it was not replayed")
            }
        }
        guard header.baseVersion <= storedNumber else {
            return (contents.scan.records.first?.start, "the journal starts after store version \(header.baseVersion), but \(storePath) holds only version \(storedNumber): the records in between are missing")
        }
        return nil
    }
}
