import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// Snapshot documents read through the fast JSON decoder: every object back, and refusals
/// that name the file, the entity and the object's index, including objects read on the
/// second thread.
@Suite struct FastJSONSnapshotTests {
    static let schema = Schema(exampleModel)
    static let path = "/snapshots/fast-json-test.json"

    struct Graph {
        var posts: [Post]
        var notes: [Note]
        var tags: [ExampleModel.Tag]
    }

    static func graph(posts count: Int) -> Graph {
        let tags = Fixtures.tagNames.map { ExampleModel.Tag(name: $0) }
        let notes = (0..<30).map { Note(text: "note \($0) — ünïcödé ✓ \"quoted\" \\ /", createdAt: Fixtures.epoch.addingTimeInterval(Double($0) / 3), tagIDs: tags.map(\.id)) }
        return Graph(posts: Fixtures.posts(count, tags: tags.map(\.id)), notes: notes, tags: tags)
    }

    /// The JSON document a snapshot of `graph` holds.
    static func document(_ graph: Graph) throws -> Data {
        let objects: [[any Entity]] = schema.entities.map { entity in
            switch entity.name {
            case "Post": graph.posts
            case "Note": graph.notes
            default: graph.tags
            }
        }
        let version = try GraphVersion.loaded(objects, number: 7, schema: schema)
        return try SnapshotCodec.encode(version, schema: schema, format: .json, modelVersion: "1", savedAt: Fixtures.epoch, path: path)
    }

    static func objects<E: Entity>(_ type: E.Type, in version: GraphVersion) -> [E] {
        version.tables[schema.index(of: type)].values.map { $0.value as! E }
    }

    /// The document with `edit` applied to the array of `entity`.
    static func edited(_ document: Data, _ entity: String, _ edit: (inout [[String: Any]]) -> Void) throws -> Data {
        var tree = try #require(try JSONSerialization.jsonObject(with: document) as? [String: Any])
        var entities = try #require(tree["entities"] as? [String: Any])
        var objects = try #require(entities[entity] as? [[String: Any]])
        edit(&objects)
        entities[entity] = objects
        tree["entities"] = entities
        return try JSONSerialization.data(withJSONObject: tree)
    }

    static func refusal(_ document: Data) -> GraphStoreError? {
        do {
            _ = try SnapshotCodec.decode(document, schema: schema, path: path)
            return nil
        } catch {
            return error as? GraphStoreError
        }
    }

    @Test func everyObjectComesBackExactly() throws {
        // Enough posts for the second half to be read on another thread.
        let graph = Self.graph(posts: ArraySpeculation.minimumElements * 2 + 3)
        let (header, version) = try SnapshotCodec.decode(try Self.document(graph), schema: Self.schema, path: Self.path)
        #expect(header.storeVersion == 7 && header.counts["Post"] == graph.posts.count)
        #expect(version.number == 7)
        #expect(Set(Self.objects(Post.self, in: version)) == Set(graph.posts))
        #expect(Set(Self.objects(Note.self, in: version)) == Set(graph.notes))
        #expect(Set(Self.objects(ExampleModel.Tag.self, in: version)) == Set(graph.tags))
    }

    /// A value of the wrong type is `codingFailed` naming the object's index in the file, in
    /// either half of a large array; with two, the first one in the file.
    @Test func wrongValuesNameTheObject() throws {
        let count = ArraySpeculation.minimumElements * 2 + 3
        let document = try Self.document(Self.graph(posts: count))
        for indexes in [[count - 1], [count / 2], [5], [count - 2, 7]] {
            let damaged = try Self.edited(document, "Post") { posts in
                for index in indexes { posts[index]["summary"] = 42 }
            }
            guard case .codingFailed(let path, let entity, let id, let reason) = Self.refusal(damaged) else {
                Issue.record("\(indexes): \(String(describing: Self.refusal(damaged)))")
                continue
            }
            #expect(path == Self.path && entity == "Post")
            #expect(id == "#\(indexes.min()!) in the file")
            // Then the hint naming the migration step that would convert the value.
            #expect(reason.hasPrefix("Expected to decode String but found number instead. (at entities.Post[\(indexes.min()!)].summary) ("))
            #expect(reason.contains(".transform(\"Post\")"))
        }
    }

    /// A number too large for its field names the object (`JSONDecoder` called the whole file
    /// "not valid JSON").
    @Test func numbersThatDoNotFitNameTheObject() throws {
        let document = try Self.document(Self.graph(posts: 10))
        let damaged = try Self.edited(document, "Post") { posts in posts[3]["noteCount"] = 1e30 }
        guard case .codingFailed(_, let entity, let id, let reason) = Self.refusal(damaged) else {
            Issue.record("\(String(describing: Self.refusal(damaged)))")
            return
        }
        #expect(entity == "Post" && id == "#3 in the file")
        #expect(reason.hasPrefix("Parsed JSON number <1e+30> does not fit in Int.") || reason.hasPrefix("Parsed JSON number <1e30> does not fit in Int."), "\(reason)")
        #expect(reason.hasSuffix("(at entities.Post[3].noteCount)"))
    }

    /// Truncated or garbled JSON is a damaged file, with the byte where reading stopped.
    @Test func invalidJSONIsADamagedFileWithTheOffset() throws {
        let document = try Self.document(Self.graph(posts: 3))
        for cut in [1, 2, document.count / 2, document.count - 1] {
            guard case .damagedFile(let path, _, let reason) = Self.refusal(document.prefix(cut)) else {
                Issue.record("cut at \(cut): \(String(describing: Self.refusal(document.prefix(cut))))")
                continue
            }
            #expect(path == Self.path)
            #expect(reason.hasPrefix("not a readable JSON snapshot: The given data was not valid JSON. (invalid JSON at byte "), "\(reason)")
        }
        // A byte from the middle on that is not part of an escape sequence (`\"`, `\u00e9`):
        // garbling one of those is reported where the escape starts.
        let bytes = Array(document)
        let position = try #require((bytes.count / 2..<bytes.count).first { index in !bytes[(index - 6)..<index].contains(0x5C) })
        var garbled = document
        garbled[position] = 0x01
        guard case .damagedFile(_, _, let reason) = Self.refusal(garbled) else {
            Issue.record("\(String(describing: Self.refusal(garbled)))")
            return
        }
        #expect(reason.contains("at byte \(position):"), "\(reason)")
    }

    @Test func headerProblemsAreRefusedAsBefore() throws {
        let document = try Self.document(Self.graph(posts: 3))
        var tree = try #require(try JSONSerialization.jsonObject(with: document) as? [String: Any])
        var header = try #require(tree["header"] as? [String: Any])
        header["savedAt"] = "yesterday"
        tree["header"] = header
        let refusal = Self.refusal(try JSONSerialization.data(withJSONObject: tree))
        guard case .damagedFile(let path, _, let reason) = refusal else {
            Issue.record("savedAt")
            return
        }
        #expect(reason == "not a readable JSON snapshot at header.savedAt: Expected to decode Double but found a string instead.")
        // The message ends the reason's sentence once, not twice.
        #expect(refusal?.description == "The store file \(path) is damaged: not a readable JSON snapshot at header.savedAt: Expected to decode Double but found a string instead. The file was left untouched.")
        header["savedAt"] = 1.5
        header["formatVersion"] = 2
        tree["header"] = header
        guard case .unsupportedFormatVersion(_, let found, _) = Self.refusal(try JSONSerialization.data(withJSONObject: tree)) else {
            Issue.record("formatVersion")
            return
        }
        #expect(found == 2)
    }
}
