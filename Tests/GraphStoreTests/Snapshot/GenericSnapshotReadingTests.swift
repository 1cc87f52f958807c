import ExampleModel
import Foundation
import GraphStoreTestSupport
import PropertyBased
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// `GenericSnapshot` (what `inspect`, `dump`, `verify`, `convert` and `migrate` read) reads
/// with the parsers that open a store: it accepts what an app opens, refuses what an app
/// refuses for a reason that needs no model, and gives the values Foundation's decoders gave.
@Suite struct GenericSnapshotReadingTests {
    // MARK: - Same values as through Foundation

    @Test func randomEdgeValuesReadAsFoundationReadThem() async {
        await propertyCheck(count: 30, input: SnapshotGenerators.edgeValues.array(of: 1...6)) { values in
            let values = EdgeValues.withOneNaNPattern(values)
            let jsonEncoder = SnapshotCodec.makeJSONEncoder()
            let json = try jsonEncoder.encode(values)
            let foundationJSON = try SnapshotCodec.makeJSONDecoder().decode(SnapshotValue.self, from: json)
            Self.expectSame(try SnapshotValue.readJSON(json), foundationJSON, "JSON")

            let plistEncoder = PropertyListEncoder()
            plistEncoder.outputFormat = .binary
            let plist = try plistEncoder.encode(values)
            let decoder = PropertyListDecoder()
            decoder.userInfo[SnapshotValue.propertyListKey] = true
            Self.expectSame(try SnapshotValue.readPropertyList(plist), try decoder.decode(SnapshotValue.self, from: plist), "plist")
        }
    }

    @Test func fixedEdgeValuesReadAsFoundationReadThem() throws {
        let values = [EdgeValues.extremes, .empties, .nullMarkerText] + EdgeValues.binaryPropertyListTraps.map(\.value)
        let json = try SnapshotCodec.makeJSONEncoder().encode(values)
        Self.expectSame(try SnapshotValue.readJSON(json), try SnapshotCodec.makeJSONDecoder().decode(SnapshotValue.self, from: json), "JSON")
    }

    /// Numbers and strings at the edges: the same value as `JSONDecoder` gives, or both refuse.
    @Test(arguments: [
        "0", "-0", "-0.0", "1.0", "1e2", "1E+2", "-1e0", "0.5", "-1.5e-3", "9223372036854775807", "-9223372036854775808",
        "9223372036854775808", "18446744073709551615", "18446744073709551616", "1e20", "123456789012345678901234567890",
        "1.7976931348623157e308", "4.9e-324", "1e400", "-1e400", "true", "false", "null",
        #""NaN""#, #""Infinity""#, #""-Infinity""#, #""nan""#, #""$null""#, #""\u00e9""#, #""e\u0301""#, #""\ud83d\ude00""#,
        #""\"\\\/\b\f\n\r\t""#, #""\u0000""#, "[]", "{}", #"{"a":1,"b":[true,null,"x"]}"#, "[[[[1]]]]", "\u{FEFF}[1]",
    ])
    func jsonEdgesReadAsFoundationReadThem(text: String) {
        let data = Data(text.utf8)
        let foundation = try? SnapshotCodec.makeJSONDecoder().decode(SnapshotValue.self, from: data)
        let ours = try? SnapshotValue.readJSON(data)
        #expect((foundation == nil) == (ours == nil), "\(text): Foundation \(String(describing: foundation)), ours \(String(describing: ours))")
        if let foundation, let ours { Self.expectSame(ours, foundation, text) }
    }

    /// A number too small for a `Double` that is not zero: `JSONDecoder` reads it as 0 into a
    /// generic value, but an app's `Double` field refuses it, and so does `verify` now.
    /// A key repeated in an object: its first occurrence counts, for an app opening the
    /// store, for generic reading (so `migrate` and `convert` carry what the app reads) and
    /// for `JSONDecoder`.
    @Test func aRepeatedKeyReadsAsTheAppReadsIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json")
        let container = try GraphContainer(for: exampleModel, store: .file(url, compression: .none))
        container.mainContext.insert(Note(text: "original", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        try await container.close()
        let written = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(written.contains(#""text":"original""#))
        try Data(written.replacingOccurrences(of: #""text":"original""#, with: #""text":"first","text":"second""#).utf8).write(to: url)

        let generic = try GenericSnapshot.read(from: url)
        let reopened = try GraphContainer(for: exampleModel, store: .file(url, compression: .none))
        let read = try reopened.mainContext.fetch(FetchDescriptor<Note>()).map(\.text)
        try await reopened.close()
        #expect(read == ["first"])
        #expect(generic.objects(of: "Note").map { $0["text"] } == [.string("first")])
        let document = Data(#"{"a":"first","b":[1,{"c":2,"c":3}],"a":"second"}"#.utf8)
        let foundation = try SnapshotCodec.makeJSONDecoder().decode(SnapshotValue.self, from: document)
        #expect(try SnapshotValue.readJSON(document) == foundation)
        #expect(foundation["a"] == .string("first"))
    }

    /// The same in a binary property list: a dictionary that holds a key twice.
    @Test func aRepeatedPropertyListKeyReadsAsTheAppReadsIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.plist")
        let container = try GraphContainer(for: exampleModel, store: .file(url, format: .binaryPropertyList, compression: .none))
        container.mainContext.insert(Note(text: "original", createdAt: Fixtures.epoch))
        try container.mainContext.save()
        try await container.close()
        // The same document, its note's `text` written twice.
        guard case .object(let root) = try SnapshotValue.readPropertyList(try Data(contentsOf: url)),
              let header = root["header"], case .object(let entities)? = root["entities"],
              case .array(let notes)? = entities["Note"], case .object(let note)? = notes.first
        else { Issue.record("not a snapshot"); return }
        let table = BPlistObjectTable()
        var keys: [UInt32] = [], values: [UInt32] = []
        for (key, value) in note where key != "text" {
            keys.append(table.string(key))
            values.append(table.add(value))
        }
        keys += [table.string("text"), table.string("text")]
        values += [table.string("first"), table.string("second")]
        var names: [UInt32] = [], arrays: [UInt32] = []
        for (name, objects) in entities {
            names.append(table.string(name))
            arrays.append(name == "Note" ? table.array([table.dictionary(keys: keys, values: values)]) : table.add(objects))
        }
        let document = table.dictionary(
            keys: [table.string("header"), table.string("entities")], values: [table.add(header), table.dictionary(keys: names, values: arrays)])
        try table.serialized(top: document).write(to: url)

        let generic = try GenericSnapshot.read(from: url)
        let reopened = try GraphContainer(for: exampleModel, store: .file(url, format: .binaryPropertyList, compression: .none))
        let read = try reopened.mainContext.fetch(FetchDescriptor<Note>()).map(\.text)
        try await reopened.close()
        #expect(generic.objects(of: "Note").map { $0["text"] } == read.map { .string($0) })
        #expect(read == ["first"])
    }

    @Test func numbersAnAppRefusesAreRefused() {
        #expect(throws: SnapshotValue.ReadingFailure.self) { try SnapshotValue.readJSON(Data("[1e-400]".utf8)) }
        #expect(throws: (any Error).self) { try FastJSONDecoder.decode([Double].self, from: Data("[1e-400]".utf8)) }
    }

    /// `GenericSnapshot` writes property lists straight from its values: the same document
    /// as encoding them through `BPlistEncoder`.
    @Test func genericValuesWriteAsTheirEncoding() async {
        await propertyCheck(count: 20, input: SnapshotGenerators.edgeValues.array(of: 1...4)) { values in
            let values = EdgeValues.withOneNaNPattern(values)
            let plistEncoder = PropertyListEncoder()
            plistEncoder.outputFormat = .binary
            let root = try SnapshotValue.readPropertyList(try plistEncoder.encode(values))
            let table = BPlistObjectTable()
            let direct = try SnapshotValue.readPropertyList(table.serialized(top: table.add(root)))
            Self.expectSame(direct, try SnapshotValue.readPropertyList(try BPlistEncoder.encode(root)), "direct")
            Self.expectSame(direct, root, "read back")
        }
    }

    @Test func theTextNullMarkerIsAStringAndNilIsNull() throws {
        let plist = try BPlistEncoder.encode(["$null", nil, "x"] as [String?])
        let value = try SnapshotValue.readPropertyList(plist)
        #expect(value == .array([.string("$null"), .null, .string("x")]))
    }

    // MARK: - Verify and opening agree

    /// Every file of the damaged-file factory, in every layout: `GenericSnapshot.read` (what
    /// `verify` does) refuses only files that an app refuses too, and refuses every file an app
    /// refuses, except damage that only the app's model can see (which `verify` reads
    /// without).
    @Test func verifyAndOpeningAgreeOnEveryDamagedFile() async throws {
        let needsTheModel: Set<String> = ["a referenced tag missing", "two tags with one name", "a note's text is a number"]
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var checked = 0
        for (format, compression) in SnapshotTestKit.allLayouts {
            let source = directory.file("source-" + SnapshotTestKit.fileName(format, compression))
            let file = try await Self.writeRealSnapshot(source, format: format, compression: compression)
            var cases = DamagedSnapshotFactory.truncations(of: file, samples: 24)
            cases += try DamagedSnapshotFactory.wrongMagic(of: file)
            if compression == .none {
                // The edits write each edited document plain and gzip-compressed.
                cases += try DamagedSnapshotFactory.newerVersion(of: file)
                cases += try DamagedSnapshotFactory.countMismatches(of: file)
                cases += try DamagedSnapshotFactory.brokenGraphs(of: file)
            }
            cases += try DamagedSnapshotFactory.empties()
            if compression == .gzip {
                cases += DamagedSnapshotFactory.bitFlips(ofGzip: file, bodySamples: 16)
                cases += DamagedSnapshotFactory.harmlessGzipHeaderFlips(of: file).map { DamagedSnapshot(name: $0.name, bytes: $0.bytes, refusal: .damagedFile) }
            }
            cases.append(DamagedSnapshot(name: "undamaged", bytes: file, refusal: .damagedFile))
            for damaged in cases {
                let url = directory.file("case-" + SnapshotTestKit.fileName(format, compression))
                try damaged.bytes.write(to: url)
                var openError: GraphStoreError?
                do {
                    let container = try GraphContainer(for: exampleModel, store: .file(url))
                    try await container.close()
                } catch let error as GraphStoreError {
                    openError = error
                }
                var readError: GraphStoreError?
                do { _ = try GenericSnapshot.read(from: url) } catch let error as GraphStoreError { readError = error }
                let label = "\(format)/\(compression) \(damaged)"
                if let readError {
                    #expect(openError != nil, "\(label): verify refuses (\(readError)), opening accepts")
                    #expect(Self.kind(readError) == openError.map(Self.kind), "\(label): verify \(readError), opening \(String(describing: openError))")
                } else if let openError {
                    #expect(needsTheModel.contains { damaged.name.hasPrefix($0 + " (") }, "\(label): opening refuses (\(openError)), verify accepts")
                }
                try? FileManager.default.removeItem(at: url)
                try? FileManager.default.removeItem(at: directory.file(url.lastPathComponent + ".lock"))
                checked += 1
            }
        }
        #expect(checked > 100)
    }

    // MARK: - Helpers

    private static func writeRealSnapshot(_ url: URL, format: SnapshotFormat, compression: Compression) async throws -> Data {
        let container = try GraphContainer(for: exampleModel, store: .file(url, format: format, compression: compression))
        let context = container.mainContext
        let tags = Fixtures.tagNames.map { ExampleModel.Tag(name: $0) }
        for tag in tags { context.insert(tag) }
        for number in 0..<12 {
            context.insert(Note(text: "note \(number) — ünïcödé ✓", createdAt: Fixtures.epoch.addingTimeInterval(Double(number)), tagIDs: tags.map(\.id)))
        }
        for post in Fixtures.posts(10, tags: tags.map(\.id)) { context.insert(post) }
        try context.save()
        try await container.close()
        return try Data(contentsOf: url)
    }

    /// The error's case, without its details.
    private static func kind(_ error: GraphStoreError) -> String {
        Mirror(reflecting: error).children.first?.label ?? "\(error)"
    }

    /// Equal, doubles and dates compared by bit pattern (any NaN matches any NaN), strings by
    /// their Unicode scalars.
    private static func expectSame(_ ours: SnapshotValue, _ theirs: SnapshotValue, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let difference = difference(ours, theirs, at: "")
        #expect(difference == nil, "\(label): \(difference ?? "")", sourceLocation: sourceLocation)
    }

    /// Where `a` and `b` first differ, and how.
    private static func difference(_ a: SnapshotValue, _ b: SnapshotValue, at path: String) -> String? {
        switch (a, b) {
        case let (.double(x), .double(y)):
            return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN) ? nil : "\(path): ours \(x), Foundation's \(y)"
        case let (.date(x), .date(y)):
            return difference(.double(x.timeIntervalSinceReferenceDate), .double(y.timeIntervalSinceReferenceDate), at: path)
        case let (.string(x), .string(y)):
            return x.unicodeScalars.elementsEqual(y.unicodeScalars) ? nil : "\(path): ours \(x.debugDescription), Foundation's \(y.debugDescription)"
        case let (.array(x), .array(y)):
            guard x.count == y.count else { return "\(path): \(x.count) elements, Foundation's \(y.count)" }
            return zip(x, y).enumerated().lazy.compactMap { difference($1.0, $1.1, at: "\(path)[\($0)]") }.first
        case let (.object(x), .object(y)):
            guard x.count == y.count else { return "\(path): keys \(x.keys.sorted()), Foundation's \(y.keys.sorted())" }
            for (key, value) in x {
                guard let other = y.first(where: { $0.key.unicodeScalars.elementsEqual(key.unicodeScalars) }) else { return "\(path): no \(key) in Foundation's" }
                if let found = difference(value, other.value, at: "\(path).\(key)") { return found }
            }
            return nil
        default:
            return a == b ? nil : "\(path): ours \(a), Foundation's \(b)"
        }
    }

    /// A binary property list of `levels` arrays, each holding the one below it twice (shared
    /// by reference), over one integer: a few bytes per level, 2^levels values expanded.
    static func referenceBomb(levels: Int) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets = [bytes.count]
        bytes += [0x10, 0x00]
        for level in 1...levels {
            offsets.append(bytes.count)
            bytes += [0xA2, UInt8(level - 1), UInt8(level - 1)]
        }
        let table = bytes.count
        bytes += offsets.map { UInt8($0) }
        bytes += [0, 0, 0, 0, 0, 0, 1, 1]
        for value in [UInt64(levels + 1), UInt64(levels), UInt64(table)] {
            withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
        }
        return Data(bytes)
    }

    /// Shared references make a tiny file expand without bound: the generic reader (which
    /// `verify`, migrations and the survey of unkept fields at open use) refuses it instead of
    /// reading 2^40 values. A few levels, a few values, read as usual.
    @Test func aReferenceBombIsRefusedNotExpanded() throws {
        let small = try SnapshotValue.readPropertyList(Self.referenceBomb(levels: 3))
        guard case .array(let top) = small, top.count == 2 else {
            Issue.record("expected a two-element array, got \(small)")
            return
        }
        #expect {
            _ = try SnapshotValue.readPropertyList(Self.referenceBomb(levels: 40))
        } throws: { error in
            "\(error)".contains("reference bomb")
        }
    }
}
