import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// Sixteen tasks race to create notes tagged with the same fifty tag names, each creating its
/// own `Tag` values: the unique name is the authority, so the store ends with one tag per name.
@Suite struct TagAuthorityTests {
    static let tagNames = (0..<50).map { "tag-\($0)" }
    static let racers = 16
    static let notesPerRacer = 6

    /// What one racer tried to commit: its tags, and each note's intended tag names in order.
    struct Attempt: Sendable {
        let tagIDs: Set<UUID>
        let notes: [UUID: [String]]
        let error: GraphStoreError?
    }

    /// Runs the race under `policy`, each racer in its own background context on its own queue.
    static func race(_ container: GraphContainer, policy: MergePolicy) async throws -> [Attempt] {
        try await withThrowingTaskGroup(of: Attempt.self) { group in
            for racer in 0..<racers {
                group.addTask {
                    try await container.performBackgroundTask { context in
                        context.name = "racer \(racer)"
                        context.mergePolicy = policy
                        let tags = tagNames.map { Tag(name: $0) }
                        for tag in tags { context.insert(tag) }
                        var notes: [UUID: [String]] = [:]
                        for n in 0..<notesPerRacer {
                            let indexes = Array(Set((0..<4).map { (racer * 7 + n * 11 + $0 * 13) % tagNames.count })).sorted()
                            let note = Note(text: "racer \(racer) note \(n)", createdAt: Fixtures.epoch, tagIDs: indexes.map { tags[$0].id })
                            context.insert(note)
                            notes[note.id] = indexes.map { tagNames[$0] }
                        }
                        do {
                            try context.save()
                            return Attempt(tagIDs: Set(tags.map(\.id)), notes: notes, error: nil)
                        } catch let error as GraphStoreError {
                            context.rollback()
                            return Attempt(tagIDs: Set(tags.map(\.id)), notes: notes, error: error)
                        }
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// Every stored note references existing tags, with the names it meant.
    static func checkNotes(_ container: GraphContainer, expected: [UUID: [String]]) throws {
        let reader = container.newBackgroundContext()
        let tags = try reader.fetch(FetchDescriptor<ExampleModel.Tag>())
        #expect(tags.count == tagNames.count)
        #expect(Set(tags.map(\.name)) == Set(tagNames))
        let names = Dictionary(uniqueKeysWithValues: tags.map { ($0.id, $0.name) })
        let notes = try reader.fetch(FetchDescriptor<Note>())
        #expect(Set(notes.map(\.id)) == Set(expected.keys))
        #expect(notes.allSatisfy { note in note.tagIDs.map { names[$0] } == expected[note.id] })
    }

    /// Serialized, as is the next test: every case runs sixteen racers on their own queues, and
    /// all the stores' cases at once would starve every other suite on a small machine.
    @Test(.serialized, arguments: StoreKind.allCases, [MergePolicy.contextWins, .storeWins])
    func mergingPoliciesEndWithOneTagPerName(store: StoreKind, policy: MergePolicy) async throws {
        try await withTimeout(seconds: deadlockBound) {
            try await withContainer(store) { container in
                let attempts = try await Self.race(container, policy: policy)
                try container.checkInvariants()
                #expect(attempts.count == Self.racers)
                #expect(attempts.allSatisfy { $0.error == nil })
                #expect(container.count(of: Note.self) == Self.racers * Self.notesPerRacer)
                try Self.checkNotes(container, expected: attempts.reduce(into: [:]) { $0.merge($1.notes) { a, _ in a } })
                // The surviving tags are those of exactly one racer: the first to commit.
                let tagIDs = Set(try container.mainContext.fetchIdentifiers(FetchDescriptor<ExampleModel.Tag>()))
                #expect(attempts.filter { $0.tagIDs == tagIDs }.count == 1)
                #expect(container.version == UInt64(Self.racers))
            }
        }
    }

    @Test(.serialized, arguments: StoreKind.allCases)
    func errorPolicyLetsOneRacerWinAndTheOthersCommitNothing(store: StoreKind) async throws {
        try await withTimeout(seconds: deadlockBound) {
            try await withContainer(store) { container in
                let attempts = try await Self.race(container, policy: .error)
                try container.checkInvariants()
                let winners = attempts.filter { $0.error == nil }
                let losers = attempts.filter { $0.error != nil }
                #expect(winners.count == 1)
                #expect(losers.count == Self.racers - 1)
                let winner = try #require(winners.first)
                for loser in losers {
                    guard case let .uniqueConstraintViolation(entity, constraint, value, existingID, incomingID) = loser.error else {
                        Issue.record("expected uniqueConstraintViolation, got \(String(describing: loser.error))")
                        continue
                    }
                    #expect(entity == "Tag" && constraint == "name")
                    #expect(Self.tagNames.contains(value))
                    #expect(winner.tagIDs.map(\.uuidString).contains(existingID))
                    #expect(loser.tagIDs.map(\.uuidString).contains(incomingID))
                }
                #expect(container.version == 1)
                #expect(container.count(of: Note.self) == Self.notesPerRacer)
                try Self.checkNotes(container, expected: winner.notes)
                let tagIDs = Set(try container.mainContext.fetchIdentifiers(FetchDescriptor<ExampleModel.Tag>()))
                #expect(tagIDs == winner.tagIDs)
            }
        }
    }
}
