import GraphStore
import GraphStoreSQLite
import Testing

/// What a destination's file name says it should be.
@Suite struct StoreFileNameTests {
    @Test(arguments: [
        ("App.sqlite", StoreFileName.sqlite),
        ("dir/App.SQLITE3", .sqlite),
        ("data.db", .sqlite),
        ("store.json", .snapshot(.json, .none)),
        ("store.json.gz", .snapshot(.json, .gzip)),
        ("Store.Plist", .snapshot(.binaryPropertyList, .none)),
        ("/tmp/x/store.plist.GZ", .snapshot(.binaryPropertyList, .gzip)),
    ])
    func namesTellTheKind(name: String, kind: StoreFileName) {
        #expect(StoreFileName(fileName: name) == kind)
    }

    @Test(arguments: ["notes.txt", "store.gz", "sqlite", "store.json.bak", ""])
    func otherNamesTellNothing(name: String) {
        #expect(StoreFileName(fileName: name) == nil)
    }

    @Test func formatAndCompressionOnlyForSnapshots() {
        #expect(StoreFileName.sqlite.format == nil)
        #expect(StoreFileName.sqlite.compression == nil)
        #expect(StoreFileName.snapshot(.binaryPropertyList, .gzip).format == .binaryPropertyList)
        #expect(StoreFileName.snapshot(.binaryPropertyList, .gzip).compression == .gzip)
    }
}
