import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import GraphStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Opening a SQLite store with saves in its journal (a crash left them) on a disk with little
/// room: the open either works with every save, or fails leaving every file as it was. Before,
/// two opens failed after their transaction had committed: a migration whose old journal could
/// not be replaced (the store then held the new model, and the old app could not open it), and
/// a replay whose covered journal records could not be dropped.
@Suite(.serialized) struct SQLiteOpenOnFullDiskTests {
    /// Every file in `directory` but the filler, by name.
    static func files(in directory: URL) -> [String: Data] {
        SQLiteJournalTestKit.snapshot(of: directory).filter { $0.key != "filler" }
    }

    /// Fills `tmpfs` but `freePages` pages of 4 KiB; returns the filler.
    static func fill(_ tmpfs: Tmpfs, leaving freePages: Int) throws -> URL {
        let filler = try tmpfs.fillUp()
        let size = try #require((try FileManager.default.attributesOfItem(atPath: filler.path)[.size] as? NSNumber)?.intValue)
        try #require(truncate(filler.path, off_t(max(0, size - freePages * 4096))) == 0)
        return filler
    }

    /// Opens a store with `open` on `tmpfs` filled but `freePages` pages and runs `check` on
    /// it; when the open throws, expects every file in `directory` as it was before, and
    /// returns the error. The filler is removed again either way.
    static func open(
        on tmpfs: Tmpfs, leaving freePages: Int, files directory: URL, _ open: () throws -> GraphContainer,
        check: (GraphContainer) throws -> Void
    ) async throws -> (any Error)? {
        let before = files(in: directory)
        let filler = try fill(tmpfs, leaving: freePages)
        defer { try? tmpfs.removeFiller(filler) }
        do {
            let container = try open()
            try check(container)
            try? await container.close()
            return nil
        } catch {
            #expect(files(in: directory) == before, "\(freePages) pages free: the failed open changed files: \(error)")
            return error
        }
    }

    @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
    func aMigrationAtOpenWithAJournalPendingOpensOrLeavesEveryFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 1024)
        defer { tmpfs.unmount() }
        // A version-1 store whose last save is in its journal only.
        let source = try SQLiteMigrationTestKit.copyFixture(to: directory)
        try await SQLiteJournalTestKit.leaveInJournalOnly(source, model: ModelV1.types) { context in
            context.insert(ModelV1.Memo(
                id: ModelV1.uuid(200), text: "Added in the journal", createdAt: ModelV1.epoch, legacy: "x", attachment: Data([7]),
                tagIDs: [ModelV1.uuid(2)]))
            try context.save()
        }
        var opened = 0, refused = 0
        for freePages in stride(from: 0, to: 40, by: 2) {
            let folder = tmpfs.url.appendingPathComponent("free-\(freePages)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let url = folder.appendingPathComponent("store.sqlite")
            try FileManager.default.copyItem(at: source, to: url)
            try FileManager.default.copyItem(at: SQLiteJournalTestKit.journal(of: source), to: SQLiteJournalTestKit.journal(of: url))
            let error = try await Self.open(on: tmpfs, leaving: freePages, files: folder) { try SQLiteMigrationTestKit.open(url) } check: { container throws in
                #expect(try SQLiteMigrationTestKit.notes(container).count == 5, "\(freePages) pages free")
            }
            if let error {
                #expect("\(error)".contains(folder.path), "\(error)")
                refused += 1
            } else {
                opened += 1
            }
            let again = try SQLiteMigrationTestKit.open(url)
            let notes = try SQLiteMigrationTestKit.notes(again)
            #expect(notes.count == 5 && notes.contains { $0.body == "Added in the journal" }, "\(freePages) pages free: \(notes.map(\.body))")
            try await again.close()
            try FileManager.default.removeItem(at: folder)
        }
        // Both outcomes were met: the loop crossed the room the open needs.
        #expect(opened > 0 && refused > 0, "opened \(opened), refused \(refused)")
    }

    @Test(.enabled(if: Tmpfs.isSupported, Tmpfs.requirement))
    func aCrashedStoreOpensOrLeavesEveryFile() async throws {
        var opened = 0
        for freePages in [0, 2, 4, 6] {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let tmpfs = try Tmpfs.mount(in: directory, sizeKiB: 1024)
            defer { tmpfs.unmount() }
            let url = tmpfs.url.appendingPathComponent("store.sqlite")
            let container = try SQLiteTestKit.open(url)
            for index in 0..<5 { try SQLiteJournalTestKit.saveNote("in the database \(index)", in: container.mainContext) }
            try await container.close()
            try await SQLiteJournalTestKit.leaveInJournalOnly(url, model: SQLiteTestKit.model) { context in
                for index in 0..<5 { try SQLiteJournalTestKit.saveNote("in the journal \(index)", in: context) }
            }
            let error = try await Self.open(on: tmpfs, leaving: freePages, files: tmpfs.url) { try SQLiteTestKit.open(url) } check: { container throws in
                #expect(try SQLiteJournalTestKit.noteTexts(container).count == 10, "\(freePages) pages free")
            }
            if error == nil { opened += 1 }
            let withRoom = try SQLiteTestKit.open(url)
            #expect(try SQLiteJournalTestKit.noteTexts(withRoom).count == 10)
            try await withRoom.close()
        }
        #expect(opened > 0)
    }
}
