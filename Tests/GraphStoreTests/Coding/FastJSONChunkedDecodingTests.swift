import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// Parsing the entity arrays of a snapshot in chunks, each decoded on its own small tape: the
/// same objects in the same order whatever the chunk size, elements never split, the same
/// syntax errors at the same bytes, and anything wrong left to the whole-tape way.
@Suite struct FastJSONChunkedDecodingTests {
    struct Element: Decodable, Equatable {
        var x: Int
        var s: String?
        var list: [Int]?
    }

    struct Elements: Decodable, Equatable {
        var header: [String: Int]
        var entities: [String: [Element]]
    }

    static let text = #"""
        {"header":{"a":1},"other":[1,2,{"entities":[]}],"entities":{"A":[{"x":1,"s":"a,]}[\"x"},{"x":2,"list":[1,2,3]},{"x":3,"s":null},{"x":4,"s":"é\u00e9"},{"x":5}] , "B" : [] ,"C":[{"x":6,"list":[]}],"D\u0045":[{"x":7},{"x":8},{"x":9},{"x":10},{"x":11},{"x":12},{"x":13}]}}
        """#

    /// The chunks of `text`'s entity arrays at `tokensPerChunk`, each decoded as `[Element]`,
    /// and the outline.
    static func chunks(_ text: String, tokensPerChunk: Int, workers: Int) throws(FastJSONSyntaxError) -> (chunks: [(array: String, firstIndex: Int, result: [Element])], outline: FastJSONChunkedOutline) {
        try chunks(Array(text.utf8), tokensPerChunk: tokensPerChunk, workers: workers)
    }

    static func chunks(_ bytes: [UInt8], tokensPerChunk: Int, workers: Int) throws(FastJSONSyntaxError) -> (chunks: [(array: String, firstIndex: Int, result: [Element])], outline: FastJSONChunkedOutline) {
        let result: Result<FastJSONChunkedDecoder.Output<[Element]>, FastJSONSyntaxError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(FastJSONSyntaxError) {
                let output = try FastJSONChunkedDecoder.decode(buffer, member: "entities", tokensPerChunk: tokensPerChunk, workers: workers) { chunk -> [Element] in
                    let elements = try? chunk.withElements(userInfo: [:], path: []) { array -> [Element] in
                        var elements: [Element] = []
                        while !array.isAtEnd { elements.append(try array.decode(Element.self)) }
                        return elements
                    }
                    return elements ?? []
                }
                output.outline.document.takeOwnershipOfBytes()
                return .success(output)
            } catch {
                return .failure(error)
            }
        }
        let output = try result.get()
        return (output.chunks, output.outline)
    }

    @Test(arguments: [1, 2, 5, 9, 30, 10_000], [0, 1, 3])
    func chunksHoldWholeElementsInOrder(tokensPerChunk: Int, workers: Int) throws {
        let whole = try FastJSONDecoder.decode(Elements.self, from: Data(Self.text.utf8))
        let (chunks, outline) = try Self.chunks(Self.text, tokensPerChunk: tokensPerChunk, workers: workers)
        #expect(outline.arrayNames == ["A", "B", "C", "DE"])
        #expect(outline.chunkedObjects == 1)
        var joined: [String: [Element]] = [:]
        for chunk in chunks {
            // Contiguous, and no element split: each chunk starts where the previous ended.
            #expect(chunk.firstIndex == joined[chunk.array, default: []].count)
            #expect(!chunk.result.isEmpty)
            joined[chunk.array, default: []].append(contentsOf: chunk.result)
        }
        #expect(joined.filter { !$0.value.isEmpty } == whole.entities.filter { !$0.value.isEmpty })
        if tokensPerChunk == 1 {
            // One element per chunk: the chunk boundary falls after every element.
            #expect(chunks.count == whole.entities.values.map(\.count).reduce(0, +))
        }
        if tokensPerChunk == 10_000 { #expect(chunks.map(\.array) == ["A", "C", "DE"]) }
        // The outline keeps the header and each array's count, not its elements.
        struct Outline: Decodable {
            var header: [String: Int]
            var counts: [String: Int]
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: StringKey.self)
                header = try container.decode([String: Int].self, forKey: StringKey("header"))
                let entities = try container.nestedContainer(keyedBy: StringKey.self, forKey: StringKey("entities"))
                counts = try Dictionary(uniqueKeysWithValues: entities.allKeys.map { ($0.stringValue, try entities.nestedUnkeyedContainer(forKey: $0).count ?? -1) })
            }
        }
        let decoded = try outline.decode(Outline.self)
        #expect(decoded.header == ["a": 1])
        #expect(decoded.counts == ["A": 5, "B": 0, "C": 1, "DE": 7])
        #expect(outline.tokenCount < 30)
    }

    /// A syntax error in a later chunk is the whole parse's error, at the same byte.
    @Test(arguments: [1, 4, 10_000])
    func syntaxErrorsInLaterChunksNameTheSameByte(tokensPerChunk: Int) throws {
        var bytes = Array(Self.text.utf8)
        // The last digit of the last element's number, in the last chunk at any size.
        let position = try #require(bytes.lastIndex(of: UInt8(ascii: "3")))
        bytes[position] = UInt8(ascii: ";")
        let whole = FastJSONParserTests.rejection(bytes)
        #expect(whole != nil)
        do {
            _ = try Self.chunks(bytes, tokensPerChunk: tokensPerChunk, workers: 1)
            Issue.record("the damaged document parsed")
        } catch {
            #expect(error == whole)
            #expect(error.offset == position)
        }
        // Truncated anywhere: the same error as the whole parse.
        for cut in stride(from: 1, to: bytes.count, by: 7) {
            let prefix = Array(Self.text.utf8.prefix(cut))
            do {
                _ = try Self.chunks(prefix, tokensPerChunk: tokensPerChunk, workers: 1)
                Issue.record("a prefix of \(cut) bytes parsed")
            } catch {
                #expect(error == FastJSONParserTests.rejection(prefix), "cut at \(cut)")
            }
        }
    }

    // MARK: - Snapshots

    static let schema = FastJSONSnapshotTests.schema

    static func chunked(_ document: Data, tokensPerChunk: Int, workers: Int = 1) -> SnapshotCodec.ChunkedObjects? {
        SnapshotCodec.decodeJSONInChunks(
            document, context: DecodingContext(schema: schema, surveysMembers: true), survey: true, tokensPerChunk: tokensPerChunk, workers: workers)
    }

    /// Each entity's objects in stored order, and its member-name survey, from the document
    /// read generically.
    static func expected(_ document: Data) throws -> (ids: [String: [String]], names: [String: [MemberNames]]) {
        let tree = try #require(try JSONSerialization.jsonObject(with: document) as? [String: Any])
        let entities = try #require(tree["entities"] as? [String: [[String: Any]]])
        var ids: [String: [String]] = [:], names: [String: [MemberNames]] = [:]
        for (entity, objects) in entities {
            ids[entity] = objects.map { "\($0["id"]!)" }
            var seen: Set<Set<String>> = []
            for (index, object) in objects.enumerated() {
                let present = Set(object.filter { !($0.value is NSNull) }.keys)
                if seen.insert(present).inserted { names[entity, default: []].append(MemberNames(names: present, firstIndex: index)) }
            }
        }
        return (ids, names)
    }

    static func ids(_ objects: [any Entity]) -> [String] {
        objects.map { "\($0.id)" }
    }

    /// Elements straddling chunks of every size: the same objects in the same order, and the
    /// survey's first indexes counted in the whole array.
    @Test(arguments: [1, 17, 60, 333, 100_000], [0, 2])
    func snapshotObjectsAndSurveyAcrossChunks(tokensPerChunk: Int, workers: Int) throws {
        let plain = try FastJSONSnapshotTests.document(FastJSONSnapshotTests.graph(posts: 150))
        // Bodies null in some posts only, so that the survey finds several layouts.
        let document = try FastJSONSnapshotTests.edited(plain, "Post") { posts in
            for index in posts.indices { posts[index]["body"] = index % 7 == 3 || index > 140 ? NSNull() : "body \(index)" }
        }
        let expected = try Self.expected(document)
        let decoded = try #require(Self.chunked(document, tokensPerChunk: tokensPerChunk, workers: workers))
        #expect(decoded.header.storeVersion == 7)
        for entity in Self.schema.entities {
            #expect(Self.ids(decoded.objects[entity.index]) == expected.ids[entity.name] ?? [], "\(entity.name)")
            #expect(decoded.memberNames[entity.index] == expected.names[entity.name] ?? [], "\(entity.name)")
        }
        #expect(decoded.memberNames[Self.schema.index(of: Post.self)].count == 2)
        // Opening reads the same graph.
        let (_, version) = try SnapshotCodec.decode(document, schema: Self.schema, path: FastJSONSnapshotTests.path)
        #expect(Set(FastJSONSnapshotTests.objects(Post.self, in: version)) == Set(decoded.objects[Self.schema.index(of: Post.self)].map { $0 as! Post }))
    }

    /// Anything wrong in a later chunk leaves the document to the whole-tape way, which names
    /// the object or the byte as before.
    @Test func problemsInLaterChunksAreLeftToTheWholeTapeWay() throws {
        let document = try FastJSONSnapshotTests.document(FastJSONSnapshotTests.graph(posts: 120))
        let wrong = try FastJSONSnapshotTests.edited(document, "Post") { posts in posts[113]["summary"] = 42 }
        #expect(Self.chunked(wrong, tokensPerChunk: 50) == nil)
        guard case .codingFailed(_, let entity, let id, _) = FastJSONSnapshotTests.refusal(wrong) else {
            Issue.record("\(String(describing: FastJSONSnapshotTests.refusal(wrong)))")
            return
        }
        #expect(entity == "Post" && id == "#113 in the file")

        // A damaged byte near the end, far past the first chunk.
        var bytes = Array(document)
        let position = try #require((bytes.count - 200..<bytes.count).first { bytes[$0] == UInt8(ascii: ":") })
        bytes[position] = UInt8(ascii: ";")
        let damaged = Data(bytes)
        #expect(Self.chunked(damaged, tokensPerChunk: 50) == nil)
        guard case .damagedFile(_, _, let reason) = FastJSONSnapshotTests.refusal(damaged) else {
            Issue.record("\(String(describing: FastJSONSnapshotTests.refusal(damaged)))")
            return
        }
        #expect(reason.contains("at byte \(position):"), "\(reason)")

        // A count the header does not match.
        var tree = try #require(try JSONSerialization.jsonObject(with: document) as? [String: Any])
        var header = try #require(tree["header"] as? [String: Any])
        var counts = try #require(header["counts"] as? [String: Int])
        counts["Post"] = 119
        header["counts"] = counts
        tree["header"] = header
        let miscounted = try JSONSerialization.data(withJSONObject: tree)
        #expect(Self.chunked(miscounted, tokensPerChunk: 50) == nil)
        #expect(FastJSONSnapshotTests.refusal(miscounted) != nil)
    }

    /// The header written first is read before any object, so another model version stops
    /// the chunked way before it decodes anything.
    @Test func theLeadingHeaderIsReadOnItsOwn() throws {
        let document = try FastJSONSnapshotTests.document(FastJSONSnapshotTests.graph(posts: 3))
        let header = try #require(SnapshotCodec.leadingHeader(document))
        #expect(header.storeVersion == 7 && header.modelVersion == "1")
        let other = SnapshotCodec.decodeJSONInChunks(document, context: DecodingContext(schema: Self.schema, modelVersion: "2"), survey: false)
        #expect(other == nil)
        #expect(SnapshotCodec.leadingHeader(Data(#"{"entities":{},"header":{}}"#.utf8)) == nil)
    }
}

private struct StringKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
