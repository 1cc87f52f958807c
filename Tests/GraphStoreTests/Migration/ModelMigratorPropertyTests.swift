import Foundation
@testable import GraphStore
import PropertyBased
import Testing

/// Random generic stores and random step sequences: the migration engine must do what a plain
/// reference implementation of each step's documented meaning does, failures included.
@Suite struct ModelMigratorPropertyTests {
    typealias Object = [String: SnapshotValue]
    typealias Store = [String: [Object]]

    /// A step as data, so the reference can interpret it without the engine's types.
    enum Op: Sendable, CustomStringConvertible {
        case renameEntity(String, String)
        case renameField(String, String, String)
        case addField(String, String, SnapshotValue)
        case removeField(String, String)
        case removeEntity(String)
        /// Sets `x` to the number of fields; throws on an object whose `y` is `.bool(true)`.
        case transform(String)
        /// Drops the objects of an entity whose id is odd.
        case transformStore(String)

        var description: String { "\(step)" }

        var step: SchemaMigration.Step {
            switch self {
            case let .renameEntity(a, b): .renameEntity(a, to: b)
            case let .renameField(f, g, e): .renameField(f, to: g, in: e)
            case let .addField(f, e, v): .addField(f, in: e, default: v)
            case let .removeField(f, e): .removeField(f, in: e)
            case let .removeEntity(e): .removeEntity(e)
            case let .transform(e):
                .transform(e) { object in
                    if object["y"] == .bool(true) { throw Refused() }
                    object["x"] = .integer(Int64(object.count))
                }
            case let .transformStore(e):
                .transformStore { store in store[e] = store[e].filter { Self.isEven($0["id"]) } }
            }
        }

        static func isEven(_ id: SnapshotValue?) -> Bool {
            if case .integer(let n)? = id { return n % 2 == 0 }
            return true
        }
    }

    struct Refused: Error {}

    static let entity = Gen<String?>.element(of: ["A", "B", "C"]).map { $0 ?? "A" }
    static let field = Gen<String?>.element(of: ["id", "x", "y", "z"]).map { $0 ?? "x" }
    static let value = Gen<SnapshotValue>.frequency(
        (weight: 2, gen: Gen<Int>.int(in: -3...3).map { SnapshotValue.integer(Int64($0)) }),
        (weight: 1, gen: Gen<Bool>.bool.map { SnapshotValue.bool($0) }),
        (weight: 1, gen: Gen.always(SnapshotValue.null)),
        (weight: 1, gen: Gen<String?>.element(of: ["", "é", "text"]).map { SnapshotValue.string($0 ?? "") }))
    static let op = Gen<Op>.frequency(
        (weight: 2, gen: zip(entity, entity).map { Op.renameEntity($0, $1) }),
        (weight: 3, gen: zip(field, field, entity).map { Op.renameField($0, $1, $2) }),
        (weight: 3, gen: zip(field, entity, value).map { Op.addField($0, $1, $2) }),
        (weight: 2, gen: zip(field, entity).map { Op.removeField($0, $1) }),
        (weight: 1, gen: entity.map { Op.removeEntity($0) }),
        (weight: 2, gen: entity.map { Op.transform($0) }),
        (weight: 1, gen: entity.map { Op.transformStore($0) }))

    /// An object with a unique integer id and a few fields.
    static func objects(_ count: Int, values: [SnapshotValue]) -> [Object] {
        (0..<count).map { index in
            var object: Object = ["id": .integer(Int64(index))]
            for (offset, name) in ["x", "y", "z"].enumerated() {
                let value = values[(index * 3 + offset) % max(values.count, 1)]
                if value != .string("text") { object[name] = value }
            }
            return object
        }
    }

    static let store = zip(
        Gen<Int>.int(in: 0...4), Gen<Int>.int(in: 0...4), Gen<Bool>.bool, value.array(of: 1...12)
    ).map { a, b, hasC, values -> Store in
        var store: Store = ["A": objects(a, values: values), "B": objects(b, values: values.reversed())]
        if hasC { store["C"] = [] }
        return store
    }

    // MARK: - Reference

    /// The documented meaning of each step, written plainly; `nil` where the step must fail.
    static func reference(_ op: Op, _ store: Store) -> Store? {
        var store = store
        switch op {
        case let .renameEntity(a, b):
            guard a != b, let objects = store[a] else { return store }
            if let existing = store[b], !existing.isEmpty { return nil }
            store.removeValue(forKey: a)
            store[b] = objects
        case let .renameField(f, g, e):
            guard f != g, let objects = store[e] else { return store }
            if f == "id" || g == "id" { return nil }
            var result: [Object] = []
            for object in objects {
                guard let value = object[f] else {
                    result.append(object)
                    continue
                }
                if let held = object[g], held != .null { return nil }
                var moved = object.filter { $0.key != f }
                moved[g] = value
                result.append(moved)
            }
            store[e] = result
        case let .addField(f, e, v):
            store[e] = store[e].map { $0.map { object in object[f] == nil ? object.merging([f: v]) { old, _ in old } : object } }
        case let .removeField(f, e):
            if f == "id" { return nil }
            store[e] = store[e].map { $0.map { $0.filter { $0.key != f } } }
        case let .removeEntity(e):
            store.removeValue(forKey: e)
        case let .transform(e):
            guard let objects = store[e] else { return store }
            if objects.contains(where: { $0["y"] == .bool(true) }) { return nil }
            store[e] = objects.map { object in
                var changed = object
                changed["x"] = .integer(Int64(object.count + (object["x"] == nil ? 0 : 0)))
                return changed
            }
        case let .transformStore(e):
            let kept = (store[e] ?? []).filter { Op.isEven($0["id"]) }
            store[e] = kept
        }
        return store
    }

    @Test func theEngineDoesWhatTheReferenceDoes() async {
        await propertyCheck(count: 400, input: Self.store, Self.op.array(of: 0...12)) { initial, ops in
            var expected: Store? = initial
            for op in ops {
                guard let current = expected else { break }
                expected = Self.reference(op, current)
            }
            var migrating = MigratingStore(initial)
            let migration = SchemaMigration(from: 1, to: 2, ops.map(\.step))
            do {
                try ModelMigrator.run([migration], on: &migrating)
                #expect(expected != nil, "the engine succeeded where the reference fails: \(ops)")
                #expect(migrating.entities == expected, "\(ops)")
            } catch let error as MigrationFailure {
                #expect(expected == nil, "the engine failed (\(error.reason)) where the reference succeeds: \(ops)")
                #expect(error.from == 1 && error.to == 2)
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    /// A chain of single-step migrations gives what the same steps in one migration give.
    @Test func aChainOfVersionsEqualsItsStepsInOne() async throws {
        await propertyCheck(count: 200, input: Self.store, Self.op.array(of: 1...6)) { initial, ops in
            let chain = ops.enumerated().map { index, op in SchemaMigration(from: index + 1, to: index + 2, [op.step]) }
            let history = ModelHistory(version: ops.count + 1, migrations: chain.reversed(), isDeclared: true)
            var chained = MigratingStore(initial)
            var single = MigratingStore(initial)
            let chainResult = Result { () throws(MigrationFailure) in try ModelMigrator.run(history.chain(from: 1, to: history.version), on: &chained) }
            let singleResult = Result { () throws(MigrationFailure) in try ModelMigrator.run([SchemaMigration(from: 1, to: 2, ops.map(\.step))], on: &single) }
            switch (chainResult, singleResult) {
            case (.success, .success): #expect(chained == single)
            case (.failure, .failure): break
            default: Issue.record("the chain and the single migration disagree on \(ops)")
            }
        }
    }
}
