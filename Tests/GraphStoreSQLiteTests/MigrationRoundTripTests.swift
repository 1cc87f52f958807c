import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// Snapshot → SQLite → snapshot without the app's types: the typed containers at every step
/// hold the same objects, to the bit, and the generic values come back the same.
@Suite struct MigrationRoundTripTests {
    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func randomGraphJSONRoundTrips(seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let graph = MigrationTestKit.randomGraph(seed: seed)
        let source = directory.file("store.json.gz")
        try await MigrationTestKit.write(graph, to: .file(source))

        let sqlite = directory.file("store.sqlite")
        let there = try Migration.snapshotToSQLite(from: source, to: sqlite)
        #expect(there.objectCount == graph.objectCount)
        MigrationTestKit.expectEqual(try await MigrationTestKit.read(.sqlite(sqlite)), graph, "SQLite (seed \(seed))")

        let back = directory.file("back.json")
        let summary = try Migration.sqliteToSnapshot(from: sqlite, to: back, format: .json, compression: .none)
        #expect(summary.objectCount == graph.objectCount)
        MigrationTestKit.expectEqual(try await MigrationTestKit.read(.file(back, compression: .none)), graph, "JSON again (seed \(seed))")

        // The generic values too: what the source snapshot holds, the final one holds.
        let original = MigrationTestKit.canonical(try GenericSnapshot.read(from: source))
        let final = MigrationTestKit.canonical(try GenericSnapshot.read(from: back))
        #expect(final.keys.sorted() == original.keys.sorted())
        for (entity, objects) in original {
            #expect(final[entity] == objects, "\(entity) (seed \(seed))")
        }
    }

    /// A property list holds dates and data natively; the example model (whose values nest no
    /// dates) goes to SQLite and back to a property list exactly.
    @Test(arguments: [7, 8] as [UInt64])
    func randomGraphPropertyListRoundTrips(seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let graph = MigrationTestKit.randomGraph(seed: seed, edges: false)
        let source = directory.file("store.plist.gz")
        try await MigrationTestKit.write(graph, to: .file(source, format: .binaryPropertyList))

        let sqlite = directory.file("store.sqlite")
        try Migration.snapshotToSQLite(from: source, to: sqlite)
        MigrationTestKit.expectEqual(try await MigrationTestKit.read(.sqlite(sqlite)), graph, "SQLite from plist")

        let back = directory.file("back.plist.gz")
        try Migration.sqliteToSnapshot(from: sqlite, to: back, format: .binaryPropertyList, compression: .gzip)
        MigrationTestKit.expectEqual(try await MigrationTestKit.read(.file(back, format: .binaryPropertyList)), graph, "plist again")
        let original = MigrationTestKit.canonical(try GenericSnapshot.read(from: source))
        #expect(MigrationTestKit.canonical(try GenericSnapshot.read(from: back)) == original)
    }

    /// A property list source keeps the edge values exact in SQLite too (its dates and data
    /// are native, nested ones included), and a JSON snapshot made from that SQLite file too.
    @Test func edgeValuesFromAPropertyList() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("store.plist")
        try await MigrationTestKit.write(MigrationTestKit.randomGraph(seed: 11), to: .file(source, format: .binaryPropertyList, compression: .none))
        // What the property list holds: its encoder writes one object for values that compare
        // equal, so a -0.0 may read back as 0.0 (and a 0.0 as -0.0) even without migrating.
        let graph = try await MigrationTestKit.read(.file(source, format: .binaryPropertyList, compression: .none))
        let sqlite = directory.file("store.sqlite")
        try Migration.snapshotToSQLite(from: source, to: sqlite)
        MigrationTestKit.expectEqual(try await MigrationTestKit.read(.sqlite(sqlite)), graph, "SQLite from plist")
        let json = directory.file("store.json.gz")
        try Migration.sqliteToSnapshot(from: sqlite, to: json)
        MigrationTestKit.expectEqual(try await MigrationTestKit.read(.file(json)), graph, "JSON from SQLite")
    }

    /// A file written by the typed SQLite store becomes a snapshot that `.file` opens equal.
    @Test(arguments: [SnapshotFormat.json, .binaryPropertyList])
    func typedSQLiteStoreBecomesASnapshot(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Nested dates too: the store records where they are, and a property list holds them
        // as dates.
        let graph = MigrationTestKit.randomGraph(seed: 21)
        let sqlite = directory.file("typed.sqlite")
        try await MigrationTestKit.write(graph, to: .sqlite(sqlite))

        let snapshot = directory.file("store.\(format.fileExtension).gz")
        let log = MigrationTestKit.ProgressLog()
        let summary = try Migration.sqliteToSnapshot(from: sqlite, to: snapshot, format: format, progress: log.callback)
        #expect(summary.objectCount == graph.objectCount)
        #expect(summary.bytesRead == (try FileManager.default.attributesOfItem(atPath: sqlite.path)[.size] as? NSNumber)?.intValue)
        #expect(summary.bytesWritten == (try FileManager.default.attributesOfItem(atPath: snapshot.path)[.size] as? NSNumber)?.intValue)
        MigrationTestKit.expectEqual(try await MigrationTestKit.read(.file(snapshot, format: format)), graph, "snapshot from typed SQLite")
        // Through symbolic links, the summary gives the sizes of the files they name.
        let linkedSource = directory.file("linked.sqlite"), linkedSnapshot = directory.file("linked.\(format.fileExtension).gz")
        try FileManager.default.createSymbolicLink(atPath: linkedSource.path, withDestinationPath: sqlite.lastPathComponent)
        let other = directory.file("other.\(format.fileExtension).gz")
        try FileManager.default.createSymbolicLink(atPath: linkedSnapshot.path, withDestinationPath: other.lastPathComponent)
        let linked = try Migration.sqliteToSnapshot(from: linkedSource, to: linkedSnapshot, format: format)
        #expect(linked.bytesRead == summary.bytesRead)
        #expect(linked.bytesWritten == (try FileManager.default.attributesOfItem(atPath: other.path)[.size] as? NSNumber)?.intValue)

        // The header says where the dates, data, doubles and strings (text columns) are, and
        // keeps the versions.
        let generic = try GenericSnapshot.read(from: snapshot)
        #expect(generic.header.storeVersion == 1)
        #expect(generic.header.fieldTypes?["Post"] == ["date": "date", "blogName": "string", "kind": "string", "summary": "string", "body": "string"])
        #expect(generic.header.fieldTypes?["Note"] == ["createdAt": "date", "modifiedAt": "date", "id": "string", "text": "string"])
        #expect(generic.header.fieldTypes?["SQLiteEdgeValues"]?["data"] == "data")
        #expect(generic.header.fieldTypes?["SQLiteEdgeValues"]?["stamp"] == "date")
        #expect(generic.header.fieldTypes?["SQLiteEdgeValues"]?["nan"] == "real")
        #expect(generic.header.fieldTypes?["SQLiteEdgeValues"]?["nested.when"] == "date")
        #expect(generic.header.fieldTypesVersion == SnapshotHeaderV1.currentFieldTypesVersion)
        // Every entity reported from 0 to its total, in order.
        for entity in generic.entities {
            let reports = log.all.filter { $0.entity == entity.name }
            #expect(reports.first?.done == 0)
            #expect(reports.last?.done == entity.objects.count)
            #expect(reports.allSatisfy { $0.total == entity.objects.count })
            #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.done <= $1.done })
        }
    }

    /// The typed store reopens a migrated file and keeps writing to it: the columns have the
    /// kinds its own rows need.
    @Test func theTypedStoreWritesToAMigratedFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var graph = MigrationTestKit.randomGraph(seed: 31)
        let source = directory.file("store.json.gz")
        try await MigrationTestKit.write(graph, to: .file(source))
        let sqlite = directory.file("store.sqlite")
        try Migration.snapshotToSQLite(from: source, to: sqlite)

        let container = try GraphContainer(for: SQLiteTestKit.model, store: .sqlite(sqlite))
        var edge = SQLiteEdgeValues.empties
        edge.id = "written later"
        edge.nan = 2.5
        edge.double = .nan
        edge.optionalText = "now set"
        var post = graph.posts[0]
        post.summary = "edited ✓"
        container.mainContext.insert(edge)
        container.mainContext.insert(post)
        try container.mainContext.save()
        try await container.flush()
        #expect(container.storeStatus.lastError == nil)
        try await container.close()
        graph.edges.append(edge)
        graph.posts[0] = post
        MigrationTestKit.expectEqual(try await MigrationTestKit.read(.sqlite(sqlite)), graph, "after a typed write")
    }

    @Test func progressCountsEveryObjectOfEveryEntity() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tags = (0..<2_500).map { ExampleModel.Tag(name: "tag \($0)") }
        let source = directory.file("store.json.gz")
        try await MigrationTestKit.write(MigrationTestKit.Graph(tags: tags), to: .file(source))
        let log = MigrationTestKit.ProgressLog()
        try Migration.snapshotToSQLite(from: source, to: directory.file("store.sqlite"), progress: log.callback)
        let tagReports = log.all.filter { $0.entity == "Tag" }
        #expect(tagReports.map(\.done) == [0, 1_000, 2_000, 2_500])
        #expect(tagReports.allSatisfy { $0.total == 2_500 })
        // The empty entities finish too, in the snapshot's (name) order, one after another.
        #expect(log.all.filter { $0.entity != "Tag" }.map(\.description) == ["Note: 0/0", "Note: 0/0", "Post: 0/0", "Post: 0/0", "SQLiteEdgeValues: 0/0", "SQLiteEdgeValues: 0/0"])
        #expect(log.all.map(\.entity) == ["Note", "Note", "Post", "Post", "SQLiteEdgeValues", "SQLiteEdgeValues", "Tag", "Tag", "Tag", "Tag"])
    }
}
