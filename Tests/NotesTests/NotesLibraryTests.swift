import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import NotesCore
import Synchronization
import Testing

private typealias Tag = ExampleModel.Tag

@Suite struct NotesLibraryTests {
    @Test func concurrentTagRequestsCreateOneTagEach() async throws {
        let container = try Fixtures.inMemoryContainer()
        let authority = TagAuthority(container: container)
        let names = (0..<10).map { "tag\($0)" }
        let results = try await withThrowingTaskGroup(of: (String, Tag.ID).self) { group in
            for _ in 0..<16 {
                for name in names.shuffled() {
                    group.addTask { (name, try authority.tag(named: name).id) }
                }
            }
            var results: [(String, Tag.ID)] = []
            for try await result in group { results.append(result) }
            return results
        }
        let tags = try container.mainContext.fetch(FetchDescriptor<Tag>())
        #expect(tags.count == names.count)
        // Every caller got the surviving tag, whichever task created it.
        let ids = Dictionary(uniqueKeysWithValues: tags.map { ($0.name, $0.id) })
        #expect(results.count == 160)
        #expect(results.allSatisfy { ids[$0.0] == $0.1 })
        #expect(try authority.existingTag(named: "tag3")?.id == ids["tag3"])
        #expect(try authority.existingTag(named: "missing") == nil)
        try container.checkInvariants()
    }

    @Test func commandsEndToEndAgainstAStoreFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("notes.json.gz")
        let base = Fixtures.epoch
        do {
            let container = try GraphContainer(for: exampleModel, store: .file(url))
            let library = NotesLibrary(container: container)
            try library.add("Buy oat milk", tags: ["errands"], at: base)
            let idea = try library.add("GraphStore idea: coalesce writes", tags: ["ideas", "swift"], at: base.addingTimeInterval(60))
            try library.add("Call the plumber", at: base.addingTimeInterval(120))
            try library.tag(String(idea.id.uuidString.prefix(8)), with: "errands")
            let plumber = try library.search(["PLUMBER"])
            #expect(plumber.map(\.text) == ["Call the plumber"])
            try library.archive(String(plumber[0].id.uuidString.prefix(6)))
            try await container.close()
        }
        // A new container on the same file: everything survived.
        let container = try GraphContainer(for: exampleModel, store: .file(url))
        let library = NotesLibrary(container: container)
        #expect(try library.list().map(\.text) == ["GraphStore idea: coalesce writes", "Buy oat milk"])
        #expect(try library.list(archived: true).map(\.text) == ["Call the plumber"])
        #expect(try library.list(tag: "errands").map(\.text) == ["GraphStore idea: coalesce writes", "Buy oat milk"])
        #expect(try library.tagCounts().map(\.name) == ["errands", "ideas", "swift"])
        #expect(try library.tagCounts().map(\.count) == [2, 1, 1])
        let idea = try library.search(["coalesce", "idea"])
        #expect(idea.count == 1)
        #expect(library.tagNames(of: idea[0]) == ["ideas", "swift", "errands"])
        #expect(throws: NotesLibrary.Problem.self) { try library.list(tag: "nope") }
        #expect(throws: NotesLibrary.Problem.self) { try library.archive("zzzz") }
        try container.checkInvariants()
        try await container.close()
    }
}
