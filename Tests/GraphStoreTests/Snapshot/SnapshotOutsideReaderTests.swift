import ExampleModel
import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Snapshot files are standard formats: Python's `gzip`, `json` and `plistlib` read what
/// GraphStore writes, and GraphStore opens what Python writes in the documented layout.
@Suite struct SnapshotOutsideReaderTests {
    /// A local entity with `Data`, which JSON holds as Base64 and a property list as bytes.
    struct Attachment: Entity, Equatable {
        var id: UUID
        var name: String
        var bytes: Data
        var createdAt: Date
    }

    static let model: [any Entity.Type] = exampleModel + [Attachment.self]

    // MARK: - Python reads GraphStore's files

    /// Reads the snapshot at argv[1] with gzip + json or gzip + plistlib only, and prints what
    /// it found as JSON. Dates are printed as seconds since 2001 (plistlib gives `datetime`).
    static let pythonReader = #"""
    import base64, datetime, gzip, json, plistlib, sys
    raw = open(sys.argv[1], "rb").read()
    compressed = raw[:2] == b"\x1f\x8b"
    if compressed:
        raw = gzip.decompress(raw)
    if raw[:8] == b"bplist00":
        kind, doc = "plist", plistlib.loads(raw)
    else:
        kind, doc = "json", json.loads(raw)
    EPOCH = datetime.datetime(2001, 1, 1)
    def seconds(value):
        if isinstance(value, datetime.datetime):
            if value.tzinfo is not None:
                value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
            return (value - EPOCH).total_seconds()
        return value
    def base64text(value):
        return base64.b64encode(value).decode() if isinstance(value, bytes) else value
    header, entities = doc["header"], doc["entities"]
    post = next(p for p in entities["Post"] if p["id"] == int(sys.argv[2]))
    attachment = entities["Attachment"][0]
    print(json.dumps({
        "kind": kind, "gzip": compressed,
        "format": header["format"], "formatVersion": header["formatVersion"],
        "dateEncoding": header["dateEncoding"], "storeVersion": header["storeVersion"],
        "modelVersion": header["modelVersion"], "savedAt": seconds(header["savedAt"]),
        "counts": header["counts"], "lengths": {name: len(objects) for name, objects in entities.items()},
        "summary": post["summary"], "noteCount": post["noteCount"], "postDate": seconds(post["date"]),
        "postHasBody": "body" in post, "postKind": post["kind"], "postTagIDs": post["tagIDs"],
        "tagIDs": {tag["name"]: tag["id"] for tag in entities["Tag"]},
        "notes": sorted(note["text"] for note in entities["Note"]),
        "attachmentBytes": base64text(attachment["bytes"]),
        "attachmentDate": seconds(attachment["createdAt"]),
    }))
    """#

    struct PythonView: Decodable {
        var kind: String
        var gzip: Bool
        var format: String
        var formatVersion: Int
        var dateEncoding: String
        var storeVersion: UInt64
        var modelVersion: String
        var savedAt: Double
        var counts: [String: Int]
        var lengths: [String: Int]
        var summary: String
        var noteCount: Int
        var postDate: Double
        var postHasBody: Bool
        var postKind: String
        var postTagIDs: [String]
        var tagIDs: [String: String]
        var notes: [String]
        var attachmentBytes: String
        var attachmentDate: Double
    }

    @Test(arguments: SnapshotFormat.allCases, Compression.allCases)
    func pythonReadsWhatGraphStoreWrites(format: SnapshotFormat, compression: Compression) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file(SnapshotTestKit.fileName(format, compression))
        let container = try GraphContainer(
            for: Self.model, store: .file(url, format: format, compression: compression, options: SnapshotOptions(modelVersion: "7.1")))
        let context = container.mainContext
        let tags = [ExampleModel.Tag(name: "swift"), ExampleModel.Tag(name: "linux"), ExampleModel.Tag(name: "ünïcödé 🏷️")]
        for tag in tags { context.insert(tag) }
        let postDate = Date(timeIntervalSinceReferenceDate: 785_000_000.123_456_7)
        let post = Post(id: 9_007_199_254_740_993, blogName: "staff", kind: .photo, date: postDate,
                        summary: "Grüße 👋 \"quoted\" \\ back", body: nil, noteCount: 1_234, tagIDs: [tags[0].id, tags[2].id])
        context.insert(post)
        for post in Fixtures.posts(5) { context.insert(post) }
        let noteTexts = ["first note", "zweite Notiz", "第三", "e\u{301}cole"]
        for (index, text) in noteTexts.enumerated() {
            context.insert(Note(text: text, createdAt: Fixtures.epoch.addingTimeInterval(Double(index)), tagIDs: [tags[index % 3].id]))
        }
        let attachment = Attachment(id: UUID(), name: "blob", bytes: Data([0, 1, 2, 0xFE, 0xFF]), createdAt: Date(timeIntervalSinceReferenceDate: -1.5))
        context.insert(attachment)
        try context.save()
        try await container.close()

        let output = try await SnapshotTestKit.runPython(Self.pythonReader, [url.path, String(post.id)])
        let view = try JSONDecoder().decode(PythonView.self, from: output)

        #expect(view.kind == (format == .json ? "json" : "plist"))
        #expect(view.gzip == (compression == .gzip))
        #expect(view.format == "GraphStore")
        #expect(view.formatVersion == 1)
        #expect(view.dateEncoding == "secondsSince2001")
        #expect(view.modelVersion == "7.1")
        #expect(view.storeVersion == container.version)
        #expect(abs(view.savedAt - Date().timeIntervalSinceReferenceDate) < 600)
        let expectedCounts = ["Post": 6, "Note": noteTexts.count, "Tag": tags.count, "Attachment": 1]
        #expect(view.counts == expectedCounts)
        #expect(view.lengths == expectedCounts)
        #expect(SnapshotTestKit.sameScalars(view.summary, post.summary))
        #expect(view.noteCount == 1_234)
        #expect(!view.postHasBody, "a nil body is left out")
        #expect(view.postKind == "photo")
        #expect(view.postTagIDs == post.tagIDs.map(\.uuidString))
        #expect(view.tagIDs == Dictionary(uniqueKeysWithValues: tags.map { ($0.name, $0.id.uuidString) }))
        // Python sorted by code points; compare the scalars, not canonical equivalence.
        #expect(Set(view.notes.map { $0.unicodeScalars.map(\.value) }) == Set(noteTexts.map { $0.unicodeScalars.map(\.value) }))
        #expect(view.notes.count == noteTexts.count)
        #expect(view.attachmentBytes == attachment.bytes.base64EncodedString())
        if format == .json {
            // JSON numbers carry the date to the bit.
            #expect(view.postDate.bitPattern == postDate.timeIntervalSinceReferenceDate.bitPattern)
            #expect(view.attachmentDate == -1.5)
        } else {
            // plistlib turns a <date> into a `datetime`, which keeps microseconds.
            #expect(abs(view.postDate - postDate.timeIntervalSinceReferenceDate) <= 1e-6)
            #expect(view.attachmentDate == -1.5)
        }
    }

    // MARK: - GraphStore reads Python's files

    /// Writes a snapshot in the documented layout to argv[1]: `json` (gzip + json; dates are
    /// numbers of seconds since 2001, Data is Base64), `plist` (plistlib binary; dates are
    /// `datetime`, that is plist <date>, Data is bytes) or `plist-float-dates` (dates as plist
    /// <real> numbers). argv[2] says gzip or none.
    static let pythonWriter = #"""
    import base64, datetime, gzip, json, plistlib, sys
    path, variant, compression = sys.argv[1], sys.argv[2], sys.argv[3]
    EPOCH = datetime.datetime(2001, 1, 1)
    def date(seconds):
        return EPOCH + datetime.timedelta(seconds=seconds) if variant == "plist" else seconds
    def data(raw):
        return base64.b64encode(raw).decode() if variant == "json" else raw
    tag1, tag2 = "6F9619FF-8B86-D011-B42D-00C04FC964FF", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
    entities = {
        "Tag": [{"id": tag1, "name": "python"}, {"id": tag2, "name": "ünïcödé 🐍"}],
        "Note": [
            {"id": "C0FFEE00-0000-4000-8000-000000000001", "text": "from python", "createdAt": date(800000000.125),
             "modifiedAt": date(800000001.5), "isArchived": False, "tagIDs": [tag1, tag2]},
            {"id": "C0FFEE00-0000-4000-8000-000000000002", "text": "e\u0301 \u0000 中文", "createdAt": date(-86400.25),
             "modifiedAt": date(0.5), "isArchived": True, "tagIDs": []},
        ],
        "Post": [{"id": 9007199254740993, "blogName": "py", "kind": "quote", "date": date(800000000.5),
                  "summary": "written by Python", "noteCount": -3, "tagIDs": [tag2]}],
        "Attachment": [{"id": "A77AC000-0000-4000-8000-0000000000AA", "name": "bytes",
                        "bytes": data(bytes([0, 1, 2, 255])), "createdAt": date(1.25)}],
    }
    header = {"format": "GraphStore", "formatVersion": 1, "modelVersion": "py-1", "savedAt": date(800000002.0),
              "storeVersion": 7, "counts": {name: len(objects) for name, objects in entities.items()},
              "dateEncoding": "secondsSince2001"}
    document = {"header": header, "entities": entities}
    if variant == "json":
        raw = json.dumps(document, ensure_ascii=False).encode("utf-8")
    else:
        raw = plistlib.dumps(document, fmt=plistlib.FMT_BINARY)
    if compression == "gzip":
        raw = gzip.compress(raw)
    open(path, "wb").write(raw)
    """#

    @Test(arguments: ["json", "plist"], Compression.allCases)
    func graphStoreOpensWhatPythonWrites(variant: String, compression: Compression) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("python.snapshot")
        _ = try await SnapshotTestKit.runPython(Self.pythonWriter, [url.path, variant, compression.rawValue])

        let container = try GraphContainer(for: Self.model, store: .file(url))
        #expect(container.version == 7)
        let context = container.mainContext
        let tag1 = try #require(UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF"))
        let tag2 = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(context.model(ExampleModel.Tag.self, id: tag1)?.name == "python")
        #expect(context.model(ExampleModel.Tag.self, id: tag2).map { SnapshotTestKit.sameScalars($0.name, "ünïcödé 🐍") } == true)

        let firstID = try #require(UUID(uuidString: "C0FFEE00-0000-4000-8000-000000000001"))
        let secondID = try #require(UUID(uuidString: "C0FFEE00-0000-4000-8000-000000000002"))
        let attachmentID = try #require(UUID(uuidString: "A77AC000-0000-4000-8000-0000000000AA"))
        let first = try #require(context.model(Note.self, id: firstID))
        #expect(first.text == "from python")
        #expect(first.createdAt.timeIntervalSinceReferenceDate == 800_000_000.125)
        #expect(first.modifiedAt.timeIntervalSinceReferenceDate == 800_000_001.5)
        #expect(!first.isArchived)
        #expect(first.tagIDs == [tag1, tag2])
        let second = try #require(context.model(Note.self, id: secondID))
        #expect(SnapshotTestKit.sameScalars(second.text, "e\u{301} \u{0} 中文"))
        #expect(second.createdAt.timeIntervalSinceReferenceDate == -86_400.25)
        #expect(second.isArchived)

        let post = try #require(context.model(Post.self, id: 9_007_199_254_740_993))
        #expect(post.kind == .quote)
        #expect(post.body == nil)
        #expect(post.noteCount == -3)
        #expect(post.date.timeIntervalSinceReferenceDate == 800_000_000.5)
        #expect(post.tagIDs == [tag2])

        let attachment = try #require(context.model(Attachment.self, id: attachmentID))
        #expect(attachment.bytes == Data([0, 1, 2, 255]))
        #expect(attachment.createdAt.timeIntervalSinceReferenceDate == 1.25)
        try container.checkInvariants()

        // GraphStore keeps going from Python's file.
        context.insert(Note(text: "from swift", createdAt: Fixtures.epoch, tagIDs: [tag1]))
        try context.save()
        try await container.close()
        let reopened = try GraphContainer(for: Self.model, store: .file(url))
        #expect(reopened.count(of: Note.self) == 3)
        #expect(reopened.version == 8)
        try await reopened.close()
    }

    /// `PropertyListDecoder` reads a `Date` only from a plist <date>: a property list whose
    /// dates are <real> numbers of seconds (as in JSON) is refused, naming the field.
    @Test func plistDatesMustBePlistDates() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("python.snapshot")
        _ = try await SnapshotTestKit.runPython(Self.pythonWriter, [url.path, "plist-float-dates", "gzip"])
        let before = try Data(contentsOf: url)
        #expect {
            _ = try GraphContainer(for: Self.model, store: .file(url))
        } throws: { error in
            guard case .damagedFile(let path, _, let reason) = error as? GraphStoreError else { return false }
            return path == url.path && reason.contains("header.savedAt") && reason.contains("Date")
        }
        #expect(try Data(contentsOf: url) == before)
    }
}
