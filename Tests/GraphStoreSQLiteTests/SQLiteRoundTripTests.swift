import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// Everything written through `.sqlite` reads back equal, to the bit, in a new container.
@Suite struct SQLiteRoundTripTests {
    @Test func exampleGraphRoundTrips() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let graph = SQLiteTestKit.exampleGraph()

        let writer = try SQLiteTestKit.open(url)
        try SQLiteTestKit.insert(graph, into: writer)
        try await writer.flush()
        #expect(writer.storeStatus.durableVersion == writer.version)
        #expect(writer.storeStatus.lastError == nil)
        try await writer.close()

        let reader = try SQLiteTestKit.open(url)
        #expect(try SQLiteTestKit.fetchAll(Post.self, from: reader, by: \.id) == graph.posts.sorted { $0.id < $1.id })
        #expect(try SQLiteTestKit.fetchAll(Note.self, from: reader, by: \.id.uuidString) == graph.notes.sorted { $0.id.uuidString < $1.id.uuidString })
        #expect(try SQLiteTestKit.fetchAll(ExampleModel.Tag.self, from: reader, by: \.name) == graph.tags.sorted { $0.name < $1.name })
        // Dates to the bit, not only equal.
        let notes = try SQLiteTestKit.fetchAll(Note.self, from: reader, by: \.id.uuidString)
        for (read, written) in zip(notes, graph.notes.sorted { $0.id.uuidString < $1.id.uuidString }) {
            #expect(read.createdAt.timeIntervalSinceReferenceDate.bitPattern == written.createdAt.timeIntervalSinceReferenceDate.bitPattern)
        }
        #expect(reader.version == writer.version)
        try reader.checkInvariants()
        try await reader.close()
    }

    @Test func edgeValuesRoundTripToTheBit() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("edge.sqlite")
        let written = [SQLiteEdgeValues.extremes, .empties]

        let writer = try SQLiteTestKit.open(url)
        for value in written { writer.mainContext.insert(value) }
        try writer.mainContext.save()
        try await writer.close()

        let reader = try SQLiteTestKit.open(url)
        let read = try reader.mainContext.fetch(FetchDescriptor<SQLiteEdgeValues>())
        #expect(read.count == written.count)
        for value in written {
            let back = try #require(read.first { $0.id.unicodeScalars.elementsEqual(value.id.unicodeScalars) }, "\(value) missing")
            #expect(back.differences(from: value) == [], "\(value)")
        }
        try reader.checkInvariants()
        try await reader.close()
    }

    @Test func updatesDeletesAndCascadesPersist() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let graph = SQLiteTestKit.exampleGraph(posts: 12, notes: 6)

        let first = try SQLiteTestKit.open(url)
        try SQLiteTestKit.insert(graph, into: first)
        let context = first.mainContext
        var post = graph.posts[0]
        post.summary = "Edited — ✓"
        post.body = nil
        context.insert(post)
        context.delete(graph.notes[1])
        // Deleting a tag nullifies it in every post and note (updated rows, written too).
        context.delete(graph.tags[1])
        try context.save()
        let expectedPosts = try SQLiteTestKit.fetchAll(Post.self, from: first, by: \.id)
        let expectedNotes = try SQLiteTestKit.fetchAll(Note.self, from: first, by: \.id.uuidString)
        let expectedTags = try SQLiteTestKit.fetchAll(ExampleModel.Tag.self, from: first, by: \.name)
        try await first.close()

        let second = try SQLiteTestKit.open(url)
        #expect(try SQLiteTestKit.fetchAll(Post.self, from: second, by: \.id) == expectedPosts)
        #expect(try SQLiteTestKit.fetchAll(Note.self, from: second, by: \.id.uuidString) == expectedNotes)
        #expect(try SQLiteTestKit.fetchAll(ExampleModel.Tag.self, from: second, by: \.name) == expectedTags)
        #expect(second.mainContext.model(Post.self, id: post.id)?.body == nil)
        #expect(!expectedPosts.contains { $0.tagIDs.contains(graph.tags[1].id) })
        try second.checkInvariants()
        try await second.close()
    }

    @Test func aKeyFirstSeenLaterAddsItsColumn() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        // Post 3 has no body (nil is skipped when encoding): the table starts without the column.
        let bodiless = Fixtures.posts(1, startingAt: 3)[0]
        #expect(bodiless.body == nil)

        let first = try SQLiteTestKit.open(url)
        first.mainContext.insert(bodiless)
        try first.mainContext.save()
        try await first.close()
        #expect(try await columns(of: "Post", in: url).contains("body") == false)

        let second = try SQLiteTestKit.open(url)
        var withBody = Fixtures.posts(1, startingAt: 4)[0]
        withBody.body = "now there is a body"
        second.mainContext.insert(withBody)
        try second.mainContext.save()
        try await second.close()
        #expect(try await columns(of: "Post", in: url).contains("body"))

        let third = try SQLiteTestKit.open(url)
        #expect(try SQLiteTestKit.fetchAll(Post.self, from: third, by: \.id) == [bodiless, withBody])
        try await third.close()
    }

    @Test func anEmptyStoreOpensEmptyAndKeepsItsVersion() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")

        let first = try SQLiteTestKit.open(url)
        #expect(first.count(of: Post.self) == 0)
        let context = first.mainContext
        for index in 0..<3 {
            context.insert(ExampleModel.Tag(name: "tag \(index)"))
            try context.save()
        }
        try await first.close()

        let second = try SQLiteTestKit.open(url)
        #expect(second.version == 3)
        #expect(second.count(of: ExampleModel.Tag.self) == 3)
        try await second.close()
    }

    /// The columns of `table`, read by Python's `sqlite3`.
    private func columns(of table: String, in url: URL) async throws -> [String] {
        let json = try await SQLiteTestKit.pythonJSON("""
            import json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            print(json.dumps([row[1] for row in db.execute('PRAGMA table_info("%s")' % sys.argv[2])]))
            """, [url.path, table])
        return try #require(json as? [String])
    }
}
