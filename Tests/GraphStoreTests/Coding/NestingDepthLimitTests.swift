import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// The encoders write no deeper than the readers read (512 arrays and objects from a
/// document's root): a value nested as deep as a store can hold saves, closes and reopens in
/// either format, and one level deeper makes `save()` throw, commit nothing and leave the store
/// as it was, instead of saving a value that no later open could read.
@Suite struct NestingDepthLimitTests {
    /// A recursive value: each node one object deeper.
    final class Node: Codable, Sendable, Equatable {
        let child: Node?

        init(child: Node?) { self.child = child }

        static func == (lhs: Node, rhs: Node) -> Bool {
            var left: Node? = lhs, right: Node? = rhs
            while let l = left, let r = right {
                left = l.child
                right = r.child
            }
            return left == nil && right == nil
        }

        /// `count` nodes, each but the last holding the next.
        static func chain(_ count: Int) -> Node {
            var node = Node(child: nil)
            for _ in 1..<count { node = Node(child: node) }
            return node
        }

        /// How many nodes the chain from this one holds.
        var count: Int {
            var count = 1, node = self
            while let child = node.child {
                count += 1
                node = child
            }
            return count
        }
    }

    /// A recursive value with wrappers that nest nothing: each link is an object holding an
    /// array of optional links.
    final class Link: Codable, Sendable, Equatable {
        let next: [Link?]

        init(next: [Link?]) { self.next = next }

        static func == (lhs: Link, rhs: Link) -> Bool { lhs.count == rhs.count }

        static func chain(_ count: Int) -> Link {
            var link = Link(next: [])
            for _ in 1..<count { link = Link(next: [link]) }
            return link
        }

        var count: Int {
            var count = 1, link = self
            while let next = link.next.first ?? nil {
                count += 1
                link = next
            }
            return count
        }
    }

    struct Deep: Entity, Equatable {
        var id: Int
        var node: Node?
        var link: Link?
        static var entityName: String { "Deep" }
    }

    /// The readers' limit: arrays and objects nested from the document's root.
    static let maximumDepth = 512
    /// The containers around an object of a store's document: the root, `entities` and the
    /// entity's array in a snapshot; the root, the entity and `upsert` in a journal record.
    static let objectDepth = 4
    /// The longest chain of nodes an object holds: the object is at `objectDepth`, its first
    /// node one deeper.
    static let deepestNodes = maximumDepth - objectDepth
    /// The longest chain of links: the first at `objectDepth + 1`, each `next` array one
    /// deeper and the link in it one more, down to the last link's empty array.
    static let deepestLinks = (maximumDepth - objectDepth) / 2

    static let formats: [SnapshotFormat] = [.json, .binaryPropertyList]

    static func configuration(_ url: URL, _ format: SnapshotFormat) -> StoreConfiguration {
        .file(url, format: format, coalescingInterval: .seconds(3600))
    }

    static func fetchAll(_ container: GraphContainer) throws -> [Deep] {
        try container.mainContext.fetch(FetchDescriptor<Deep>(sortBy: [SortDescriptor(\.id)]))
    }

    // MARK: - The encoders

    /// At a document's root the first node is the first object: 512 nodes are written and
    /// read back, 513 are refused by the writer, as by the readers.
    @Test func theEncodersStopWhereTheReadersStop() throws {
        let deepest = Node.chain(Self.maximumDepth), deeper = Node.chain(Self.maximumDepth + 1)
        #expect(try FastJSONDecoder.decode(Node.self, from: FastJSONEncoder.encode(deepest)) == deepest)
        #expect(try BPlistDecoder.decode(Node.self, from: BPlistEncoder.encode(deepest)) == deepest)
        #expect(try SnapshotValue.readPropertyList(BPlistEncoder.encode(deepest)) != .null)
        #expect(throws: EncodingError.self) { try FastJSONEncoder.encode(deeper) }
        #expect(throws: EncodingError.self) { try BPlistEncoder.encode(deeper) }
        // What the writers stopped before: the readers refuse it.
        let text = String(repeating: #"{"child":"#, count: Self.maximumDepth) + "{}" + String(repeating: "}", count: Self.maximumDepth)
        #expect(throws: DecodingError.self) { try FastJSONDecoder.decode(Node.self, from: Data(text.utf8)) }
    }

    @Test func theErrorNamesWhereTheValueGoesTooDeep() throws {
        for encode in [{ try FastJSONEncoder.encode($0) }, { try BPlistEncoder.encode($0) }] as [(Node) throws -> Data] {
            let error = #expect(throws: EncodingError.self) { try encode(Node.chain(600)) }
            guard case .invalidValue(_, let context)? = error else { continue }
            #expect(context.codingPath.count == Self.maximumDepth)
            #expect(context.codingPath.allSatisfy { $0.stringValue == "child" })
            #expect(context.debugDescription.contains("deeper than 512 levels"))
        }
    }

    // MARK: - A store

    /// The deepest values a store can hold save, close and reopen equal, from the snapshot
    /// and from the journal alone; the generic reader (`inspect`, `convert`) reads them too.
    @Test(arguments: formats)
    func theDeepestValuesSaveAndReopen(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let crashed = try TemporaryDirectory()
        defer { crashed.remove() }
        let url = directory.file("deep.\(format.fileExtension).gz")
        let objects = [
            Deep(id: 1, node: Node.chain(Self.deepestNodes), link: nil),
            Deep(id: 2, node: nil, link: Link.chain(Self.deepestLinks)),
        ]
        let container = try GraphContainer(for: [Deep.self], store: Self.configuration(url, format))
        container.mainContext.insert(contentsOf: objects)
        try container.mainContext.save()
        let copy = try JournalStoreTests.crashCopy(of: url, into: crashed)
        try await container.close()

        for file in [url, copy] {
            let reopened = try GraphContainer(for: [Deep.self], store: Self.configuration(file, format))
            let read = try Self.fetchAll(reopened)
            #expect(read == objects)
            #expect(read.first?.node?.count == Self.deepestNodes)
            #expect(read.last?.link?.count == Self.deepestLinks)
            try await reopened.close()
        }
        #expect(try GenericSnapshot.read(from: url).objects(of: "Deep").count == 2)
    }

    /// One level deeper than a store holds, or far deeper: `save()` throws `codingFailed`
    /// naming the entity and the object, commits nothing, the context keeps its change, and the
    /// store reopens with what was saved before.
    @Test(arguments: formats, [Self.deepestNodes + 1, 600])
    func aDeeperValueIsRefusedBySave(format: SnapshotFormat, nodes: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("deep.\(format.fileExtension).gz")
        let saved = Deep(id: 1, node: Node.chain(3), link: nil)
        let container = try GraphContainer(for: [Deep.self], store: .file(url, format: format))
        container.mainContext.insert(saved)
        try container.mainContext.save()

        container.mainContext.insert(Deep(id: 2, node: Node.chain(nodes), link: nil))
        let error = #expect(throws: GraphStoreError.self) { try container.mainContext.save() }
        guard case .codingFailed(_, let entity, let id, let reason)? = error else {
            Issue.record("not a coding failure: \(String(describing: error))")
            return
        }
        #expect(entity == "Deep")
        #expect(id == "2")
        #expect(reason.contains("deeper than 512 levels"))
        #expect(container.mainContext.hasChanges)
        #expect(try Self.fetchAll(container).map(\.id) == [1, 2], "the context still holds its change")
        #expect(container.storeStatus.lastError == nil)
        // Nothing was committed: a fresh context sees only the first object.
        #expect(try container.newBackgroundContext().fetch(FetchDescriptor<Deep>()).map(\.id) == [1])
        container.mainContext.rollback()
        try await container.close()

        let reopened = try GraphContainer(for: [Deep.self], store: .file(url, format: format))
        #expect(try Self.fetchAll(reopened) == [saved])
        try await reopened.close()
    }

    /// A link one level deeper than a store holds is refused the same way.
    @Test(arguments: formats)
    func aDeeperLinkIsRefusedBySave(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("deep.\(format.fileExtension).gz")
        let container = try GraphContainer(for: [Deep.self], store: .file(url, format: format))
        container.mainContext.insert(Deep(id: 1, node: nil, link: Link.chain(Self.deepestLinks + 1)))
        #expect(throws: GraphStoreError.self) { try container.mainContext.save() }
        container.mainContext.rollback()
        try await container.close()
    }
}
