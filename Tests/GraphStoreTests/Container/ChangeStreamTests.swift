import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

@Suite struct ChangeStreamTests {
    static let tags = Fixtures.tagNames.map { Tag(name: $0) }
    static let posts = Fixtures.posts(10)

    /// Every change `stream` delivers until it ends.
    static func collect(_ stream: AsyncStream<GraphChange>) async -> [GraphChange] {
        var received: [GraphChange] = []
        for await change in stream { received.append(change) }
        return received
    }

    @Test(arguments: StoreKind.allCases)
    func deliversEveryCommitInOrderWithItsContextAndIDs(store: StoreKind) async throws {
        try await withTimeout(seconds: deadlockBound) {
            try await withContainer(store) { container in
                let stream = container.changes
                let main = container.mainContext
                let importer = container.newBackgroundContext()
                importer.name = "importer"
                #expect(importer.name == "importer")

                for tag in Self.tags { importer.insert(tag) }
                for post in Self.posts { importer.insert(post) }
                try importer.save()
                try container.checkInvariants()

                var edited = Self.posts[0]
                edited.tagIDs = [Self.tags[0].id]
                main.insert(edited)
                main.delete(Self.posts[1])
                try main.save()
                try container.checkInvariants()

                main.delete(Self.tags[0])   // nullifies post 1's tag
                try main.save()
                try container.checkInvariants()

                try await container.close()
                let received = await Self.collect(stream)
                #expect(received.map(\.version) == [1, 2, 3])
                #expect(received.map(\.contextName) == ["importer", "main", "main"])

                #expect(Set(received[0].insertedIDs(ExampleModel.Tag.self)) == Set(Self.tags.map(\.id)))
                #expect(Set(received[0].insertedIDs(Post.self)) == Set(Self.posts.map(\.id)))
                #expect(received[0].insertedCount == 15 && received[0].updatedCount == 0 && received[0].deletedCount == 0)
                #expect(received[0].entityNames == ["Post", "Tag"])

                #expect(received[1].updatedIDs(Post.self) == [1])
                #expect(received[1].deletedIDs(Post.self) == [2])
                #expect(received[1].insertedCount == 0)

                #expect(received[2].deletedIDs(ExampleModel.Tag.self) == [Self.tags[0].id])
                #expect(received[2].updatedIDs(Post.self) == [1])
                #expect(received[2].entityNames == ["Post", "Tag"])
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentCommitsArriveInCommitOrderAfterTheyAreVisible(store: StoreKind) async throws {
        try await withTimeout(seconds: deadlockBound) {
            try await withContainer(store) { container in
                let stream = container.changes
                let consumer = Task {
                    var received: [(version: UInt64, name: String?, ids: [UUID], visible: Bool)] = []
                    for await change in stream {
                        let ids = change.insertedIDs(Note.self)
                        let reader = container.newBackgroundContext()
                        let visible = ids.allSatisfy { reader.model(Note.self, id: $0) != nil }
                        received.append((change.version, change.contextName, ids, visible))
                    }
                    return received
                }
                let writers = 8, savesPerWriter = 25
                let written = try await withThrowingTaskGroup(of: [UUID: String].self) { group in
                    for writer in 0..<writers {
                        group.addTask {
                            var mine: [UUID: String] = [:]
                            for n in 0..<savesPerWriter {
                                let context = container.newBackgroundContext()
                                context.name = "writer \(writer)"
                                let note = Note(text: "\(writer).\(n)", createdAt: Fixtures.epoch)
                                context.insert(note)
                                try context.save()
                                mine[note.id] = "writer \(writer)"
                            }
                            return mine
                        }
                    }
                    return try await group.reduce(into: [UUID: String]()) { $0.merge($1) { a, _ in a } }
                }
                try container.checkInvariants()
                try await container.close()
                let received = await consumer.value

                #expect(received.count == writers * savesPerWriter)
                #expect(received.map(\.version) == Array(1...UInt64(writers * savesPerWriter)))
                #expect(received.allSatisfy { $0.visible })
                #expect(received.allSatisfy { $0.ids.count == 1 && written[$0.ids[0]] == $0.name })
                #expect(Set(received.flatMap(\.ids)) == Set(written.keys))
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aFailedSaveIsNeverAnnounced(store: StoreKind) async throws {
        try await withTimeout(seconds: deadlockBound) {
            try await withContainer(store) { container in
                let stream = container.changes
                let main = container.mainContext
                main.insert(Self.tags[0])
                try main.save()

                let failing = container.newBackgroundContext()
                failing.insert(Tag(name: Self.tags[0].name))
                #expect(throws: GraphStoreError.self) { try failing.save() }
                let dangling = container.newBackgroundContext()
                dangling.insert(Note(text: "x", createdAt: Fixtures.epoch, tagIDs: [UUID()]))
                #expect(throws: GraphStoreError.self) { try dangling.save() }
                try container.checkInvariants()
                #expect(container.version == 1)

                try main.save()                 // nothing to save: no commit, no change
                main.insert(Self.tags[1])
                try main.save()
                try container.checkInvariants()

                try await container.close()
                let received = await Self.collect(stream)
                #expect(received.map(\.version) == [1, 2])
                #expect(received.map { $0.insertedIDs(ExampleModel.Tag.self) } == [[Self.tags[0].id], [Self.tags[1].id]])
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func everyStreamEndsOnCloseAndSavesThenThrow(store: StoreKind) async throws {
        try await withTimeout(seconds: deadlockBound) {
            try await withContainer(store) { container in
                let first = container.changes, second = container.changes
                container.mainContext.insert(Self.tags[0])
                try container.mainContext.save()
                try await container.close()

                let fromFirst = await Self.collect(first), fromSecond = await Self.collect(second)
                #expect(fromFirst.map(\.version) == [1])
                #expect(fromSecond.map(\.version) == [1])
                #expect(await Self.collect(container.changes).isEmpty)

                let context = container.newBackgroundContext()
                let ran = Guarded(false)
                context.insert(Self.tags[1])
                context.onCommit { ran.withLock { $0 = true } }
                #expect(throws: GraphStoreError.containerClosed) { try context.save() }
                #expect(throws: GraphStoreError.containerClosed) {
                    container.mainContext.delete(Self.tags[0])
                    try container.mainContext.save()
                }
                try container.checkInvariants()
                #expect(!ran.value)
                #expect(container.version == 1)
                #expect(container.count(of: ExampleModel.Tag.self) == 1)
            }
        }
    }
}
