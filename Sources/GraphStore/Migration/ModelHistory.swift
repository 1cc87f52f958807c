import Foundation

/// The model version a container's types describe and the migrations that lead to it; set by
/// ``GraphContainer/init(for:store:version:migrations:)`` and read by the stores when they open.
package struct ModelHistory: Sendable {
    /// The app's model version.
    package var version: Int
    /// The declared migrations, sorted by ``SchemaMigration/from``.
    package var migrations: [SchemaMigration]
    /// Whether the container was given a version or migrations; when not, a snapshot store's
    /// ``SnapshotOptions/modelVersion`` says the version, as before model versions were read.
    package var isDeclared: Bool

    package init(version: Int = 1, migrations: [SchemaMigration] = [], isDeclared: Bool = false) {
        precondition(version >= 1, "GraphStore: a model version is at least 1 (got \(version)).")
        var seen: Set<Int> = []
        for migration in migrations {
            precondition(seen.insert(migration.from).inserted, "GraphStore: two migrations start from model version \(migration.from).")
            precondition(migration.to <= version, "GraphStore: a migration leads to model version \(migration.to), newer than the container's \(version).")
        }
        self.version = version
        self.migrations = migrations.sorted { $0.from < $1.from }
        self.isDeclared = isDeclared
    }

    /// The model version written into headers: the declared version, or else `option` (the
    /// store's own model-version setting).
    package func label(option: String) -> String {
        isDeclared ? String(version) : option
    }

    /// The app's model version as a number, for a store configured with the model-version
    /// setting `option`: the declared version, or else the number `option` names (`nil` when
    /// it names none).
    ///
    /// Every decision about an older file takes the app's version from here: the comparison,
    /// the chain of migrations and the versions errors name. A container that declares no
    /// version has no migrations, so a file whose number is lower than the option's is refused
    /// as a missing link (see ``chain(from:to:)``), every file left as it was: the docs promise
    /// that a number in the option is the app's version, and an older version needs a step.
    package func appVersion(option: String) -> Int? {
        isDeclared ? version : Int(option)
    }

    /// What a store whose file says model version `found` needs, for a store configured with
    /// the model-version setting `option`.
    package func compare(found: String, option: String) -> Comparison {
        let label = label(option: option)
        if found == label { return .same }
        let app = appVersion(option: option)
        guard let app, let stored = Int(found.trimmingCharacters(in: .whitespaces)), stored >= 1 else {
            // Before model versions were read, any label opened: a container that declares no
            // version still opens a file whose label is not a number (outside tools write some).
            return isDeclared ? .unknown(expected: label) : .same
        }
        if stored == app { return .same }
        return stored > app ? .newer(stored, app: app) : .older(stored, app: app)
    }

    package enum Comparison: Equatable, Sendable {
        /// The file is in the app's model version.
        case same
        /// The file is older: migrate from the first version to the second.
        case older(Int, app: Int)
        /// The file was written by a newer model.
        case newer(Int, app: Int)
        /// A model version that is not a number and not the app's label, for a container
        /// that declares its version.
        case unknown(expected: String)
    }

    /// The migrations from `stored` to `target`, the app's version (``appVersion(option:)``),
    /// in order.
    ///
    /// - Throws: ``MigrationFailure`` naming the first version no migration starts from; for a
    ///   container that declares no version (whose model-version option names a newer number
    ///   than the file's), one that says so.
    /// - Complexity: O(migrations).
    package func chain(from stored: Int, to target: Int) throws(MigrationFailure) -> [SchemaMigration] {
        var chain: [SchemaMigration] = []
        var current = stored
        while current < target {
            guard let next = migrations.first(where: { $0.from == current }) else {
                guard isDeclared else {
                    throw MigrationFailure(
                        from: stored, to: target,
                        reason: "the store's model-version option says \(target) and the file was written by model version \(stored), but the container declares no migrations; pass version: \(target) and SchemaMigration(from: \(stored), to: \(target), …) to the container, or keep the option at \(stored)")
                }
                let declared = migrations.map { "\($0.from)→\($0.to)" }.joined(separator: ", ")
                throw MigrationFailure(
                    from: current, to: target,
                    reason: "no migration starts from model version \(current) (declared: \(declared.isEmpty ? "none" : declared)); add SchemaMigration(from: \(current), to: …) to the container's migrations")
            }
            chain.append(next)
            current = next.to
        }
        return chain
    }
}

/// Why a migration failed, and where: the step's versions and, when known, the entity, field
/// and object id.
package struct MigrationFailure: Error, Sendable, Equatable {
    package var from: Int
    package var to: Int
    package var entity: String?
    package var field: String?
    package var id: String?
    package var reason: String

    package init(from: Int, to: Int, entity: String? = nil, field: String? = nil, id: String? = nil, reason: String) {
        self.from = from
        self.to = to
        self.entity = entity
        self.field = field
        self.id = id
        self.reason = reason
    }

    /// The public error for the store file at `path`.
    package func error(path: String) -> GraphStoreError {
        .migrationFailed(path: path, fromVersion: from, toVersion: to, entity: entity, field: field, id: id, reason: reason)
    }
}
