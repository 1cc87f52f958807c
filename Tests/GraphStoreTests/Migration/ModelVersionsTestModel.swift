import Foundation
import GraphStore

/// A small model in three versions. Version 1 wrote the committed fixtures under
/// `Fixtures/ModelVersions`; the tests open them with version 3 through migrations.
enum ModelV1 {
    struct Tag: Entity, Equatable {
        var id: UUID
        var name: String
        static var entityName: String { "Tag" }
        static var uniqueConstraints: [UniqueConstraint<Tag>] { [UniqueConstraint(\.name)] }
    }

    struct Memo: Entity, Equatable {
        var id: UUID
        var text: String
        var createdAt: Date
        var legacy: String
        var attachment: Data
        var tagIDs: [Tag.ID]
        static var entityName: String { "Memo" }
        static var relationships: [Relationship<Memo>] { [.toMany(\.tagIDs, Tag.self, deleteRule: .nullify)] }
    }

    struct Draft: Entity, Equatable {
        var id: Int
        var text: String
        static var entityName: String { "Draft" }
    }

    static let types: [any Entity.Type] = [Tag.self, Memo.self, Draft.self]

    static let epoch = Date(timeIntervalSinceReferenceDate: 800_000_000.125)
    static func uuid(_ n: Int) -> UUID { UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", n))! }

    static let tags = [Tag(id: uuid(1), name: "swift"), Tag(id: uuid(2), name: "linux")]
    static let memos: [Memo] = (0..<4).map(memo)

    static func memo(_ n: Int) -> Memo {
        let tagIDs: [UUID] = n % 2 == 0 ? [uuid(1)] : [uuid(1), uuid(2)]
        let createdAt = epoch.addingTimeInterval(Double(n) * 60.5)
        let attachment = Data([UInt8(n), 0xFF, 0x00])
        return Memo(
            id: uuid(100 + n), text: "Memo number \(n): a body longer than forty characters, ünïcödé ✓",
            createdAt: createdAt, legacy: "old-\(n)", attachment: attachment, tagIDs: tagIDs)
    }

    static let drafts = [Draft(id: 1, text: "draft")]
}

/// Version 3: `Memo` became `Note`, `text` became `body`, `pinned` and `title` were added,
/// `legacy` and `Draft` removed.
enum ModelV3 {
    struct Tag: Entity, Equatable {
        var id: UUID
        var name: String
        static var entityName: String { "Tag" }
        static var uniqueConstraints: [UniqueConstraint<Tag>] { [UniqueConstraint(\.name)] }
    }

    struct Note: Entity, Equatable {
        var id: UUID
        var body: String
        var title: String
        var createdAt: Date
        var pinned: Bool = false
        var attachment: Data
        var tagIDs: [Tag.ID]
        static var entityName: String { "Note" }
        static var relationships: [Relationship<Note>] { [.toMany(\.tagIDs, Tag.self, deleteRule: .nullify)] }
    }

    static let types: [any Entity.Type] = [Tag.self, Note.self]

    static let oneToTwo = SchemaMigration(from: 1, to: 2, [
        .renameEntity("Memo", to: "Note"),
        .renameField("text", to: "body", in: "Note"),
        .addField("pinned", in: "Note", default: .bool(false)),
    ])
    static let twoToThree = SchemaMigration(from: 2, to: 3, [
        .removeField("legacy", in: "Note"),
        .removeEntity("Draft"),
        .transform("Note") { object in
            if case .string(let body)? = object["body"] { object["title"] = .string(String(body.prefix(40))) }
        },
    ])
    static let migrations = [oneToTwo, twoToThree]

    /// What version 3 reads from the version-1 objects.
    static func expected(_ memo: ModelV1.Memo) -> Note {
        Note(
            id: memo.id, body: memo.text, title: String(memo.text.prefix(40)), createdAt: memo.createdAt, pinned: false,
            attachment: memo.attachment, tagIDs: memo.tagIDs)
    }
}

/// The committed fixtures.
enum ModelVersionFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/ModelVersions")

    /// Copies the fixture files named `names` into `destination` (a temporary directory).
    static func copy(_ names: [String], to destination: URL) throws {
        for name in names {
            try FileManager.default.copyItem(at: directory.appendingPathComponent(name), to: destination.appendingPathComponent(name))
        }
    }
}
