import Foundation

/// The one error type GraphStore throws. Each case says what happened and where: the file, byte
/// offset, entity or id involved.
///
/// `description` is a sentence a person can act on:
///
/// ```swift
/// do { try context.save() } catch let error as GraphStoreError { print(error) }
/// ```
public enum GraphStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    // MARK: - Saving

    /// Other saves changed objects this save was based on; nothing was committed.
    case mergeConflict([MergeConflict])
    /// An object's unique value is already held by another object.
    case uniqueConstraintViolation(entity: String, constraint: String, value: String, existingID: String, incomingID: String)
    /// The save deletes an object that objects still reference through a `.deny` relationship.
    case deleteDenied(entity: String, id: String, referencingEntity: String, referencingID: String, relationship: String)
    /// An object references an id that names no object.
    case danglingReference(entity: String, id: String, relationship: String, targetEntity: String, targetID: String)
    /// Merging a duplicate into the existing object (unique constraint) could not move it to the existing id.
    case identityMergeFailed(entity: String, id: String, reason: String)
    /// The container was closed; nothing more can be saved.
    case containerClosed

    // MARK: - Fetching

    /// A fetch's predicate threw while evaluating an object.
    case predicateFailed(entity: String, id: String, reason: String)

    // MARK: - Files

    /// A store file is damaged; `offset` is the byte where reading failed, when known.
    case damagedFile(path: String, offset: Int?, reason: String)
    /// A store file was written by a newer GraphStore.
    case unsupportedFormatVersion(path: String, found: Int, supported: Int)
    /// Decompressing a store file, or expanding the values a property list shares, would exceed
    /// the configured bound (``SnapshotOptions/maxDecompressedBytes``).
    case decompressedSizeLimitExceeded(path: String, limit: Int)
    /// Another container or process holds the store open.
    case storeLocked(path: String)
    /// A file operation failed (for example disk full or permission denied).
    case fileOperationFailed(path: String, operation: String, reason: String)
    /// Values in a file could not be decoded as an entity, or an object could not be encoded.
    case codingFailed(path: String?, entity: String, id: String?, reason: String)
    /// A file is sound but of no kind GraphStore reads (not a snapshot, not SQLite); `reason`
    /// says what it looks like. Unlike ``damagedFile(path:offset:reason:)``, nothing is wrong
    /// with the file itself.
    case unrecognizedFile(path: String, reason: String)

    // MARK: - Model versions

    /// The store was written by a newer model version than the app's types describe
    /// (`supported`); it is left untouched.
    case newerModelVersion(path: String, found: Int, supported: Int)
    /// The store's model version is not a number and not the app's (`expected`).
    case unknownModelVersion(path: String, found: String, expected: String)
    /// Migrating an older store failed: a missing migration, a step that threw, or migrated
    /// data that the app's types or the graph's rules refuse. `fromVersion` and `toVersion`
    /// are those of the migration at fault (for a result that does not decode: the file's
    /// version and the app's); the store is left byte for byte as it was.
    case migrationFailed(path: String, fromVersion: Int, toVersion: Int, entity: String?, field: String?, id: String?, reason: String)

    // MARK: - Checks

    /// ``GraphContainer/checkInvariants()`` found an index or reference that does not match the
    /// objects.
    case invariantViolation(String)

    public var description: String {
        switch self {
        case .mergeConflict(let conflicts):
            let list = conflicts.prefix(10).map(\.description).joined(separator: "; ")
            let more = conflicts.count > 10 ? " (and \(conflicts.count - 10) more)" : ""
            return "Merge conflict: \(conflicts.count) object(s) changed by another save since this context changed them: \(list)\(more). Nothing was saved; refetch and retry, or use a different merge policy."
        case let .uniqueConstraintViolation(entity, constraint, value, existingID, incomingID):
            return "Unique constraint \(entity).\(constraint) violated: value \(value) is held by \(entity) \(existingID), and \(entity) \(incomingID) tries to take it. Nothing was saved."
        case let .deleteDenied(entity, id, referencingEntity, referencingID, relationship):
            return "Cannot delete \(entity) \(id): \(referencingEntity) \(referencingID) still references it through \(relationship) (delete rule .deny). Nothing was saved."
        case let .danglingReference(entity, id, relationship, targetEntity, targetID):
            return "\(entity) \(id).\(relationship) references \(targetEntity) \(targetID), which does not exist. Nothing was saved."
        case let .identityMergeFailed(entity, id, reason):
            return "Could not merge \(entity) \(id) into the existing object with the same unique value: \(sentence(reason))."
        case .containerClosed:
            return "The container is closed; open a new one to save."
        case let .predicateFailed(entity, id, reason):
            return "The fetch predicate failed on \(entity) \(id): \(sentence(reason))."
        case let .damagedFile(path, offset, reason):
            let at = offset.map { " at byte \($0)" } ?? ""
            return "The store file \(path) is damaged\(at): \(sentence(reason)). The file was left untouched."
        case let .unsupportedFormatVersion(path, found, supported):
            return "The store file \(path) has format version \(found), newer than this GraphStore reads (\(supported)). Update GraphStore to open it; the file was left untouched."
        case let .decompressedSizeLimitExceeded(path, limit):
            return "The store file \(path) is larger than the configured limit of \(limit) bytes once decompressed, or the values its property list shares expand past it. Raise the limit if the file is trusted; the file was left untouched."
        case let .storeLocked(path):
            return "The store \(path) is open in another container or process (its lock file is held). Close that one first."
        case let .fileOperationFailed(path, operation, reason):
            return "\(operation) failed for \(path): \(sentence(reason))."
        case let .unrecognizedFile(path, reason):
            return "\(path) is not a store GraphStore can read: \(sentence(reason)). The file was left untouched."
        case let .codingFailed(path, entity, id, reason):
            let file = path.map { " in \($0)" } ?? ""
            let object = id.map { " \($0)" } ?? ""
            return "Could not code \(entity)\(object)\(file): \(sentence(reason))."
        case let .newerModelVersion(path, found, supported):
            return "The store \(path) was written by model version \(found), newer than this app's model version \(supported). Open it with the newer app; the store was left untouched."
        case let .unknownModelVersion(path, found, expected):
            return "The store \(path) has model version \"\(found)\", which is not a number and not this app's (\"\(expected)\"). The store was left untouched."
        case let .migrationFailed(path, fromVersion, toVersion, entity, field, id, reason):
            // "at Note 42.body", "at Note.body", "at Note", "at field body", or nothing.
            var place = entity ?? ""
            if let id { place += place.isEmpty ? "object \(id)" : " \(id)" }
            if let field { place += place.isEmpty ? "field \(field)" : ".\(field)" }
            let atField = place.isEmpty ? "" : " at \(place)"
            return "Migrating the store \(path) from model version \(fromVersion) to \(toVersion) failed\(atField): \(sentence(reason)). The store was left untouched."
        case let .invariantViolation(message):
            return "Invariant violated: \(message)"
        }
    }

    /// `reason` without its closing period, so that a reason taken from another error's
    /// message (Foundation's decoding errors end in one) is not followed by a second one.
    private func sentence(_ reason: String) -> Substring {
        reason.hasSuffix(".") && !reason.hasSuffix("..") ? reason.dropLast() : Substring(reason)
    }
}

/// One object a save conflicted on.
public struct MergeConflict: Sendable, Hashable, CustomStringConvertible {
    /// How the stored object differs from what the saving context based its change on.
    public enum Kind: String, Sendable, Hashable {
        /// Another save inserted an object with this id after this context changed it.
        case insertedElsewhere
        /// Another save updated the object.
        case updatedElsewhere
        /// Another save deleted the object.
        case deletedElsewhere
    }

    /// The entity name.
    public let entity: String
    /// The object's id, as text.
    public let id: String
    /// What the other save did.
    public let kind: Kind
    /// The store version the context based its change on (`nil`: the object did not exist).
    public let baseVersion: UInt64?
    /// The object's version in the store now (`nil`: it does not exist). For a conflict a child
    /// context's save found with its parent's pending change: the version that change is based
    /// on.
    public let storedVersion: UInt64?

    /// A version a context made up for its own value after a `.mergeByProperty` merge is
    /// reported as the commit it stands just after.
    init(entity: String, id: String, kind: Kind, baseVersion: UInt64?, storedVersion: UInt64?) {
        self.entity = entity
        self.id = id
        self.kind = kind
        self.baseVersion = baseVersion.map(StoredObject.commitNumber)
        self.storedVersion = storedVersion.map(StoredObject.commitNumber)
    }

    public var description: String {
        "\(entity) \(id) \(kind.rawValue) (based on version \(baseVersion.map(String.init) ?? "none"), stored \(storedVersion.map(String.init) ?? "none"))"
    }
}
