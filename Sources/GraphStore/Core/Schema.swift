import Foundation

/// The registered entities of a container, type-erased so the core can commit any of them.
///
/// Built once in `GraphContainer.init`; immutable afterwards.
package struct Schema: Sendable {
    /// The entities and relationships, behind one reference: a schema is copied into every
    /// commit plan and journal record, and copying five arrays and dictionaries each time was a
    /// measurable part of a small save.
    private final class Parts: Sendable {
        let entities: [EntityDescription]
        let relationships: [RelationshipDescription]
        let incoming: [[Int]]
        let indexByName: [String: Int]
        let indexByType: [ObjectIdentifier: Int]

        init(
            entities: [EntityDescription], relationships: [RelationshipDescription], incoming: [[Int]],
            indexByName: [String: Int], indexByType: [ObjectIdentifier: Int]
        ) {
            self.entities = entities
            self.relationships = relationships
            self.incoming = incoming
            self.indexByName = indexByName
            self.indexByType = indexByType
        }
    }

    private let parts: Parts
    package var entities: [EntityDescription] { parts.entities }
    var relationships: [RelationshipDescription] { parts.relationships }
    /// For each entity index, the global indexes of relationships that target it.
    var incoming: [[Int]] { parts.incoming }
    private var indexByName: [String: Int] { parts.indexByName }
    private var indexByType: [ObjectIdentifier: Int] { parts.indexByType }
    /// The model version the types describe and the migrations to it (set by the container).
    package internal(set) var model = ModelHistory()

    init(_ types: [any Entity.Type]) {
        var entities: [EntityDescription] = []
        var byName: [String: Int] = [:]
        var byType: [ObjectIdentifier: Int] = [:]
        for type in types {
            let name = type.entityName
            precondition(byName[name] == nil, "GraphStore: two entity types are named '\(name)'; give one a different entityName.")
            precondition(byType[ObjectIdentifier(type)] == nil, "GraphStore: \(type) is registered twice.")
            byName[name] = entities.count
            byType[ObjectIdentifier(type)] = entities.count
            entities.append(EntityDescription(type, index: entities.count))
        }
        var relationships: [RelationshipDescription] = []
        var incoming = Array(repeating: [Int](), count: entities.count)
        for entity in entities {
            var globalIndexes: [Int] = []
            for relationship in entity.makeRelationships() {
                guard let target = byType[ObjectIdentifier(relationship.targetType)] else {
                    preconditionFailure("GraphStore: \(entity.name).\(relationship.name) targets \(relationship.targetType), which is not registered in the container.")
                }
                let global = relationships.count
                relationships.append(relationship.resolved(index: global, source: entity.index, target: target))
                incoming[target].append(global)
                globalIndexes.append(global)
            }
            entities[entity.index].relationshipIndexes = globalIndexes
        }
        parts = Parts(entities: entities, relationships: relationships, incoming: incoming, indexByName: byName, indexByType: byType)
    }

    /// The index of a registered type; a precondition failure for an unregistered one.
    func index<E: Entity>(of type: E.Type) -> Int {
        guard let index = indexByType[ObjectIdentifier(type)] else {
            preconditionFailure("GraphStore: \(type) is not registered; pass it to GraphContainer(for:store:).")
        }
        return index
    }

    package func index(named name: String) -> Int? {
        indexByName[name]
    }

    /// A version holding `objects` (per entity index) at store version `number`, indexed and
    /// checked as when a snapshot opens; how the stores of other GraphStore modules open.
    ///
    /// - Throws: ``GraphStoreError/damagedFile(path:offset:reason:)`` naming `path` for a
    ///   duplicate id, a unique value held twice, or a reference to a missing object.
    /// - Complexity: O(objects + references).
    package func loadedVersion(_ objects: [[any Entity]], number: UInt64, path: String) throws(GraphStoreError) -> GraphVersion {
        do {
            return try GraphVersion.loaded(objects, number: number, schema: self)
        } catch {
            throw .damagedFile(path: path, offset: nil, reason: error.description)
        }
    }
}

/// One entity, with its id, unique keys and relationships reachable without its static type.
///
/// A value whose fields live behind one reference: every commit reads descriptions out of
/// ``Schema/entities`` in loops, and copying nine retained fields (closures, arrays, the name)
/// per read was a measurable part of a small save.
package struct EntityDescription: Sendable {
    /// The fields, immutable once the schema is built.
    private final class Fields: Sendable {
        let name: String
        let index: Int
        let type: any Entity.Type
        let constraints: [UniqueKeyDescription]
        let indexes: [IndexDescription]
        let relationshipIndexes: [Int]
        let key: @Sendable (any Entity) -> ObjectKey
        let makeRelationships: @Sendable () -> [RelationshipDescription]
        let replacingID: @Sendable (any Entity, ObjectKey) throws -> any Entity
        let mergingProperties: @Sendable (any Entity, any Entity, any Entity) throws -> any Entity
        let decodeOne: @Sendable (inout any UnkeyedDecodingContainer) throws -> any Entity

        init(
            name: String, index: Int, type: any Entity.Type, constraints: [UniqueKeyDescription], indexes: [IndexDescription],
            relationshipIndexes: [Int], key: @escaping @Sendable (any Entity) -> ObjectKey,
            makeRelationships: @escaping @Sendable () -> [RelationshipDescription],
            replacingID: @escaping @Sendable (any Entity, ObjectKey) throws -> any Entity,
            mergingProperties: @escaping @Sendable (any Entity, any Entity, any Entity) throws -> any Entity,
            decodeOne: @escaping @Sendable (inout any UnkeyedDecodingContainer) throws -> any Entity
        ) {
            self.name = name
            self.index = index
            self.type = type
            self.constraints = constraints
            self.indexes = indexes
            self.relationshipIndexes = relationshipIndexes
            self.key = key
            self.makeRelationships = makeRelationships
            self.replacingID = replacingID
            self.mergingProperties = mergingProperties
            self.decodeOne = decodeOne
        }

        func with(relationshipIndexes: [Int]) -> Fields {
            Fields(
                name: name, index: index, type: type, constraints: constraints, indexes: indexes,
                relationshipIndexes: relationshipIndexes, key: key, makeRelationships: makeRelationships,
                replacingID: replacingID, mergingProperties: mergingProperties, decodeOne: decodeOne)
        }
    }

    private var fields: Fields

    package var name: String { fields.name }
    package var index: Int { fields.index }
    package var type: any Entity.Type { fields.type }
    var constraints: [UniqueKeyDescription] { fields.constraints }
    /// The sorted indexes declared by the type (``Entity/indexes``).
    var indexes: [IndexDescription] { fields.indexes }
    /// Global indexes (into `Schema.relationships`) of the relationships this entity holds;
    /// set once, while the schema is built.
    var relationshipIndexes: [Int] {
        get { fields.relationshipIndexes }
        set { fields = fields.with(relationshipIndexes: newValue) }
    }
    var key: @Sendable (any Entity) -> ObjectKey { fields.key }
    var makeRelationships: @Sendable () -> [RelationshipDescription] { fields.makeRelationships }
    var replacingID: @Sendable (any Entity, ObjectKey) throws -> any Entity { fields.replacingID }
    /// `MergePolicy.mergeByProperty`: (base, mine, stored) → merged (see ``PropertyMerger``).
    var mergingProperties: @Sendable (any Entity, any Entity, any Entity) throws -> any Entity { fields.mergingProperties }
    /// Decodes one object of this entity from an array in a snapshot document.
    var decodeOne: @Sendable (inout any UnkeyedDecodingContainer) throws -> any Entity { fields.decodeOne }

    init<E: Entity>(_ type: E.Type, index: Int) {
        let constraints = E.uniqueConstraints.map { constraint in
            UniqueKeyDescription(name: constraint.name, keyPaths: constraint.keyPaths, key: { object in
                Self.reading(object, as: E.self) { constraint.key($0) }
            })
        }
        // Per index, its values read from the address of an `E` (see `IndexValue.reader`):
        // code generic over `E` that passes the object to `(E) -> IndexValue` closures looks up
        // the metadata of those types at run time on every call, and copies the object.
        let indexes = E.indexes.map { index in
            let readers = index.readers
            return IndexDescription(name: index.name, keyPaths: index.keyPaths, key: { object in
                Self.readingAddress(object, as: E.self) { IndexKey(at: $0, readers) }
            })
        }
        fields = Fields(
            name: E.entityName, index: index, type: type, constraints: constraints, indexes: indexes, relationshipIndexes: [],
            key: { object in Self.id(of: object) },
            makeRelationships: {
                E.relationships.map { relationship in
                    RelationshipDescription(
                        name: relationship.name, deleteRule: relationship.deleteRule,
                        targetType: relationship.targetType,
                        targets: Self.targets(of: relationship),
                        removing: { object, key in
                            var copy = object as! E
                            relationship.removing(&copy, key)
                            return copy
                        },
                        replacing: { object, old, new in
                            var copy = object as! E
                            relationship.replacing(&copy, old, new)
                            return copy
                        })
                }
            },
            replacingID: { object, key in try IdentityRewriter.replacingID(of: object as! E, with: key) },
            mergingProperties: { base, mine, stored in try PropertyMerger.merge(base: base as! E, mine: mine as! E, stored: stored as! E) },
            decodeOne: { container in try container.decode(E.self) })
    }
}

extension EntityDescription {
    /// `body` applied to `object` read in place as an `E`: a metatype comparison after opening
    /// the existential, and no copy of the value, where `as!` (or returning the opened value)
    /// copies it, retaining each string and array in it. Reading the id, unique values,
    /// references and index keys of every object when a store opens was mostly such copies.
    ///
    /// - Complexity: O(1) plus `body`.
    @inline(__always)
    static func reading<E: Entity, R>(_ object: any Entity, as type: E.Type, _ body: (borrowing E) -> R) -> R {
        func open<T: Entity>(_ value: borrowing T) -> R {
            guard T.self == E.self else { return body(copy value as! E) }
            return withUnsafePointer(to: value) { pointer in
                pointer.withMemoryRebound(to: E.self, capacity: 1) { body($0.pointee) }
            }
        }
        return open(object)
    }

    /// `body` applied to the address of `object` read in place as an `E`, as
    /// ``reading(_:as:_:)`` does; the body's type does not depend on `E`.
    ///
    /// - Complexity: O(1) plus `body`.
    @inline(__always)
    static func readingAddress<E: Entity, R>(_ object: any Entity, as type: E.Type, _ body: (UnsafeRawPointer) -> R) -> R {
        func open<T: Entity>(_ value: borrowing T) -> R {
            guard T.self == E.self else {
                let converted = copy value as! E
                return withUnsafePointer(to: converted) { body(UnsafeRawPointer($0)) }
            }
            return withUnsafePointer(to: value) { body(UnsafeRawPointer($0)) }
        }
        return open(object)
    }

    /// How to read the targets of `relationship` from an object: at the property's offset
    /// when it is stored in the entity's layout, else through its closure (which copies it).
    static func targets<E: Entity>(of relationship: Relationship<E>) -> @Sendable (any Entity) -> [ObjectKey] {
        if let read = relationship.targetsAt {
            return { object in readingAddress(object, as: E.self, read) }
        }
        return { object in reading(object, as: E.self) { relationship.targets($0) } }
    }

    /// The id of `object`, read through its own type's witness: no cast and no copy of the value.
    ///
    /// - Complexity: O(1).
    static func id(of object: any Entity) -> ObjectKey {
        func read<T: Entity>(_ value: borrowing T) -> ObjectKey { ObjectKey(value.id) }
        return read(object)
    }
}

struct UniqueKeyDescription: Sendable {
    let name: String
    /// The constrained properties, in order.
    let keyPaths: [AnyKeyPath & Sendable]
    let key: @Sendable (any Entity) -> ObjectKey?
}

extension IndexKey {
    /// The key of the object at `address` under `readers` (one per indexed property), with no
    /// array for a one-property index.
    init(at address: UnsafeRawPointer, _ readers: [IndexValueReader]) {
        first = readers[0](address)
        guard readers.count > 1 else {
            rest = []
            return
        }
        var rest: [IndexValue] = []
        rest.reserveCapacity(readers.count - 1)
        for position in 1..<readers.count { rest.append(readers[position](address)) }
        self.rest = rest
    }
}

/// One sorted index of an entity: its properties and how to read their values.
struct IndexDescription: Sendable {
    let name: String
    let keyPaths: [AnyKeyPath & Sendable]
    let key: @Sendable (any Entity) -> IndexKey

    func entry(_ key: ObjectKey, _ object: StoredObject) -> IndexTree.Entry {
        IndexTree.Entry(key: self.key(object.value), id: key)
    }
}

struct RelationshipDescription: Sendable {
    let name: String
    let deleteRule: DeleteRule
    let targetType: any Entity.Type
    let targets: @Sendable (any Entity) -> [ObjectKey]
    let removing: @Sendable (any Entity, ObjectKey) -> any Entity
    let replacing: @Sendable (any Entity, ObjectKey, ObjectKey) -> any Entity
    var index = -1
    var source = -1
    var target = -1

    func resolved(index: Int, source: Int, target: Int) -> RelationshipDescription {
        var copy = self
        copy.index = index
        copy.source = source
        copy.target = target
        return copy
    }
}

/// Moves a value to another id through its `Codable` form: used only when a unique constraint
/// merges an incoming object into an existing one whose id differs.
enum IdentityRewriter {
    static func replacingID<E: Entity>(of object: E, with key: ObjectKey) throws -> E {
        guard let newID = key.value(as: E.ID.self) else {
            throw GraphStoreError.identityMergeFailed(entity: E.entityName, id: "\(object.id)", reason: "the existing id \(key) is not a \(E.ID.self)")
        }
        do {
            var form = try KeyedCodableForm(object)
            guard form.contains("id") else {
                throw GraphStoreError.identityMergeFailed(entity: E.entityName, id: "\(object.id)", reason: "the value does not encode its id under the key \"id\"")
            }
            try form.set("id", to: newID)
            let moved = try form.decode(E.self)
            guard ObjectKey(moved.id) == key else {
                throw GraphStoreError.identityMergeFailed(entity: E.entityName, id: "\(object.id)", reason: "decoding with the new id gave id \(moved.id)")
            }
            return moved
        } catch let error as GraphStoreError {
            throw error
        } catch {
            throw GraphStoreError.identityMergeFailed(entity: E.entityName, id: "\(object.id)", reason: "\(error)")
        }
    }
}
