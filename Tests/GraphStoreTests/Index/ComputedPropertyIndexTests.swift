import Foundation
import Testing

@testable import GraphStore

/// An index on a computed property has no offset in the entity's layout: its values are read
/// through the key path, and the index must still follow them as the stored values change.
@Suite struct ComputedPropertyIndexTests {
    struct Word: Entity, Equatable {
        var id: Int
        var text: String
        var length: Int { text.count }

        static var indexes: [EntityIndex<Word>] { [EntityIndex(\.length), EntityIndex(\.length, \.text)] }
    }

    /// The words sorted by length, then id: the order the `length` index holds.
    static func byLength(_ words: [Word]) -> [Word] {
        words.sorted { ($0.length, $0.id) < ($1.length, $1.id) }
    }

    @Test func anIndexOnAComputedPropertyFollowsItsValues() throws {
        let container = try GraphContainer(for: [Word.self], store: .inMemory)
        let context = container.mainContext
        var words = ["ab", "abcd", "a", "abc", "", "abcde", "xy"].enumerated().map { Word(id: $0.offset, text: $0.element) }
        for word in words { context.insert(word) }
        try context.save()
        let shortest = FetchDescriptor<Word>(sortBy: [SortDescriptor(\.length), SortDescriptor(\.id)], fetchLimit: 3)
        #expect(try context.fetch(shortest) == Array(Self.byLength(words).prefix(3)))

        // A changed text moves the word in both indexes.
        words[4].text = "longest of all"
        words[2].text = "abcdef"
        context.insert(words[4])
        context.insert(words[2])
        try context.save()
        #expect(try context.fetch(shortest) == Array(Self.byLength(words).prefix(3)))
        let two = 2
        let ofLengthTwo = FetchDescriptor<Word>(predicate: #Predicate { $0.length == two }, sortBy: [SortDescriptor(\.id)])
        #expect(try context.fetch(ofLengthTwo).map(\.id) == words.filter { $0.length == 2 }.map(\.id))
        #expect(try context.fetchCount(ofLengthTwo) == 2)

        let version = container.core.currentVersion
        #expect(version.sorted[0][0].entries.map(\.id) == Self.byLength(words).map { ObjectKey($0.id) })
        try container.checkInvariants()
    }
}
