import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// A save writes only the rows it changed: counted by SQLite's own update hook on the writer's
/// connection, not by the writer.
@Suite struct SQLiteChangedRowsTests {
    @Test func aSaveWritesOnlyItsChangedRows() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let log = RowChangeLog()
        let container = try SQLiteTestKit.open(directory.file("store.sqlite"), options: log.installing())
        let graph = SQLiteTestKit.exampleGraph(posts: 50, notes: 20)
        try SQLiteTestKit.insert(graph, into: container)
        try await container.flush()
        #expect(log.counts(in: "Post") == ["insert": 50])
        #expect(log.counts(in: "Note") == ["insert": 20])
        #expect(log.counts(in: "Tag") == ["insert": graph.tags.count])
        let before = log.transactions.count

        // One update, one delete, one insert: three rows.
        let context = container.mainContext
        var post = graph.posts[7]
        post.noteCount += 1
        context.insert(post)
        context.delete(graph.notes[3])
        context.insert(ExampleModel.Tag(name: "new"))
        try context.save()
        try await container.flush()
        let save = before..<log.transactions.count
        #expect(save.count == 1)
        #expect(log.counts(in: "Post", transactions: save) == ["update": 1])
        #expect(log.counts(in: "Note", transactions: save) == ["delete": 1])
        #expect(log.counts(in: "Tag", transactions: save) == ["insert": 1])
        // Besides the entity rows, only the store version in the metadata.
        #expect(log.transactions[save].joined().filter { !["Post", "Note", "Tag"].contains($0.table) }.map(\.description) == ["update graphstore_metadata"])
        try await container.close()
    }

    @Test func deleteRulesWriteTheRowsTheyChange() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let log = RowChangeLog()
        let container = try SQLiteTestKit.open(directory.file("store.sqlite"), options: log.installing())
        let graph = SQLiteTestKit.exampleGraph(posts: 20, notes: 9)
        try SQLiteTestKit.insert(graph, into: container)
        try await container.flush()
        let tag = graph.tags[0]
        let referencingPosts = graph.posts.filter { $0.tagIDs.contains(tag.id) }.count
        let referencingNotes = graph.notes.filter { $0.tagIDs.contains(tag.id) }.count
        #expect(referencingPosts > 0 && referencingNotes > 0)
        let before = log.transactions.count

        container.mainContext.delete(tag)
        try container.mainContext.save()
        try await container.flush()
        let save = before..<log.transactions.count
        #expect(log.counts(in: "Tag", transactions: save) == ["delete": 1])
        #expect(log.counts(in: "Post", transactions: save) == ["update": referencingPosts])
        #expect(log.counts(in: "Note", transactions: save) == ["update": referencingNotes])
        try await container.close()
    }

    @Test func commitsDuringAWriteAreGroupedIntoOneTransaction() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let log = RowChangeLog()
        let gate = WriterGate()
        var options = log.installing()
        options.beforeTransaction = { _ in gate.pass() }
        let container = try SQLiteTestKit.open(url, options: options)
        let context = container.mainContext
        let tag = ExampleModel.Tag(name: "first")

        // Hold the writer inside the first commit's transaction.
        gate.close()
        context.insert(tag)
        try context.save()
        await gate.waitUntilReached()

        // Ten more commits while it waits: the same post updated ten times, and a tag
        // inserted then deleted.
        var post = Fixtures.posts(1)[0]
        for count in 1...10 {
            post.noteCount = count
            context.insert(post)
            try context.save()
        }
        let transient = ExampleModel.Tag(name: "transient")
        context.insert(transient)
        try context.save()
        context.delete(transient)
        try context.save()
        #expect(container.storeStatus.durableVersion == 0)

        gate.open()
        try await container.flush()
        #expect(container.storeStatus.durableVersion == container.version)
        #expect(container.storeStatus.writesCompleted == 2)
        #expect(log.transactions.count == 2)
        // The grouped transaction writes the post once, with its last value, and the tag
        // inserted and deleted while the writer waited never reaches the table.
        #expect(log.counts(in: "Post", transactions: 1..<2) == ["insert": 1])
        #expect(log.counts(in: "Tag", transactions: 1..<2) == [:])
        try await container.close()

        let reopened = try SQLiteTestKit.open(url)
        #expect(reopened.mainContext.model(Post.self, id: post.id)?.noteCount == 10)
        #expect(reopened.count(of: ExampleModel.Tag.self) == 1)
        #expect(reopened.version == 13)
        try await reopened.close()
    }
}

/// Many tasks saving at once: every commit reaches the file, in order, and reopens whole.
@Suite struct SQLiteConcurrentSaveTests {
    @Test func concurrentSavesAllReachTheFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let container = try SQLiteTestKit.open(url)
        let tags = Fixtures.tagNames.map { ExampleModel.Tag(name: $0) }
        for tag in tags { container.mainContext.insert(tag) }
        try container.mainContext.save()

        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    let context = container.newBackgroundContext()
                    for round in 0..<40 {
                        let id = Int64(worker * 1000 + round % 20)
                        var post = Fixtures.posts(1, startingAt: id, tags: tags.map(\.id))[0]
                        post.noteCount = round
                        context.insert(post)
                        if round % 7 == 6 { context.delete(Post.self, id: id - 1) }
                        try context.save()
                    }
                }
            }
            try await group.waitForAll()
        }
        try await container.flush()
        #expect(container.storeStatus.durableVersion == container.version)
        let expected = try SQLiteTestKit.fetchAll(Post.self, from: container, by: \.id)
        let version = container.version
        try await container.close()

        let reopened = try SQLiteTestKit.open(url)
        #expect(try SQLiteTestKit.fetchAll(Post.self, from: reopened, by: \.id) == expected)
        #expect(reopened.version == version)
        try reopened.checkInvariants()
        try await reopened.close()
    }
}
