import Foundation

/// How far a migration has got with one entity: what a terminal progress bar draws.
///
/// ```swift
/// let (snapshot, report) = try PlainSQLiteImporter.snapshot(from: url) { progress in
///     print("\(progress.entity): \(progress.done)/\(progress.total)")
/// }
/// ```
///
/// An importer reports each entity once with `done == 0` before its first object, every
/// ``reportingInterval`` objects while it reads, and once with `done == total` after its last
/// one, so a caller sees every entity finish, including an empty one (`0/0`). Entities are
/// reported one after another, never interleaved.
public struct MigrationProgress: Sendable, Hashable, CustomStringConvertible {
    /// The entity being read, by its name in the snapshot.
    public var entity: String
    /// The objects of the entity read so far.
    public var done: Int
    /// The objects the entity has in all.
    public var total: Int

    /// The number of objects between two reports while an entity is read.
    public static let reportingInterval = 1_000

    /// Progress of `done` of `total` objects of `entity`.
    public init(entity: String, done: Int, total: Int) {
        self.entity = entity
        self.done = done
        self.total = total
    }

    /// `done / total`, and 1 for an empty entity.
    public var fractionCompleted: Double {
        total == 0 ? 1 : Double(done) / Double(total)
    }

    public var description: String {
        "\(entity): \(done)/\(total)"
    }
}

// MARK: - Internal

/// Reports one entity's progress to an optional callback at the start, every
/// ``MigrationProgress/reportingInterval`` objects, and the end.
struct ProgressReporter {
    private let callback: (@Sendable (MigrationProgress) -> Void)?
    private var progress: MigrationProgress

    /// Reports `0/total` for `entity`.
    init(entity: String, total: Int, callback: (@Sendable (MigrationProgress) -> Void)?) {
        self.callback = callback
        progress = MigrationProgress(entity: entity, done: 0, total: total)
        callback?(progress)
    }

    /// Counts one more object, reporting when an interval is complete (but not the last object,
    /// which ``finish()`` reports).
    mutating func advance() {
        progress.done += 1
        if progress.done % MigrationProgress.reportingInterval == 0, progress.done < progress.total {
            callback?(progress)
        }
    }

    /// Reports `done/total` after the last object.
    func finish() {
        callback?(progress)
    }
}
