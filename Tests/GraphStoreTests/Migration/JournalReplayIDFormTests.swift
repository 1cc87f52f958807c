import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// Saves that only a snapshot store's journal holds, of an entity keyed by `Date` or `Double`,
/// all come through a model migration at open, ids exactly as saved.
///
/// A property-list snapshot reads such an id as a date (a double in the conventions migration
/// steps see), while the journal, JSON, writes a whole number without `.0` and reads it back
/// as an integer: matched as read, a delete missed its object (which came back) and an edit
/// added a second object with the same id (and the store no longer opened). The same holds for
/// a date inside an id (a struct of a date and a number).
@Suite struct JournalReplayIDFormTests {
    typealias Keyed = IDFormModels.Keyed
    typealias V1 = IDFormModels.V1
    typealias V2 = IDFormModels.V2

    static func migrations(adding field: String, to entity: String, default value: SnapshotValue) -> [SchemaMigration] {
        IDFormModels.migrations(adding: field, to: entity, default: value)
    }

    static var days: [Date] { IDFormModels.days }
    /// Whole numbers (one beyond 2^53, one negative), a fraction, and zero.
    static let readings: [Double] = [1, 9_007_199_254_740_994, 2.5, -0.0, -40]

    static let formats: [SnapshotFormat] = [.json, .binaryPropertyList]

    static func configuration(_ url: URL, _ format: SnapshotFormat) -> StoreConfiguration {
        .file(url, format: format, compression: .none, coalescingInterval: .seconds(3600))
    }

    /// A version-1 store of `T` whose snapshot holds an object for each of `ids` but the
    /// last, and whose journal alone holds one save: the first deleted, the second and third
    /// edited, the last inserted. Returns the copy a crash right after that save leaves.
    ///
    /// `rewrite`, if given, changes the snapshot's objects (as another program writing the
    /// file would) before the journaled save.
    static func crashedStore<T: Keyed>(
        _ type: T.Type, ids: [T.ID], format: SnapshotFormat, in directory: TemporaryDirectory,
        rewrite: ((SnapshotValue) -> SnapshotValue)? = nil, hints: [String: [String: String]]? = nil
    ) async throws -> URL {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("store")
        let first = try GraphContainer(for: [T.self], store: configuration(url, format))
        for (index, id) in ids.dropLast().enumerated() { first.mainContext.insert(T(id: id, note: "\(index)")) }
        try first.mainContext.save()
        try await first.close()
        if let rewrite {
            var snapshot = try GenericSnapshot.read(from: url)
            snapshot.entities = snapshot.entities.map { (name: $0.name, objects: $0.objects.map(rewrite)) }
            if let hints { snapshot.header.fieldTypes = hints }
            try snapshot.write(to: url, format: format, compression: .none)
        }

        let again = try GraphContainer(for: [T.self], store: configuration(url, format))
        again.mainContext.delete(T.self, id: ids[0])
        again.mainContext.insert(T(id: ids[1], note: "1, edited"))
        again.mainContext.insert(T(id: ids[2], note: "2, edited"))
        again.mainContext.insert(T(id: ids[ids.count - 1], note: "inserted"))
        try again.mainContext.save()
        let copy = try JournalStoreTests.crashCopy(of: url, into: directory)
        #expect(FileManager.default.fileExists(atPath: copy.path + ".journal"))
        try await again.close()
        return copy
    }

    /// What the version-2 app reads from the store at `url`: each object's id and note, in
    /// stored order.
    static func migrated<T: Keyed>(
        _ type: T.Type, at url: URL, format: SnapshotFormat, migrations: [SchemaMigration]
    ) async throws -> [(id: T.ID, note: String)] {
        let container = try GraphContainer(for: [T.self], store: configuration(url, format), version: 2, migrations: migrations)
        let objects = try container.mainContext.fetch(FetchDescriptor<T>()).map { (id: $0.id, note: $0.note) }
        try await container.close()
        return objects
    }

    /// Every journaled change of `ids`, as ``crashedStore(_:ids:format:in:)`` saves them.
    static func expectEveryChange<ID: Hashable>(_ objects: [(id: ID, note: String)], ids: [ID], sourceLocation: SourceLocation = #_sourceLocation) {
        IDFormModels.expectEveryChange(objects, ids: ids, sourceLocation: sourceLocation)
    }

    @Test(arguments: formats)
    func everyJournaledChangeOfADateKeyedEntityIsMigrated(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.crashedStore(V1.Day.self, ids: Self.days, format: format, in: directory)
        let objects = try await Self.migrated(
            V2.Day.self, at: url, format: format, migrations: Self.migrations(adding: "mood", to: "Day", default: .integer(0)))
        Self.expectEveryChange(objects, ids: Self.days)
        // Exactly as saved: each id is one of the saved dates, to the bit.
        let bits = Set(Self.days.map(\.timeIntervalSinceReferenceDate.bitPattern))
        #expect(objects.allSatisfy { bits.contains($0.id.timeIntervalSinceReferenceDate.bitPattern) })
    }

    @Test(arguments: formats)
    func everyJournaledChangeOfADoubleKeyedEntityIsMigrated(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.crashedStore(V1.Reading.self, ids: Self.readings, format: format, in: directory)
        let objects = try await Self.migrated(
            V2.Reading.self, at: url, format: format, migrations: Self.migrations(adding: "unit", to: "Reading", default: .string("kg")))
        Self.expectEveryChange(objects, ids: Self.readings)
        let bits = Set(Self.readings.map(\.bitPattern))
        #expect(objects.allSatisfy { bits.contains($0.id.bitPattern) })
    }

    /// An id that holds a date inside it: a property-list snapshot reads the date as a date,
    /// the journal as a whole number, so the ids are matched by their values inside too.
    @Test(arguments: formats)
    func everyJournaledChangeOfAnEntityKeyedByAStructHoldingADateIsMigrated(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.crashedStore(V1.Slot.self, ids: IDFormModels.slots, format: format, in: directory)
        let objects = try await Self.migrated(
            V2.Slot.self, at: url, format: format, migrations: Self.migrations(adding: "booked", to: "Slot", default: .bool(false)))
        Self.expectEveryChange(objects, ids: IDFormModels.slots)
    }

    /// A snapshot another program wrote with its UUID ids in small letters, which the typed
    /// model reads as the same ids, while the journal writes them in capitals (as Foundation
    /// does): each journaled change still meets its object. Also when the snapshot's type
    /// hints call the id text (a snapshot converted from a SQLite database hints every text
    /// column so): the app's model keys the entity by `UUID`, which decides.
    @Test(arguments: formats, [false, true])
    func everyJournaledChangeOfAUUIDKeyedEntityWrittenInSmallLettersIsMigrated(format: SnapshotFormat, hintedAsText: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let ids = (0..<5).map { _ in UUID() }
        var lowered = 0
        let hints = hintedAsText ? ["Item": ["id": "string", "note": "string"]] : nil
        let url = try await Self.crashedStore(V1.Item.self, ids: ids, format: format, in: directory, rewrite: { object in
            guard case .object(var fields) = object, case .string(let id)? = fields["id"] else { return object }
            fields["id"] = .string(id.lowercased())
            lowered += id == id.lowercased() ? 0 : 1
            return .object(fields)
        }, hints: hints)
        #expect(lowered == ids.count - 1)
        let objects = try await Self.migrated(
            V2.Item.self, at: url, format: format, migrations: Self.migrations(adding: "done", to: "Item", default: .bool(false)))
        Self.expectEveryChange(objects, ids: ids)
    }

    /// String ids that differ only in letter case are different objects, also when they are
    /// UUIDs' text: a journaled change meets the object of its exact spelling, and one inserted
    /// in capitals beside a stored one in small letters is a second object (the snapshot's type
    /// hints declare the id a `String`).
    @Test(arguments: [false, true])
    func stringIDsDifferingInCaseStayApartInMigration(insertsTheOtherSpelling: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let uuid = UUID().uuidString
        let ids = insertsTheOtherSpelling ? ["first", "second", uuid.lowercased(), "fourth", uuid] : ["first", uuid, uuid.lowercased(), "fourth", "last"]
        let url = try await Self.crashedStore(V1.Name.self, ids: ids, format: .json, in: directory)
        let objects = try await Self.migrated(
            V2.Name.self, at: url, format: .json, migrations: Self.migrations(adding: "rank", to: "Name", default: .integer(0)))
        Self.expectEveryChange(objects, ids: ids)
    }

    /// A journal that deletes an object and a later record that inserts it again: the object
    /// is there once, as inserted.
    @Test(arguments: formats)
    func aDeleteThenAnInsertInTheJournalLeavesTheObjectOnce(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("store")
        let first = try GraphContainer(for: [V1.Day.self], store: Self.configuration(url, format))
        first.mainContext.insert(V1.Day(id: Self.days[0], note: "first"))
        try first.mainContext.save()
        try await first.close()
        let again = try GraphContainer(for: [V1.Day.self], store: Self.configuration(url, format))
        again.mainContext.delete(V1.Day.self, id: Self.days[0])
        try again.mainContext.save()
        again.mainContext.insert(V1.Day(id: Self.days[0], note: "again"))
        try again.mainContext.save()
        let copy = try JournalStoreTests.crashCopy(of: url, into: directory)
        try await again.close()

        let objects = try await Self.migrated(
            V2.Day.self, at: copy, format: format, migrations: Self.migrations(adding: "mood", to: "Day", default: .integer(0)))
        #expect(objects.map(\.note) == ["again"])
        #expect(objects.map(\.id) == [Self.days[0]])
    }

    // MARK: - Exact numbers

    enum Ledger {
        struct V1: Entity, Equatable {
            var id: Date
            var balance: Decimal
            static var entityName: String { "Ledger" }
        }

        struct V2: Entity, Equatable {
            var id: Date
            var balance: Decimal
            var currency: String
            static var entityName: String { "Ledger" }
        }
    }

    static let balance = Decimal(string: "12345678901234567890.123456789", locale: Locale(identifier: "en_US_POSIX"))!

    /// A decimal no `Double` holds, of an object keyed by a date, keeps every digit through a
    /// migration of a property-list store: its digits are kept under the object's id, read as
    /// a date and seen by the migration as a double.
    @Test(arguments: [false, true])
    func theDigitsOfADateKeyedObjectSurviveMigration(journaled: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("ledger")
        let format = SnapshotFormat.binaryPropertyList
        let first = try GraphContainer(for: [Ledger.V1.self], store: Self.configuration(url, format))
        first.mainContext.insert(Ledger.V1(id: Self.days[0], balance: Self.balance))
        first.mainContext.insert(Ledger.V1(id: Self.days[2], balance: Self.balance))
        try first.mainContext.save()
        try await first.close()
        let again = try GraphContainer(for: [Ledger.V1.self], store: Self.configuration(url, format))
        if journaled {
            again.mainContext.insert(Ledger.V1(id: Self.days[1], balance: Self.balance))
            try again.mainContext.save()
        }
        let copy = try JournalStoreTests.crashCopy(of: url, into: directory)
        try await again.close()

        let container = try GraphContainer(
            for: [Ledger.V2.self], store: Self.configuration(copy, format), version: 2,
            migrations: Self.migrations(adding: "currency", to: "Ledger", default: .string("EUR")))
        let ledgers = try container.mainContext.fetch(FetchDescriptor<Ledger.V2>())
        try await container.close()
        #expect(ledgers.count == (journaled ? 3 : 2))
        #expect(ledgers.allSatisfy { $0.balance == Self.balance })
    }
}
