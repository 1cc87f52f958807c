import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// Snapshot documents written with `FastJSONEncoder`: the document `JSONEncoder` writes, also
/// for tables encoded in parts on several threads; errors naming the first object that fails
/// with its index; and the fallback to `JSONEncoder` for what this encoder refuses.
@Suite struct FastJSONSnapshotEncodingTests {
    typealias Kit = FastJSONEncoderTestKit
    static let path = "/snapshots/fast-json-encoding-test.json"

    static func encode(_ version: GraphVersion, schema: Schema) throws -> Data {
        try SnapshotCodec.encode(version, schema: schema, format: .json, modelVersion: "1", savedAt: Fixtures.epoch, path: path)
    }

    @Test(arguments: [3, SnapshotCodec.parallelEncodingThreshold * 2 + 17])
    func documentsAreWhatJSONEncoderWrites(postCount: Int) throws {
        let schema = Schema(exampleModel)
        let tags = Fixtures.tagNames.map { ExampleModel.Tag(name: $0) }
        let notes = (0..<40).map { Note(text: "note \($0) \u{1} / é", createdAt: Fixtures.epoch.addingTimeInterval(Double($0) / 7), tagIDs: [tags[$0 % tags.count].id]) }
        let objects: [[any Entity]] = schema.entities.map { entity in
            switch entity.name {
            case "Post": Fixtures.posts(postCount, tags: tags.map(\.id))
            case "Note": notes
            default: tags
            }
        }
        let version = try GraphVersion.loaded(objects, number: 3, schema: schema)
        let document = try Self.encode(version, schema: schema)
        let (header, read) = try SnapshotCodec.decode(document, schema: schema, path: Self.path)
        let reference = try SnapshotCodec.makeJSONEncoder().encode(EncodableDocument(header: header, version: version, schema: schema))
        #expect(try Kit.sortedText(document) == Kit.sortedText(reference))
        // Objects in table order, also across the parts.
        let tree = try #require(try JSONSerialization.jsonObject(with: document) as? [String: Any])
        let posts = try #require((tree["entities"] as? [String: Any])?["Post"] as? [[String: Any]])
        let postTable = version.tables[schema.index(of: Post.self)]
        #expect(posts.map { ($0["id"] as? NSNumber)?.int64Value } == postTable.values.map { ($0.value as! Post).id })
        #expect(read.tables[schema.index(of: Post.self)].count == postCount)
        // Members in the order the types encode them.
        #expect(String(decoding: document.prefix(40), as: UTF8.self).hasPrefix(#"{"header":{"format":"GraphStore","#))
        // Deflated by the encoding threads a chunk at a time, the same text, byte for byte
        // from the entities on (the header's dictionaries come out in hash order).
        let segments = try SnapshotCodec.encodeSegments(
            version, schema: schema, format: .json, modelVersion: "1", savedAt: Fixtures.epoch, path: Self.path, deflateLevel: 1)
        #expect(segments.contains { if case .deflated = $0 { true } else { false } } == (postCount >= SnapshotCodec.parallelEncodingThreshold && Processors.active > 1))
        let joined = try Gzip.decompress(try Gzip.compress(segments: segments, level: 1, parts: 2), maxOutputBytes: 1 << 30)
        let entities = Data(#","entities":"#.utf8)
        let start = try #require(joined.firstRange(of: entities)), documentStart = try #require(document.firstRange(of: entities))
        #expect(joined.count == document.count)
        #expect(joined[start.lowerBound...] == document[documentStart.lowerBound...])
    }

    // MARK: - Errors

    /// Refuses to encode when `fails`.
    struct Failing: Entity {
        var id: Int
        var fails: Bool

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            guard !fails else {
                throw EncodingError.invalidValue(id, EncodingError.Context(codingPath: container.codingPath + [CodingKeys.fails], debugDescription: "refused"))
            }
            try container.encode(fails, forKey: .fails)
        }
    }

    @Test(arguments: [10, SnapshotCodec.parallelEncodingThreshold * 3])
    func theFirstObjectThatFailsIsNamed(count: Int) throws {
        let schema = Schema([Failing.self])
        let failing: Set<Int> = [count / 3, count - 2]
        let objects: [any Entity] = (0..<count).map { Failing(id: $0, fails: failing.contains($0)) }
        let version = try GraphVersion.loaded([objects], number: 1, schema: schema)
        let order = version.tables[0].values.map { ($0.value as! Failing).id }
        let index = try #require(order.firstIndex { failing.contains($0) })
        let header = SnapshotHeaderV1(modelVersion: "1", savedAt: Fixtures.epoch, storeVersion: 1, counts: ["Failing": count])
        #expect(Kit.describe(try #require(throws: EncodingError.self) {
            try SnapshotCodec.encodeJSONDocument(header: header, version: version, schema: schema)
        }) == "invalidValue(Int) at [entities#-/Failing#-/Index \(index)#\(index)/fails#-]: refused")
        let error = try #require(throws: GraphStoreError.self) { try Self.encode(version, schema: schema) }
        guard case .codingFailed(let path, let entity, let id, let reason) = error else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(path == Self.path && entity == "Failing" && id == "#\(index)")
        #expect(reason == "refused (at entities.Failing[\(index)].fails)")
        // Encoded and deflated a chunk at a time, the same object is named.
        let deflating = try #require(throws: GraphStoreError.self) {
            try SnapshotCodec.encodeSegments(
                version, schema: schema, format: .json, modelVersion: "1", savedAt: Fixtures.epoch, path: Self.path, deflateLevel: 1)
        }
        #expect(deflating == error)
    }

    // MARK: - Fallback

    /// Writes a member through a nested container after writing one in its parent, which
    /// `FastJSONEncoder` refuses and `JSONEncoder` allows.
    struct LateNested: Entity, Equatable {
        struct Extra: Codable, Equatable { var value: Double }
        var id: UUID
        var extra: Extra

        enum CodingKeys: CodingKey { case id, extra }
        enum ExtraKeys: CodingKey { case value }

        init(id: UUID, extra: Extra) {
            self.id = id
            self.extra = extra
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(UUID.self, forKey: .id)
            extra = try container.decode(Extra.self, forKey: .extra)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            var nested = container.nestedContainer(keyedBy: ExtraKeys.self, forKey: .extra)
            try container.encode(id, forKey: .id)
            try nested.encode(extra.value, forKey: .value)
        }
    }

    @Test func whatTheEncoderRefusesIsWrittenByJSONEncoder() throws {
        let schema = Schema([LateNested.self])
        let objects = (0..<5).map { LateNested(id: UUID(), extra: .init(value: Double($0) / 3)) }
        #expect(throws: EncodingError.self) { try FastJSONEncoder.encode(objects[0]) }
        let version = try GraphVersion.loaded([objects], number: 1, schema: schema)
        let (_, read) = try SnapshotCodec.decode(try Self.encode(version, schema: schema), schema: schema, path: Self.path)
        let back = read.tables[0].values.map { $0.value as! LateNested }
        #expect(Set(back.map(\.id)) == Set(objects.map(\.id)))
        for object in objects { #expect(back.first { $0.id == object.id } == object) }
    }
}
