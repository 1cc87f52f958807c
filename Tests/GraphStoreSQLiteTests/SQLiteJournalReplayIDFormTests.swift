import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// Saves that only a SQLite store's journal holds, of an entity keyed by `Date` or `Double`,
/// all come through a model migration at open, ids exactly as saved.
///
/// A `date` or `real` id column reads as a date, then a double in the conventions migration
/// steps see, while the journal, JSON, writes a whole number without `.0` and reads it back
/// as an integer: matched as read, a delete missed its row (which came back) and an edit added
/// a second object with the same id (and the store no longer opened).
@Suite struct SQLiteJournalReplayIDFormTests {
    /// An entity of version 1 whose id is of type `ID`, and its version-2 form.
    protocol Keyed: Entity, Equatable {
        init(id: ID, note: String)
        var note: String { get }
    }

    enum V1 {
        struct Day: Keyed {
            var id: Date
            var note: String
            static var entityName: String { "Day" }
        }

        struct Reading: Keyed {
            var id: Double
            var note: String
            static var entityName: String { "Reading" }
        }
    }

    enum V2 {
        struct Day: Keyed {
            var id: Date
            var note: String
            var mood: Int
            static var entityName: String { "Day" }
            init(id: Date, note: String) { (self.id, self.note, mood) = (id, note, 0) }
        }

        struct Reading: Keyed {
            var id: Double
            var note: String
            var unit: String
            static var entityName: String { "Reading" }
            init(id: Double, note: String) { (self.id, self.note, unit) = (id, note, "kg") }
        }
    }

    static func migrations(adding field: String, to entity: String, default value: SnapshotValue) -> [SchemaMigration] {
        [SchemaMigration(from: 1, to: 2, [.addField(field, in: entity, default: value)])]
    }

    /// Midnights, whole seconds since 2001, and one instant with a fraction.
    static let days = [750_000_000, 750_086_400, 750_172_800.25, 750_259_200, 750_345_600].map(Date.init(timeIntervalSinceReferenceDate:))
    /// Whole numbers (one beyond 2^53, one negative) and a fraction.
    static let readings: [Double] = [1, 9_007_199_254_740_994, 2.5, 7, -40]

    /// A version-1 SQLite store of `T` whose rows hold an object for each of `ids` but the
    /// last, and whose journal alone holds one save (the writer held): the first deleted, the
    /// second and third edited, the last inserted. Returns the copy a crash then leaves.
    static func crashedStore<T: Keyed>(_ type: T.Type, ids: [T.ID], in directory: TemporaryDirectory) async throws -> URL {
        let url = directory.file("store.sqlite")
        let first = try GraphContainer(for: [T.self], store: .sqlite(url))
        for (index, id) in ids.dropLast().enumerated() { first.mainContext.insert(T(id: id, note: "\(index)")) }
        try first.mainContext.save()
        try await first.close()

        let gate = WriterGate()
        var options = SQLiteStoreOptions()
        options.beforeTransaction = { _ in gate.pass() }
        let again = try GraphContainer(for: [T.self], store: .sqlite(url, options: options))
        gate.close()
        again.mainContext.delete(T.self, id: ids[0])
        again.mainContext.insert(T(id: ids[1], note: "1, edited"))
        again.mainContext.insert(T(id: ids[2], note: "2, edited"))
        again.mainContext.insert(T(id: ids[ids.count - 1], note: "inserted"))
        try again.mainContext.save()
        await gate.waitUntilReached()
        let crashed = try SQLiteJournalTestKit.crashCopy(of: url, to: directory.file("crashed"))
        gate.open()
        try await again.close()
        return crashed
    }

    /// What the version-2 app reads from the store at `url`: each object's id and note.
    static func migrated<T: Keyed>(_ type: T.Type, at url: URL, migrations: [SchemaMigration]) async throws -> [(id: T.ID, note: String)] {
        let container = try GraphContainer(for: [T.self], store: .sqlite(url), version: 2, migrations: migrations)
        let objects = try container.mainContext.fetch(FetchDescriptor<T>()).map { (id: $0.id, note: $0.note) }
        try await container.close()
        return objects
    }

    /// Every journaled change of `ids`, as ``crashedStore(_:ids:in:)`` saves them.
    static func expectEveryChange<ID: Hashable>(_ objects: [(id: ID, note: String)], ids: [ID], sourceLocation: SourceLocation = #_sourceLocation) {
        let notes = Dictionary(objects.map { ($0.id, [$0.note]) }, uniquingKeysWith: +)
        var expected: [ID: [String]] = [ids[1]: ["1, edited"], ids[2]: ["2, edited"], ids[ids.count - 1]: ["inserted"]]
        for (index, id) in ids.enumerated().dropFirst(3).dropLast() { expected[id] = ["\(index)"] }
        #expect(notes == expected, sourceLocation: sourceLocation)
        #expect(objects.count == ids.count - 1, sourceLocation: sourceLocation)
    }

    @Test func everyJournaledChangeOfADateKeyedEntityIsMigrated() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.crashedStore(V1.Day.self, ids: Self.days, in: directory)
        let objects = try await Self.migrated(V2.Day.self, at: url, migrations: Self.migrations(adding: "mood", to: "Day", default: .integer(0)))
        Self.expectEveryChange(objects, ids: Self.days)
        let bits = Set(Self.days.map(\.timeIntervalSinceReferenceDate.bitPattern))
        #expect(objects.allSatisfy { bits.contains($0.id.timeIntervalSinceReferenceDate.bitPattern) })
    }

    @Test func everyJournaledChangeOfADoubleKeyedEntityIsMigrated() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.crashedStore(V1.Reading.self, ids: Self.readings, in: directory)
        let objects = try await Self.migrated(
            V2.Reading.self, at: url, migrations: Self.migrations(adding: "unit", to: "Reading", default: .string("kg")))
        Self.expectEveryChange(objects, ids: Self.readings)
        let bits = Set(Self.readings.map(\.bitPattern))
        #expect(objects.allSatisfy { bits.contains($0.id.bitPattern) })
    }
}
