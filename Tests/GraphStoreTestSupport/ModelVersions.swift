import Foundation
import GraphStore
import Testing

/// A small model in three versions. Version 1 wrote the committed fixtures under
/// `Tests/GraphStoreTests/Fixtures/ModelVersions` (snapshots) and
/// `Tests/GraphStoreSQLiteTests/Fixtures/ModelVersions` (SQLite); the tests open them with
/// version 3 through migrations.
public enum ModelV1 {
    public struct Tag: Entity, Equatable {
        public var id: UUID
        public var name: String
        public static var entityName: String { "Tag" }
        public static var uniqueConstraints: [UniqueConstraint<Tag>] { [UniqueConstraint(\.name)] }

        public init(id: UUID, name: String) {
            self.id = id
            self.name = name
        }
    }

    public struct Memo: Entity, Equatable {
        public var id: UUID
        public var text: String
        public var createdAt: Date
        public var legacy: String
        public var attachment: Data
        public var tagIDs: [Tag.ID]
        public static var entityName: String { "Memo" }
        public static var relationships: [Relationship<Memo>] { [.toMany(\.tagIDs, Tag.self, deleteRule: .nullify)] }

        public init(id: UUID, text: String, createdAt: Date, legacy: String, attachment: Data, tagIDs: [Tag.ID]) {
            self.id = id
            self.text = text
            self.createdAt = createdAt
            self.legacy = legacy
            self.attachment = attachment
            self.tagIDs = tagIDs
        }
    }

    public struct Draft: Entity, Equatable {
        public var id: Int
        public var text: String
        public static var entityName: String { "Draft" }

        public init(id: Int, text: String) {
            self.id = id
            self.text = text
        }
    }

    public static let types: [any Entity.Type] = [Tag.self, Memo.self, Draft.self]

    public static let epoch = Date(timeIntervalSinceReferenceDate: 800_000_000.125)
    public static func uuid(_ n: Int) -> UUID { UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", n))! }

    public static let tags = [Tag(id: uuid(1), name: "swift"), Tag(id: uuid(2), name: "linux")]
    public static let memos: [Memo] = (0..<4).map(memo)

    public static func memo(_ n: Int) -> Memo {
        let tagIDs: [UUID] = n % 2 == 0 ? [uuid(1)] : [uuid(1), uuid(2)]
        let createdAt = epoch.addingTimeInterval(Double(n) * 60.5)
        let attachment = Data([UInt8(n), 0xFF, 0x00])
        return Memo(
            id: uuid(100 + n), text: "Memo number \(n): a body longer than forty characters, ünïcödé ✓",
            createdAt: createdAt, legacy: "old-\(n)", attachment: attachment, tagIDs: tagIDs)
    }

    public static let drafts = [Draft(id: 1, text: "draft")]
}

/// Version 3: `Memo` became `Note`, `text` became `body`, `pinned` and `title` were added,
/// `legacy` and `Draft` removed.
public enum ModelV3 {
    public struct Tag: Entity, Equatable {
        public var id: UUID
        public var name: String
        public static var entityName: String { "Tag" }
        public static var uniqueConstraints: [UniqueConstraint<Tag>] { [UniqueConstraint(\.name)] }

        public init(id: UUID, name: String) {
            self.id = id
            self.name = name
        }
    }

    public struct Note: Entity, Equatable {
        public var id: UUID
        public var body: String
        public var title: String
        public var createdAt: Date
        public var pinned: Bool = false
        public var attachment: Data
        public var tagIDs: [Tag.ID]
        public static var entityName: String { "Note" }
        public static var relationships: [Relationship<Note>] { [.toMany(\.tagIDs, Tag.self, deleteRule: .nullify)] }

        public init(id: UUID, body: String, title: String, createdAt: Date, pinned: Bool = false, attachment: Data, tagIDs: [Tag.ID]) {
            self.id = id
            self.body = body
            self.title = title
            self.createdAt = createdAt
            self.pinned = pinned
            self.attachment = attachment
            self.tagIDs = tagIDs
        }
    }

    public static let types: [any Entity.Type] = [Tag.self, Note.self]

    public static let oneToTwo = SchemaMigration(from: 1, to: 2, [
        .renameEntity("Memo", to: "Note"),
        .renameField("text", to: "body", in: "Note"),
        .addField("pinned", in: "Note", default: .bool(false)),
    ])
    public static let twoToThree = SchemaMigration(from: 2, to: 3, [
        .removeField("legacy", in: "Note"),
        .removeEntity("Draft"),
        .transform("Note") { object in
            if case .string(let body)? = object["body"] { object["title"] = .string(String(body.prefix(40))) }
        },
    ])
    public static let migrations = [oneToTwo, twoToThree]

    /// What version 3 reads from the version-1 objects.
    public static func expected(_ memo: ModelV1.Memo) -> Note {
        Note(
            id: memo.id, body: memo.text, title: String(memo.text.prefix(40)), createdAt: memo.createdAt, pinned: false,
            attachment: memo.attachment, tagIDs: memo.tagIDs)
    }
}


/// Opens `store` with the version-1 types, from a container that declares no model version
/// but whose store's model-version option names 2, and expects the refusal of a missing link:
/// `migrationFailed` from 1 to 2 naming `path`, saying the container declares no migrations
/// (and, with `saysUntouched`, that the file was left untouched).
public func expectUndeclaredNewerOptionRefused(
    _ store: StoreConfiguration, path: String, saysUntouched: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    do {
        let container = try GraphContainer(for: ModelV1.types, store: store)
        try await container.close()
        Issue.record("the store opened", sourceLocation: sourceLocation)
    } catch let error as GraphStoreError {
        guard case .migrationFailed(let failedPath, 1, 2, nil, nil, nil, let reason) = error else {
            Issue.record("\(error)", sourceLocation: sourceLocation)
            return
        }
        #expect(failedPath == path, sourceLocation: sourceLocation)
        #expect(reason.contains("declares no migrations"), sourceLocation: sourceLocation)
        if saysUntouched { #expect(error.description.contains("left untouched"), sourceLocation: sourceLocation) }
    }
}
