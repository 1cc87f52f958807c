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
    typealias Keyed = IDFormModels.Keyed
    typealias V1 = IDFormModels.V1
    typealias V2 = IDFormModels.V2

    static func migrations(adding field: String, to entity: String, default value: SnapshotValue) -> [SchemaMigration] {
        IDFormModels.migrations(adding: field, to: entity, default: value)
    }

    static var days: [Date] { IDFormModels.days }
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
        IDFormModels.expectEveryChange(objects, ids: ids, sourceLocation: sourceLocation)
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
