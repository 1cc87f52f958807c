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

    /// What a store whose file says model version `found` needs, for a store configured with
    /// the model-version setting `option`.
    package func compare(found: String, option: String) -> Comparison {
        let label = label(option: option)
        if found == label { return .same }
        let app = isDeclared ? version : Int(label)
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

    /// The migrations from `stored` to ``version``, in order.
    ///
    /// - Throws: ``MigrationFailure`` naming the first version no migration starts from.
    /// - Complexity: O(migrations).
    package func chain(from stored: Int) throws(MigrationFailure) -> [SchemaMigration] {
        var chain: [SchemaMigration] = []
        var current = stored
        while current < version {
            guard let next = migrations.first(where: { $0.from == current }) else {
                let declared = migrations.map { "\($0.from)→\($0.to)" }.joined(separator: ", ")
                throw MigrationFailure(
                    from: current, to: version,
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
