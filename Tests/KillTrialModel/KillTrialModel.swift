import Foundation
import GraphStore

/// The model of the migration kill trials, in two versions, shared by the crash helper (which
/// writes a version-1 store and then opens it with version 2 until it is killed) and the tests
/// (which check what the kills left with both versions).
///
/// Version 1 keeps `Memo`s; version 2 renamed them `Note`, renamed `text` to `body`, added
/// `pinned` and dropped `legacy` (``KillTrialModelV2/migrations``).
public enum KillTrialModelV1 {
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
        public var number: Int
        public var text: String
        public var legacy: String
        public var tagIDs: [Tag.ID]
        public static var entityName: String { "Memo" }
        public static var relationships: [Relationship<Memo>] { [.toMany(\.tagIDs, Tag.self, deleteRule: .nullify)] }

        public init(id: UUID, number: Int, text: String, legacy: String, tagIDs: [Tag.ID]) {
            self.id = id
            self.number = number
            self.text = text
            self.legacy = legacy
            self.tagIDs = tagIDs
        }
    }

    public static let types: [any Entity.Type] = [Tag.self, Memo.self]
}

public enum KillTrialModelV2 {
    public struct Note: Entity, Equatable {
        public var id: UUID
        public var number: Int
        public var body: String
        public var pinned: Bool
        public var tagIDs: [KillTrialModelV1.Tag.ID]
        public static var entityName: String { "Note" }
        public static var relationships: [Relationship<Note>] { [.toMany(\.tagIDs, KillTrialModelV1.Tag.self, deleteRule: .nullify)] }

        public init(id: UUID, number: Int, body: String, pinned: Bool, tagIDs: [KillTrialModelV1.Tag.ID]) {
            self.id = id
            self.number = number
            self.body = body
            self.pinned = pinned
            self.tagIDs = tagIDs
        }
    }

    /// `Tag` is the same in both versions.
    public static let types: [any Entity.Type] = [KillTrialModelV1.Tag.self, Note.self]

    public static let migrations = [
        SchemaMigration(from: 1, to: 2, [
            .renameEntity("Memo", to: "Note"),
            .renameField("text", to: "body", in: "Note"),
            .addField("pinned", in: "Note", default: .bool(false)),
            .removeField("legacy", in: "Note"),
        ])
    ]

    /// The numbers of the notes a version-2 process saves: save `n` (counted over every process
    /// that opened the store with version 2) inserts note `firstSaved + n`.
    public static let firstSaved = 1_000_000

    /// The note save `n` of a version-2 process inserts.
    public static func savedNote(_ n: Int, tag: KillTrialModelV1.Tag.ID) -> Note {
        Note(id: KillTrialSeed.uuid(firstSaved + n), number: firstSaved + n, body: "saved by version 2, save \(n)", pinned: false, tagIDs: [tag])
    }
}

/// What the version-1 process writes: `objects` memos (and their tags) that reach its snapshot
/// file or database, then `journaled` saves that reach only its journal before it is killed.
/// Save `n` of a version-2 process also pins the memo numbered ``pinned(bySave:)``.
public struct KillTrialSeed: Sendable {
    public var objects: Int
    public var journaled: Int

    public static let tagCount = 50

    public init(objects: Int, journaled: Int) {
        precondition(journaled < objects / 2, "the journaled saves edit and delete distinct memos")
        self.objects = objects
        self.journaled = journaled
    }

    public static func uuid(_ n: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!
    }

    public static let tags: [KillTrialModelV1.Tag] = (0..<tagCount).map { KillTrialModelV1.Tag(id: uuid(900_000_000 + $0), name: "tag \($0)") }

    public static func memo(_ n: Int) -> KillTrialModelV1.Memo {
        KillTrialModelV1.Memo(
            id: uuid(n), number: n, text: "memo \(n) " + String(repeating: "ü", count: n % 40), legacy: "legacy \(n)",
            tagIDs: n % 3 == 0 ? [tags[n % tagCount].id, tags[(n * 7 + 1) % tagCount].id] : [tags[n % tagCount].id])
    }

    /// The memos the snapshot file or database holds, 1...objects.
    public var stored: [KillTrialModelV1.Memo] { (1...objects).map(Self.memo) }

    /// Journaled save `j` (1...journaled): inserts memo `objects + j`, edits memo `j` and deletes
    /// memo `objects / 2 + j`.
    public func journaledSave(_ j: Int) -> (upserts: [KillTrialModelV1.Memo], delete: UUID) {
        var edited = Self.memo(j)
        edited.text = "memo \(j) edited by journaled save \(j)"
        return ([Self.memo(objects + j), edited], Self.uuid(objects / 2 + j))
    }

    /// Every memo of the version-1 store once its journal is replayed, by id.
    public var expected: [UUID: KillTrialModelV1.Memo] {
        var memos = Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0) })
        for j in 0..<journaled {
            let save = journaledSave(j + 1)
            for memo in save.upserts { memos[memo.id] = memo }
            memos[save.delete] = nil
        }
        return memos
    }

    /// The memo a version-2 save `n` pins: 1...objects/2 round and round, none of them deleted.
    public func pinned(bySave n: Int) -> Int { (n - 1) % (objects / 2) + 1 }

    /// What version 2 reads from `memo` after `saves` saves of version 2.
    public func migrated(_ memo: KillTrialModelV1.Memo, afterSaves saves: Int) -> KillTrialModelV2.Note {
        let pinned = memo.number <= min(saves, objects / 2)
        return KillTrialModelV2.Note(id: memo.id, number: memo.number, body: memo.text, pinned: pinned, tagIDs: memo.tagIDs)
    }
}
