import Foundation

/// Runs migration steps on a ``MigratingStore``: the engine behind opening an older store.
package enum ModelMigrator {
    /// Runs every step of `migrations`, in order, on `store`.
    ///
    /// - Throws: ``MigrationFailure`` naming the migration, entity, field and id where a step
    ///   failed; `store` is then partly migrated and must be discarded.
    /// - Complexity: O(steps × objects of the entities they name), plus what transforms do.
    package static func run(_ migrations: [SchemaMigration], on store: inout MigratingStore) throws(MigrationFailure) {
        for migration in migrations {
            for step in migration.steps {
                try apply(step, to: &store, in: migration)
            }
        }
    }

    /// Runs one step.
    ///
    /// - Throws: ``MigrationFailure``.
    package static func apply(_ step: SchemaMigration.Step, to store: inout MigratingStore, in migration: SchemaMigration) throws(MigrationFailure) {
        func failure(_ entity: String?, field: String? = nil, id: SnapshotValue? = nil, _ reason: String) -> MigrationFailure {
            MigrationFailure(from: migration.from, to: migration.to, entity: entity, field: field, id: id.map(idText), reason: "\(step): \(reason)")
        }
        switch step.kind {
        case let .renameEntity(name, newName):
            guard name != newName, let objects = store.entities[name] else { return }
            if let existing = store.entities[newName], !existing.isEmpty {
                throw failure(newName, "the store already holds \(existing.count) \(newName) object(s); merge them with .transformStore instead")
            }
            store.entities[newName] = objects
            store.entities[name] = nil

        case let .renameField(field, newName, entity):
            guard field != newName, var objects = store.entities[entity] else { return }
            guard field != "id", newName != "id" else { throw failure(entity, field: "id", "an object's id cannot be renamed") }
            for index in objects.indices {
                guard let value = objects[index].removeValue(forKey: field) else { continue }
                if let held = objects[index][newName], held != .null {
                    throw failure(entity, field: newName, id: objects[index]["id"], "the object already holds \(newName)")
                }
                objects[index][newName] = value
            }
            store.entities[entity] = objects

        case let .addField(field, entity, value):
            guard var objects = store.entities[entity] else { return }
            for index in objects.indices where objects[index][field] == nil {
                objects[index][field] = value
            }
            store.entities[entity] = objects

        case let .removeField(field, entity):
            guard field != "id" else { throw failure(entity, field: "id", "an object's id cannot be removed") }
            guard var objects = store.entities[entity] else { return }
            for index in objects.indices { objects[index][field] = nil }
            store.entities[entity] = objects

        case let .removeEntity(name):
            store.entities[name] = nil

        case let .transform(entity, body):
            guard var objects = store.entities[entity] else { return }
            for index in objects.indices {
                do {
                    try body(&objects[index])
                } catch {
                    throw failure(entity, id: objects[index]["id"], "the transform threw: \(error)")
                }
            }
            store.entities[entity] = objects

        case let .transformStore(body):
            do {
                try body(&store)
            } catch {
                throw failure(nil, "the store transform threw: \(error)")
            }
        }
    }

    /// An id as error messages show it: a string as is, anything else as JSON would write it.
    package static func idText(_ id: SnapshotValue) -> String {
        switch id {
        case .string(let text): text
        case .integer(let value): String(value)
        case .unsigned(let value): String(value)
        default: "\(id.jsonObject)"
        }
    }
}
