import Foundation
import OrderedCollections

/// Replays a journal onto a store read as generic values: how a store whose file is in an
/// older model version takes in the saves a crash left in its journal, which are in that same
/// older model, before it is migrated.
///
/// The record documents are read in the snapshot's JSON conventions (see ``JournalRecord``):
/// per entity, `clear`, then `delete` (ids), then `upsert` (whole objects).
enum GenericJournalReplay {
    /// What replaying gave: the store version after the last record, the store's lineage and
    /// the journal as read (`nil`: no journal file).
    struct Replayed {
        var storeVersion: UInt64
        var lineage: UUID?
        var journal: JournalContents?
    }

    /// Replays the records of the journal at `path` newer than `storeVersion` onto `store`.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` for a damaged journal, a
    ///   journal of another store or one that does not continue the store's file (as
    ///   ``JournalReplay/open(journalAt:stored:storedLineage:storePath:schema:recover:reportingChanges:)``),
    ///   or a record that is not a journal document.
    /// - Complexity: O(journal size + objects of the entities it changes).
    ///
    /// `numbers`, those of the store's objects, follow the records: an object a record upserts
    /// has the record's numbers, one it deletes (or whose table it clears) none.
    static func replay(
        journalAt path: String, onto store: inout MigratingStore, numbers: inout ExactNumbers, storeVersion: UInt64, lineage: UUID?,
        storePath: String, fieldTypes: [String: [String: String]]? = nil, uuidKeyed: Set<String> = []
    ) throws -> Replayed {
        let contents: JournalContents?
        do {
            contents = try JournalReplay.read(path)
        } catch let damage as JournalFormatV1.Damage {
            throw GraphStoreError.damagedFile(path: path, offset: damage.offset, reason: "\(damage.reason); a store that needs a migration is not opened with a damaged journal")
        }
        guard let contents, let header = contents.scan.header else {
            return Replayed(storeVersion: storeVersion, lineage: lineage, journal: contents)
        }
        try JournalReplay.checkContinuity(
            of: contents, header: header, storedNumber: storeVersion, storedLineage: lineage, path: path, storePath: storePath)
        // Keyed by each id's matching key (``SnapshotValue/idMatchingKey``): a property list's
        // or SQLite's `Date` or `Double` id is a double here, and a record's whole-number one an
        // integer (JSON writes no `.0`); keyed as read, a delete missed its object and an edit
        // added a second one. The objects themselves keep their ids as read.
        var tables: [String: OrderedDictionary<SnapshotValue, [String: SnapshotValue]>] = [:]
        func table(_ name: String) -> OrderedDictionary<SnapshotValue, [String: SnapshotValue]> {
            if let table = tables[name] { return table }
            var table = OrderedDictionary<SnapshotValue, [String: SnapshotValue]>()
            for object in store[name] { table[(object["id"] ?? .null).idMatchingKey] = object }
            return table
        }
        let stringPaths = (fieldTypes ?? [:]).mapValues(SnapshotValue.stringPaths(of:))
        var version = storeVersion
        for record in contents.scan.records where record.version > storeVersion {
            let document: SnapshotValue
            var recorded = ExactNumbers()
            do {
                // The parser of the snapshot's generic reading, which keeps the digits of
                // numbers a double holds only rounded, per upserted object.
                document = try SnapshotValue.readJSON(contents.data[record.document], objectsIn: .journalRecord, numbers: &recorded)
            } catch {
                throw GraphStoreError.damagedFile(path: path, offset: record.start, reason: "the journal record of store version \(record.version) is not readable: \(error)")
            }
            guard case .object(let parts) = document else {
                throw GraphStoreError.damagedFile(path: path, offset: record.start, reason: "the journal record of store version \(record.version) is not a JSON object")
            }
            for (name, part) in parts {
                var objects = table(name)
                if part["clear"] == .bool(true) {
                    objects.removeAll()
                    numbers.removeAll(entity: name)
                }
                // A record is JSON too: its "NaN" strings read as the snapshot's do, ids included
                // (the objects are keyed by the snapshot's ids, restored alike).
                let strings = stringPaths[name] ?? []
                let idIsString = strings.contains(["id"])
                let matchingCase = !uuidKeyed.contains(name)
                if case .array(let ids)? = part["delete"] {
                    for read in ids {
                        let id = idIsString ? read.withNonFiniteNameRestored() : read
                        let key = Self.key(of: id, in: objects, matchingCase: matchingCase)
                        objects[key] = nil
                        numbers.remove(entity: name, id: key)
                    }
                }
                if case .array(let upserts)? = part["upsert"] {
                    for object in upserts {
                        guard case .object(let read) = object, let readID = read["id"] else {
                            throw GraphStoreError.damagedFile(path: path, offset: record.start, reason: "the journal record of store version \(record.version) upserts a \(name) without an id")
                        }
                        let fields = SnapshotValue.restoringNonFiniteStrings(read, at: strings) ?? read
                        let id = fields["id"] ?? readID
                        let key = Self.key(of: id, in: objects, matchingCase: matchingCase)
                        // The object takes the record's id; numbers kept under the stored
                        // spelling of the same UUID (see `key(of:in:matchingCase:)`) go with the old object.
                        if key != id.idMatchingKey { numbers.remove(entity: name, id: key) }
                        objects[key] = fields
                        numbers.set(recorded.bag(entity: name, id: readID) ?? ExactNumbers.Bag(), entity: name, id: id)
                    }
                }
                tables[name] = objects
            }
            version = record.version
        }
        for (name, objects) in tables { store[name] = Array(objects.values) }
        return Replayed(storeVersion: version, lineage: lineage ?? header.lineage, journal: contents)
    }

    /// The key under which `objects` holds the object a record names by `id`: the id's
    /// matching key (``SnapshotValue/idMatchingKey``), or, when no object has that key and the
    /// id is a UUID's text, the key of an object holding the same UUID in the other letter
    /// case.
    ///
    /// Foundation writes a `UUID` in capitals, and the journal is written so; a snapshot
    /// another program wrote may hold the same UUIDs in small letters, which the typed model
    /// reads as the same ids. Matched as written, a journaled delete of such an object missed it
    /// (the object came back after the migration) and an edit added a second object with the
    /// same id. An exact match always wins; `matchingCase` turns the other spelling off for an
    /// entity the app does not key by `UUID` (a `String` id: ids differing only in case are
    /// different objects, and a journaled insert of one spelling must not replace the other).
    ///
    /// - Complexity: O(1) expected; a few hash lookups more for a UUID not found as written.
    static func key(
        of id: SnapshotValue, in objects: OrderedDictionary<SnapshotValue, [String: SnapshotValue]>, matchingCase: Bool
    ) -> SnapshotValue {
        let key = id.idMatchingKey
        guard !matchingCase, objects[key] == nil, case .string(let text) = key, text.utf8.count == 36, UUID(uuidString: text) != nil else {
            return key
        }
        for spelling in [text.uppercased(), text.lowercased()] where spelling != text {
            if objects[.string(spelling)] != nil { return .string(spelling) }
        }
        return key
    }
}
