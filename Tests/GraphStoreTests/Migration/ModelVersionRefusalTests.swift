import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// Every way a migration at open can fail is a `GraphStoreError` naming the file, the versions
/// and where it failed, and leaves every file of the store byte for byte as it was.
@Suite struct ModelVersionRefusalTests {
    struct Failed: Error, CustomStringConvertible {
        var description: String { "no body to migrate" }
    }

    /// The fixture `names` in a fresh directory, and every file's bytes there.
    static func store(_ names: [String] = ["v1.json.gz"], in directory: TemporaryDirectory) throws -> (URL, [String: Data]) {
        try ModelVersionFixtures.copy(names, to: directory.url)
        return (directory.file(names[0]), try contents(of: directory.url))
    }

    /// The bytes of every file in `directory` but the lock file (which opening creates).
    static func contents(of directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where !name.hasSuffix(".lock") {
            files[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return files
    }

    /// Opens `url` with version 3 and `migrations`, expecting a failed migration; returns it.
    static func refused(
        _ url: URL, version: Int = 3, migrations: [SchemaMigration], types: [any Entity.Type] = ModelV3.types
    ) throws -> GraphStoreError {
        do {
            _ = try GraphContainer(for: types, store: .file(url), version: version, migrations: migrations)
        } catch let error as GraphStoreError {
            #expect(error.description.contains(url.path))
            #expect(error.description.contains("left untouched"))
            return error
        }
        Issue.record("the store opened")
        return .containerClosed
    }

    @Test(arguments: [["v1.json.gz"], ["v1.plist"], ["v1-crashed.json.gz", "v1-crashed.json.gz.journal"]])
    func aMissingLinkInTheChain(names: [String]) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(names, in: directory)
        let error = try Self.refused(url, migrations: [ModelV3.twoToThree])
        guard case .migrationFailed(let path, 1, 3, nil, nil, nil, let reason) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(path == url.path)
        #expect(reason.contains("no migration starts from model version 1"))
        #expect(try Self.contents(of: directory.url) == before)
    }

    @Test func aNewerStoreIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, _) = try Self.store(in: directory)
        let container = try GraphContainer(for: ModelV3.types, store: .file(url), version: 3, migrations: ModelV3.migrations)
        try await container.close()
        let before = try Self.contents(of: directory.url)
        #expect {
            _ = try GraphContainer(for: ModelV3.types, store: .file(url), version: 2, migrations: [ModelV3.oneToTwo])
        } throws: { error in
            error as? GraphStoreError == .newerModelVersion(path: url.path, found: 3, supported: 2)
        }
        #expect(try Self.contents(of: directory.url) == before)
    }

    @Test func aThrowingTransformNamesTheObject() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(in: directory)
        let throwing = SchemaMigration(from: 2, to: 3, [
            .removeField("legacy", in: "Note"), .removeEntity("Draft"),
            .transform("Note") { object in
                if object["id"] == .string(ModelV1.uuid(102).uuidString) { throw Failed() }
                object["title"] = .string("t")
            },
        ])
        let error = try Self.refused(url, migrations: [ModelV3.oneToTwo, throwing])
        guard case .migrationFailed(_, 2, 3, "Note", nil, let id, let reason) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(id == ModelV1.uuid(102).uuidString)
        #expect(reason.contains("no body to migrate"))
        #expect(try Self.contents(of: directory.url) == before)
    }

    @Test func aResultThatDoesNotDecodeNamesTheFieldAndTheStep() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(["v1.plist"], in: directory)
        let withoutPinned = SchemaMigration(from: 1, to: 2, [.renameEntity("Memo", to: "Note"), .renameField("text", to: "body", in: "Note")])
        let error = try Self.refused(url, migrations: [withoutPinned, ModelV3.twoToThree])
        guard case .migrationFailed(_, 1, 3, "Note", "pinned", let id, let reason) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(id != nil)
        #expect(reason.contains(".addField(\"pinned\", in: \"Note\""))
        #expect(try Self.contents(of: directory.url) == before)
    }

    @Test func aFieldTheAppWouldDropIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(in: directory)
        let keepingLegacy = SchemaMigration(from: 2, to: 3, [
            .removeEntity("Draft"),
            .transform("Note") { object in object["title"] = .string("t") },
        ])
        let error = try Self.refused(url, migrations: [ModelV3.oneToTwo, keepingLegacy])
        guard case .migrationFailed(_, 1, 3, "Note", "legacy", _, let reason) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(reason.contains(".removeField(\"legacy\", in: \"Note\")"))
        #expect(try Self.contents(of: directory.url) == before)
    }

    @Test func aUniqueConstraintViolatedByTheMigratedData() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(in: directory)
        let sameNames = SchemaMigration(from: 2, to: 3, ModelV3.twoToThree.steps + [.transform("Tag") { $0["name"] = .string("same") }])
        let error = try Self.refused(url, migrations: [ModelV3.oneToTwo, sameNames])
        guard case .migrationFailed(_, 1, 3, _, _, _, let reason) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(reason.contains("Tag"))
        #expect(reason.contains("same"))
        #expect(try Self.contents(of: directory.url) == before)
    }

    @Test func aRemovedEntityStillReferencedIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(in: directory)
        let dropTags = SchemaMigration(from: 2, to: 3, ModelV3.twoToThree.steps + [.removeEntity("Tag")])
        let error = try Self.refused(url, migrations: [ModelV3.oneToTwo, dropTags])
        guard case .migrationFailed(_, 1, 3, _, _, _, let reason) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(reason.contains("Tag"))
        #expect(try Self.contents(of: directory.url) == before)
    }

    @Test func renamingOntoAnEntityWithObjectsIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(in: directory)
        let clash = SchemaMigration(from: 1, to: 2, [.renameEntity("Draft", to: "Tag")] + ModelV3.oneToTwo.steps)
        let error = try Self.refused(url, migrations: [clash, ModelV3.twoToThree])
        guard case .migrationFailed(_, 1, 2, "Tag", nil, nil, let reason) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(reason.contains(".renameEntity(\"Draft\", to: \"Tag\")"))
        #expect(try Self.contents(of: directory.url) == before)
    }

    /// Without a version, mismatches are reported at open with the step that would fix them.
    @Test func mismatchesAtOpenNameTheStepThatWouldFixThem() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (url, before) = try Self.store(in: directory)
        #expect {
            _ = try GraphContainer(for: ModelV3.types + [ModelV1.Draft.self], store: .file(url))
        } throws: { error in
            guard case .codingFailed(let path, "Memo", nil, let reason) = error as? GraphStoreError else { return false }
            return path == url.path && reason.contains(".renameEntity(\"Memo\", to: …)") && reason.contains(".removeEntity(\"Memo\")")
        }
        struct DraftByNumber: Entity {
            var id: Int
            var text: Int
            static var entityName: String { "Draft" }
        }
        #expect {
            _ = try GraphContainer(for: [ModelV1.Tag.self, ModelV1.Memo.self, DraftByNumber.self], store: .file(url))
        } throws: { error in
            guard case .codingFailed(_, "Draft", _, let reason) = error as? GraphStoreError else { return false }
            return reason.contains(".transform(\"Draft\")")
        }
        struct PinnedDraft: Entity {
            var id: Int
            var text: String
            var pinned: Bool
            static var entityName: String { "Draft" }
        }
        #expect {
            _ = try GraphContainer(for: [ModelV1.Tag.self, ModelV1.Memo.self, PinnedDraft.self], store: .file(url))
        } throws: { error in
            guard case .codingFailed(_, "Draft", _, let reason) = error as? GraphStoreError else { return false }
            return reason.contains(".addField(\"pinned\", in: \"Draft\"")
        }
        #expect(try Self.contents(of: directory.url) == before)
    }
}
