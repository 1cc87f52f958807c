import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// Random graphs of the example model plus edge values, written through typed containers, and
/// the comparisons the migration tests make.
enum MigrationTestKit {
    /// A graph of every entity the migration tests use.
    struct Graph: Sendable {
        var tags: [ExampleModel.Tag] = []
        var posts: [Post] = []
        var notes: [Note] = []
        var edges: [SQLiteEdgeValues] = []

        var objectCount: Int { tags.count + posts.count + notes.count + edges.count }
    }

    // MARK: - Random graphs

    /// A random graph from `seed`: tags with Unicode names, posts with ids up to the Int64
    /// extremes, notes with dates to the last bit, each referencing random tags; and the edge
    /// values (extremes, empties and random ones) when `edges` is true.
    static func randomGraph(seed: UInt64, size: Int = 40, edges: Bool = true) -> Graph {
        var random = SplitMix64(seed: seed)
        var graph = Graph()
        var names = Set<String>()
        while names.count < 1 + Int(random.next() % 12) {
            names.insert(randomText(&random, maxLength: 12) + " \(names.count)")
        }
        graph.tags = names.sorted().map { ExampleModel.Tag(id: uuid(&random), name: $0) }
        let tagIDs = graph.tags.map(\.id)
        func someTags() -> [ExampleModel.Tag.ID] {
            (0..<Int(random.next() % 4)).map { _ in tagIDs[Int(random.next() % UInt64(tagIDs.count))] }
        }
        var ids = Set<Int64>([.min, .max, 0, -1])
        while ids.count < size { ids.insert(Int64(bitPattern: random.next()) >> Int64(random.next() % 60)) }
        graph.posts = ids.sorted().map { id in
            Post(
                id: id, blogName: randomText(&random, maxLength: 16), kind: Post.Kind.allCases[Int(random.next() % 9)],
                date: randomDate(&random), summary: randomText(&random, maxLength: 60),
                body: random.next() % 3 == 0 ? nil : randomText(&random, maxLength: 200),
                noteCount: Int(Int64(bitPattern: random.next())), tagIDs: someTags())
        }
        graph.notes = (0..<size / 2).map { _ in
            Note(
                id: uuid(&random), text: randomText(&random, maxLength: 120), createdAt: randomDate(&random),
                modifiedAt: randomDate(&random), isArchived: random.next() % 2 == 0, tagIDs: someTags())
        }
        if edges {
            graph.edges = [.extremes, .empties] + (0..<6).map { index in randomEdge(&random, index: index) }
        }
        return graph
    }

    /// An edge-values object with random doubles (specials included), data, text and dates.
    static func randomEdge(_ random: inout SplitMix64, index: Int) -> SQLiteEdgeValues {
        var value = SQLiteEdgeValues.extremes
        value.id = "random \(index) " + randomText(&random, maxLength: 10)
        value.int64Min = Int64(bitPattern: random.next())
        value.uint64Max = random.next()
        value.double = randomDouble(&random)
        value.negativeZero = randomDouble(&random)
        value.subnormal = Double(bitPattern: random.next() % (1 << 52))
        value.float = Float(bitPattern: UInt32(truncatingIfNeeded: random.next()) & 0x7F7F_FFFF)
        value.date = randomDate(&random)
        value.data = Data((0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        value.text = randomText(&random, maxLength: 30)
        value.flag = random.next() % 2 == 0
        value.optionalText = random.next() % 2 == 0 ? nil : randomText(&random, maxLength: 5)
        value.optionalDate = random.next() % 2 == 0 ? nil : randomDate(&random)
        value.nested.values = (0..<3).map { _ in randomDouble(&random) }
        value.nested.when = randomDate(&random)
        value.list = (0..<Int(random.next() % 5)).map { _ in Int64(bitPattern: random.next()) }
        value.uuids = [uuid(&random)]
        return value
    }

    /// Text from a mix of ASCII, accents, combining marks, CJK, emoji and control characters
    /// (NUL included).
    static func randomText(_ random: inout SplitMix64, maxLength: Int) -> String {
        let pieces = ["a", "Z", " ", "é", "e\u{301}", "中", "文", "😀", "👩‍👩‍👧", "\u{0}", "\n", "\"", "\\", "/", "\u{7F}", "ß", "\u{FEFF}", "NaN"]
        return (0..<Int(random.next() % UInt64(maxLength + 1))).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
    }

    /// A date with random bits in its fraction, sometimes a special one.
    static func randomDate(_ random: inout SplitMix64) -> Date {
        switch random.next() % 10 {
        case 0: .distantPast
        case 1: Date(timeIntervalSinceReferenceDate: -0.0)
        default: Date(timeIntervalSinceReferenceDate: Double(Int64(bitPattern: random.next()) % 4_000_000_000) + Double(random.next() % 1_000_000) / 1_000_003)
        }
    }

    /// A double: any finite bit pattern, or one of the specials.
    static func randomDouble(_ random: inout SplitMix64) -> Double {
        let specials: [Double] = [.nan, .infinity, -.infinity, -0.0, 0, 3, -7, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0x1p53, 0x1p63]
        if random.next() % 3 == 0 { return specials[Int(random.next() % UInt64(specials.count))] }
        let value = Double(bitPattern: random.next())
        return value.isFinite ? value : 1.5
    }

    static func uuid(_ random: inout SplitMix64) -> UUID {
        let high = random.next(), low = random.next()
        return withUnsafeBytes(of: (high, low)) { bytes in
            UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                        bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        }
    }

    // MARK: - Typed stores

    /// Writes `graph` through a typed container on `store` in one save, then closes it.
    static func write(_ graph: Graph, to store: StoreConfiguration) async throws {
        let container = try GraphContainer(for: SQLiteTestKit.model, store: store)
        let context = container.mainContext
        for tag in graph.tags { context.insert(tag) }
        for post in graph.posts { context.insert(post) }
        for note in graph.notes { context.insert(note) }
        for edge in graph.edges { context.insert(edge) }
        try context.save()
        try await container.close()
    }

    /// Reads every object through a typed container on `store`.
    static func read(_ store: StoreConfiguration) async throws -> Graph {
        let container = try GraphContainer(for: SQLiteTestKit.model, store: store)
        try container.checkInvariants()
        let context = container.mainContext
        let graph = Graph(
            tags: try context.fetch(FetchDescriptor<ExampleModel.Tag>()), posts: try context.fetch(FetchDescriptor<Post>()),
            notes: try context.fetch(FetchDescriptor<Note>()), edges: try context.fetch(FetchDescriptor<SQLiteEdgeValues>()))
        try await container.close()
        return graph
    }

    /// Records an issue for every object of `expected` that `actual` lacks or holds differently
    /// (edge values to the bit).
    static func expectEqual(_ actual: Graph, _ expected: Graph, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Set(actual.tags) == Set(expected.tags), "\(what): tags", sourceLocation: sourceLocation)
        #expect(Set(actual.posts) == Set(expected.posts), "\(what): posts", sourceLocation: sourceLocation)
        #expect(Set(actual.notes) == Set(expected.notes), "\(what): notes", sourceLocation: sourceLocation)
        #expect(actual.edges.count == expected.edges.count, "\(what): edge values", sourceLocation: sourceLocation)
        for edge in expected.edges {
            guard let read = actual.edges.first(where: { $0.id.unicodeScalars.elementsEqual(edge.id.unicodeScalars) }) else {
                Issue.record("\(what): \(edge) missing", sourceLocation: sourceLocation)
                continue
            }
            #expect(read.differences(from: edge) == [], "\(what): \(edge)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Files

    /// The names in `directory`, without the lock files snapshot containers leave.
    static func files(in directory: URL) -> Set<String> {
        SQLiteTestKit.entries(of: directory).filter { !$0.hasSuffix(".lock") }
    }

    // MARK: - Generic values

    /// The objects of every entity as canonical text (sorted keys, doubles and dates by bit
    /// pattern), sorted: equal for two snapshots with the same values.
    static func canonical(_ snapshot: GenericSnapshot) -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: snapshot.entities.filter { !$0.objects.isEmpty }.map { ($0.name, $0.objects.map(canonical).sorted()) })
    }

    static func canonical(_ value: SnapshotValue) -> String {
        func bits(_ number: Double) -> String { number.isNaN ? "nan" : String(number.bitPattern, radix: 16) }
        switch value {
        case .null: return "null"
        case .bool(let flag): return "\(flag)"
        case .integer(let number): return "i\(number)"
        case .unsigned(let number): return "u\(number)"
        case .double(let number): return "d\(bits(number))"
        case .string(let text): return "s" + text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: ",")
        case .data(let bytes): return "x" + bytes.base64EncodedString()
        case .date(let date): return "t\(bits(date.timeIntervalSinceReferenceDate))"
        case .array(let values): return "[" + values.map(canonical).joined(separator: ";") + "]"
        case .object(let fields):
            return "{" + fields.map { (canonical(.string($0.key)), canonical($0.value)) }.sorted { $0.0 < $1.0 }.map { "\($0):\($1)" }.joined(separator: ";") + "}"
        }
    }

    /// The progress reports a migration made, collected from its callback.
    final class ProgressLog: Sendable {
        private let reports = Guarded<[MigrationProgress]>([])
        var callback: @Sendable (MigrationProgress) -> Void { { [self] progress in reports.withLock { $0.append(progress) } } }
        var all: [MigrationProgress] { reports.value }
    }
}
