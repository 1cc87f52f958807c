import GraphStore

/// Opening a store, reading or writing every object of one entity type, and closing it again:
/// the steps of the round-trip tests, in one place.
public enum StoreRoundTrips {
    /// The objects of `type` in `store`, by id: opened at `version`, read, closed.
    public static func fetch<E: Entity>(_ type: E.Type, _ store: StoreConfiguration, version: Int = 1, migrations: [SchemaMigration] = [])
        async throws -> [E] where E.ID == Int
    {
        let container = try GraphContainer(for: [type], store: store, version: version, migrations: migrations)
        let objects = try container.mainContext.fetch(FetchDescriptor<E>()).sorted { $0.id < $1.id }
        try await container.close()
        return objects
    }

    /// Inserts `objects` into `store` in one save, and closes it.
    public static func save<E: Entity>(_ objects: [E], to store: StoreConfiguration) async throws {
        let container = try GraphContainer(for: [E.self], store: store)
        container.mainContext.insert(contentsOf: objects)
        try container.mainContext.save()
        try await container.close()
    }
}
