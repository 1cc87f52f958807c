import ExampleModel
import Foundation
import GraphStoreCoding
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// A binary property list shares values by reference, so a small file can expand without end
/// (a reference bomb). Opening and generic reading count what the values take as they read
/// them, against ``SnapshotOptions/maxDecompressedBytes``: a file within the limit opens with
/// its shared values intact, one past it is refused with the limit's error and left untouched.
@Suite struct PropertyListExpansionTests {
    /// More posts than the decoder splits between two threads, so both threads' budgets count.
    static let postCount = 2_100
    static let bodyBytes = 16_384

    /// A gzip'd property-list snapshot of ``postCount`` posts with distinct ids, whose bodies are
    /// one string of ``bodyBytes`` bytes that the file holds once: about 34 MB expanded from a
    /// document a few hundred kilobytes long (so more than 32 times the document). Made from a store GraphStore wrote, rewritten by a
    /// writer that shares every equal value.
    static func sharedBodySnapshot(at url: URL) async throws -> (file: Data, body: String) {
        let container = try GraphContainer(for: exampleModel, store: .file(url, format: .binaryPropertyList, durability: .coalesced))
        let tag = ExampleModel.Tag(name: "swift")
        container.mainContext.insert(tag)
        container.mainContext.insert(contentsOf: Fixtures.posts(1, tags: [tag.id]))
        try container.mainContext.save()
        try await container.close()
        // A good previous snapshot beside it, which recovery would open instead of a damaged file.
        let previous = URL(fileURLWithPath: url.path + ".previous")
        try? FileManager.default.removeItem(at: previous)
        try FileManager.default.copyItem(at: url, to: previous)

        guard case .object(var root) = try SnapshotValue.readPropertyList(try Gzip.decompress(try Data(contentsOf: url), maxOutputBytes: 1 << 30)),
              case .object(var header)? = root["header"], case .object(var counts)? = header["counts"],
              case .object(var entities)? = root["entities"], case .array(let posts)? = entities["Post"], case .object(let template)? = posts.first
        else {
            Issue.record("the snapshot GraphStore wrote does not have the expected shape")
            return (Data(), "")
        }
        let body = String(repeating: "shared body. ", count: bodyBytes / 13 + 1).prefix(bodyBytes)
        entities["Post"] = .array((1...postCount).map { id in
            var post = template
            post["id"] = .integer(Int64(id))
            post["body"] = .string(String(body))
            return .object(post)
        })
        counts["Post"] = .integer(Int64(postCount))
        header["counts"] = .object(counts)
        root["header"] = .object(header)
        root["entities"] = .object(entities)
        let document = SharingPropertyListWriter.write(.object(root))
        #expect(document.count < 1 << 20, "the document is small; only its shared values expand")
        let file = try Gzip.compress(document)
        try file.write(to: url)
        return (file, String(body))
    }

    @Test func sharedValuesPastTheLimitAreRefusedAndTheFileIsKept() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("posts.plist.gz")
        let (file, _) = try await Self.sharedBodySnapshot(at: url)
        let limit = 4 << 20

        // Not damage: even with recovery asked for, nothing is copied aside, and the good
        // previous snapshot is not opened instead.
        for recover in [false, true] {
            #expect {
                _ = try GraphContainer(
                    for: exampleModel, store: .file(url, options: SnapshotOptions(maxDecompressedBytes: limit, recoverFromPreviousSnapshot: recover)))
            } throws: { error in
                guard case GraphStoreError.decompressedSizeLimitExceeded(let path, let found)? = error as? GraphStoreError else { return false }
                return path == url.path && found == limit
            }
        }
        #expect(try Data(contentsOf: url) == file, "a refused file is left as it was")
        #expect(try directory.entries().allSatisfy { !$0.contains("damaged") })

        // Generic reading (`verify`, `convert`, `migrate`, model migrations) refuses it alike.
        #expect {
            _ = try GenericSnapshot.read(from: url, maxDecompressedBytes: limit)
        } throws: { error in
            guard case GraphStoreError.decompressedSizeLimitExceeded(let path, let found)? = error as? GraphStoreError else { return false }
            return path == url.path && found == limit
        }
    }

    @Test func sharedValuesWithinTheLimitOpenIntact() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("posts.plist.gz")
        let (_, body) = try await Self.sharedBodySnapshot(at: url)
        let options = SnapshotOptions(maxDecompressedBytes: 64 << 20)

        let container = try GraphContainer(for: exampleModel, store: .file(url, options: options))
        let posts = try container.mainContext.fetch(FetchDescriptor<Post>())
        #expect(posts.count == Self.postCount)
        #expect(posts.allSatisfy { $0.body == body })
        #expect(Set(posts.map(\.id)) == Set((1...Int64(Self.postCount))))
        try await container.close()

        let generic = try GenericSnapshot.read(from: url, maxDecompressedBytes: 64 << 20)
        let stored = generic.entities.first { $0.name == "Post" }?.objects ?? []
        #expect(stored.count == Self.postCount)
        #expect(stored.allSatisfy { if case .object(let fields) = $0 { fields["body"] == .string(body) } else { false } })
    }

    /// The generic reader counts a string's bytes, not only elements: a million references to
    /// one string are as many elements as the file holds, but not as many bytes.
    @Test func genericReadingCountsTheBytesOfSharedStrings() throws {
        let long = SnapshotValue.string(String(repeating: "x", count: 1 << 16))
        let document = SharingPropertyListWriter.write(.array(Array(repeating: long, count: 1_000)))
        #expect(document.count < (1 << 16) + (8 << 10), "the string once, and a thousand references")
        #expect(throws: BPlistExpansionExceeded.self) {
            _ = try SnapshotValue.readPropertyList(document, expansionLimit: 16 << 20)
        }
        guard case .array(let values) = try SnapshotValue.readPropertyList(document, expansionLimit: 128 << 20) else {
            Issue.record("not an array")
            return
        }
        #expect(values.count == 1_000 && values.allSatisfy { $0 == long })
    }

    /// Keys are values too: a thousand dictionaries sharing one 64 KiB key.
    @Test func sharedKeysCount() throws {
        let key = String(repeating: "k", count: 1 << 16)
        let document = SharingPropertyListWriter.write(.array((0..<1_000).map { .object([key: .integer(Int64($0))]) }))
        #expect(document.count < (1 << 16) + (64 << 10), "the key once, and a thousand small dictionaries")
        #expect(throws: BPlistExpansionExceeded.self) {
            _ = try SnapshotValue.readPropertyList(document, expansionLimit: 16 << 20)
        }
        let expansion = BPlistExpansion(limit: 16 << 20)
        #expect(throws: (any Error).self) {
            _ = try BPlistDecoder.decode([[String: Int]].self, from: document, expansion: expansion)
        }
        #expect(expansion.isExhausted)
        let decoded = try BPlistDecoder.decode([[String: Int]].self, from: document, expansion: BPlistExpansion(limit: 128 << 20))
        #expect(decoded.count == 1_000 && decoded.allSatisfy { $0.keys.first == key })
    }

    struct Cell: Decodable, Equatable {
        var text: String
    }

    /// An array long enough to be decoded half on another thread, shared twenty times, whose
    /// long strings are all in the half the other thread decodes: the threads count into one
    /// total, so the decoding is refused as on one thread.
    @Test(arguments: [false, true])
    func threadsShareOneBudget(parallel: Bool) throws {
        // Long strings in the second half only, which the other thread decodes.
        let short = SnapshotValue.object(["text": .string("c")])
        let long = SnapshotValue.object(["text": .string(String(repeating: "c", count: 16 << 10))])
        let shared = SnapshotValue.array(Array(repeating: short, count: 1_024) + Array(repeating: long, count: 1_024))
        let document = SharingPropertyListWriter.write(.array(Array(repeating: shared, count: 20)))
        #expect(document.count < 64 << 10)
        let expansion = BPlistExpansion(limit: 32 << 20)
        #expect(throws: (any Error).self) {
            _ = try BPlistDecoder.decode([[Cell]].self, from: document, parallel: parallel, expansion: expansion)
        }
        #expect(expansion.isExhausted)
    }

    /// A file GraphStore wrote opens with the limit set to its own size: the budget allows for
    /// what values take in memory beyond their bytes in the file.
    @Test func aStoresOwnFileOpensAtItsOwnSize() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("posts.plist")
        let container = try GraphContainer(for: exampleModel, store: .file(url, format: .binaryPropertyList, compression: .none, durability: .coalesced))
        let tag = ExampleModel.Tag(name: "swift")
        container.mainContext.insert(tag)
        container.mainContext.insert(contentsOf: Fixtures.posts(2_000, tags: [tag.id]))
        try container.mainContext.save()
        try await container.close()
        let size = try Data(contentsOf: url).count

        let reopened = try GraphContainer(for: exampleModel, store: .file(url, options: SnapshotOptions(maxDecompressedBytes: size)))
        #expect(try reopened.mainContext.fetchCount(FetchDescriptor<Post>()) == 2_000)
        try await reopened.close()
        #expect(try GenericSnapshot.read(from: url, maxDecompressedBytes: size).entities.first { $0.name == "Post" }?.objects.count == 2_000)
    }

    /// An entity name of 1 MiB held 64 times by the entities dictionary, in place of the posts
    /// the header counts: the open is refused for the limit, not as a damaged file (whose
    /// recovery would open the previous snapshot), though the names dropped past the budget
    /// leave the posts missing.
    @Test func aBombInTheEntityNamesIsRefusedForTheLimit() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("posts.plist.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(url, format: .binaryPropertyList, durability: .coalesced))
        container.mainContext.insert(contentsOf: Fixtures.posts(3))
        try container.mainContext.save()
        try await container.close()
        guard case .object(var root) = try SnapshotValue.readPropertyList(try Gzip.decompress(try Data(contentsOf: url), maxOutputBytes: 1 << 30)),
              case .object(var entities)? = root["entities"] else {
            Issue.record("not a snapshot")
            return
        }
        let name = String(repeating: "k", count: 1 << 20)
        entities = [name: .array([])]
        root["entities"] = .object(entities)
        let document = SharingPropertyListWriter.write(.object(root), repeating: name, times: 64)
        #expect(document.count < 2 << 20)
        try Gzip.compress(document).write(to: url)

        #expect {
            _ = try GraphContainer(for: exampleModel, store: .file(url, options: SnapshotOptions(maxDecompressedBytes: 4 << 20)))
        } throws: { error in
            guard case GraphStoreError.decompressedSizeLimitExceeded(let path, _)? = error as? GraphStoreError else { return false }
            return path == url.path
        }
    }

    /// Each tag holds a field the app does not know (`yyOther`) and one whose key object is
    /// damaged (`zzExtra`, its marker byte made unknown). The app's decoding passes over both;
    /// the survey of stored fields must still see `yyOther`, so that the file is read
    /// generically, which finds the damage, instead of opening and dropping `yyOther` at the
    /// next save.
    @Test func aDamagedKeyDoesNotHideAnUnknownField() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("tags.plist")
        let container = try GraphContainer(for: exampleModel, store: .file(url, format: .binaryPropertyList, compression: .none, durability: .coalesced))
        container.mainContext.insert(contentsOf: Fixtures.tagNames.map { ExampleModel.Tag(name: $0) })
        try container.mainContext.save()
        try await container.close()
        guard case .object(var root) = try SnapshotValue.readPropertyList(try Data(contentsOf: url)),
              case .object(var entities)? = root["entities"], case .array(let tags)? = entities["Tag"] else {
            Issue.record("not a snapshot")
            return
        }
        entities["Tag"] = .array(tags.map { tag in
            guard case .object(var fields) = tag else { return tag }
            fields["yyOther"] = .string("kept only if the file is refused")
            fields["zzExtra"] = .integer(1)
            return .object(fields)
        })
        root["entities"] = .object(entities)
        var bytes = [UInt8](SharingPropertyListWriter.write(.object(root)))
        // The key object "zzExtra" (marker 0x57, seven ASCII bytes): an unknown marker instead.
        let key = [UInt8(0x57)] + Array("zzExtra".utf8)
        let start = try #require((0...(bytes.count - key.count)).first { Array(bytes[$0..<($0 + key.count)]) == key })
        bytes[start] = 0x70
        try Data(bytes).write(to: url)

        await #expect(throws: GraphStoreError.self) {
            let opened = try GraphContainer(for: exampleModel, store: .file(url, options: SnapshotOptions()))
            try await opened.close()
        }
    }
}
