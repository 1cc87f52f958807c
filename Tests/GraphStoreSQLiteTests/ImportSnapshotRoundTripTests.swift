import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

/// An imported snapshot is a good snapshot: it writes as gzip'd JSON and reads back equal, and
/// it becomes a binary property list with native dates and data through its field types.
@Suite struct ImportSnapshotRoundTripTests {
    typealias Kit = ImportTestKit

    @Test func aCoreDataImportWritesAsJSONAndReadsBackEqual() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("Notes.sqlite")
        try Kit.makeCoreDataStore(at: store)
        let (snapshot, _) = try CoreDataImporter.snapshot(from: store)

        let file = directory.file("notes.json.gz")
        try snapshot.write(to: file, format: .json, compression: .gzip)
        let read = try GenericSnapshot.read(from: file)

        #expect(read.format == .json)
        #expect(read.compression == .gzip)
        #expect(read.header == snapshot.header)
        #expect(read.entities.map(\.name) == snapshot.entities.map(\.name))
        for (name, objects) in snapshot.entities {
            #expect(read.objects(of: name) == objects.map(Kit.asReadFromJSON), "\(name)")
        }
    }

    @Test func aCoreDataImportBecomesAPropertyListWithNativeDates() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("Notes.sqlite")
        try Kit.makeCoreDataStore(at: store)
        let (snapshot, _) = try CoreDataImporter.snapshot(from: store)

        // Straight from the import, and by way of the JSON file.
        let direct = directory.file("direct.plist.gz")
        try snapshot.write(to: direct, format: .binaryPropertyList, compression: .gzip)
        let json = directory.file("notes.json.gz")
        try snapshot.write(to: json, format: .json, compression: .none)
        let converted = directory.file("converted.plist.gz")
        try GenericSnapshot.read(from: json).write(to: converted, format: .binaryPropertyList, compression: .gzip)

        for file in [direct, converted] {
            let plist = try GenericSnapshot.read(from: file)
            #expect(plist.format == .binaryPropertyList)
            let note = try Kit.object(plist, "Note", id: .integer(1))
            #expect(note["createdat"] == .date(Date(timeIntervalSinceReferenceDate: Kit.Dates.groceriesCreated)))
            #expect(note["modifiedat"] == .date(Date(timeIntervalSinceReferenceDate: Double(Kit.Dates.groceriesModified))))
            guard case .date(let planCreated)? = try Kit.object(plist, "Note", id: .integer(3))["createdat"] else {
                Issue.record("Note 3 createdat is not a date in \(file.lastPathComponent)")
                continue
            }
            #expect(planCreated.timeIntervalSinceReferenceDate.bitPattern == Kit.Dates.planCreated.bitPattern)
            #expect(try Kit.object(plist, "Folder", id: .integer(2))["createdat"] == .date(Date(timeIntervalSinceReferenceDate: 600_000_000)))
            #expect(try Kit.object(plist, "Photo", id: .integer(2))["imagedata"] == .data(Kit.sunsetImage))
            #expect(try Kit.object(plist, "SyncSession", id: .string(Kit.sessionIDs[0].uuidString))["token"] == .data(Kit.sessionToken))
            #expect(try Kit.object(plist, "Note", id: .integer(1))["tags"] == .array([.integer(1), .integer(2)]))
        }
    }

    @Test func pythonReadsTheImportedPropertyListsDatesAsDatetimes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("Notes.sqlite")
        try Kit.makeCoreDataStore(at: store)
        let (snapshot, _) = try CoreDataImporter.snapshot(from: store)
        let file = directory.file("notes.plist.gz")
        try snapshot.write(to: file, format: .binaryPropertyList, compression: .gzip)

        let result = try await SQLiteTestKit.pythonJSON("""
            import gzip, json, plistlib, sys
            doc = plistlib.loads(gzip.open(sys.argv[1]).read())
            note = next(n for n in doc["entities"]["Note"] if n["id"] == 1)
            folder = next(f for f in doc["entities"]["Folder"] if f["id"] == 1)
            print(json.dumps({"created": note["createdat"].isoformat(), "type": type(note["createdat"]).__name__,
                              "inbox": folder["createdat"].isoformat(), "counts": doc["header"]["counts"]}))
            """, [file.path])
        let fields = try #require(result as? [String: Any])
        #expect(fields["type"] as? String == "datetime")
        #expect((fields["created"] as? String)?.hasPrefix("2023-03-08T20:26:40.123") == true, "\(fields)")
        #expect((fields["inbox"] as? String)?.hasPrefix("1999-12-31T23:59:59") == true, "\(fields)")
        #expect((fields["counts"] as? [String: Int])?["Note"] == 2)
    }

    @Test func aPlainImportWritesAndReadsBackEqual() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("app.sqlite")
        try Kit.execute(
            """
            CREATE TABLE book (isbn TEXT PRIMARY KEY, title TEXT, cover BLOB, price REAL, pages INTEGER, done BOOLEAN);
            INSERT INTO book VALUES ('978-0', 'Zero', X'00FF10', 9.99, 320, 1), ('978-1', 'Ünï 🎉', NULL, NULL, -1, 0);
            CREATE TABLE shelf_book (shelf INTEGER, isbn TEXT, PRIMARY KEY (shelf, isbn));
            INSERT INTO shelf_book VALUES (1, '978-0'), (1, '978-1');
            """, on: url)
        let (snapshot, _) = try PlainSQLiteImporter.snapshot(from: url)

        for format in SnapshotFormat.allCases {
            let file = directory.file("app.\(format.fileExtension).gz")
            try snapshot.write(to: file, format: format, compression: .gzip)
            let read = try GenericSnapshot.read(from: file)
            // A property list says its values may stand in their JSON shapes where the hints
            // are silent, as the import's are.
            var expectedHeader = snapshot.header
            expectedHeader.jsonShapedValues = format == .binaryPropertyList ? true : nil
            #expect(read.header == expectedHeader)
            for (name, objects) in snapshot.entities {
                let expected = format == .json ? objects.map(Kit.asReadFromJSON) : objects
                #expect(read.objects(of: name) == expected, "\(format) \(name)")
            }
        }
    }
}
