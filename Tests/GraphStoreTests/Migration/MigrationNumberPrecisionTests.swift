import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

/// Numbers a `Double` cannot hold (a `Decimal` of more than 15 significant digits, an
/// `Int128` or `UInt128` beyond 64 bits) come out of a model migration, a journal replayed
/// generically and `convert` with every digit: JSON keeps them as written, and the generic
/// values carry the text along.
@Suite struct MigrationNumberPrecisionTests {
    enum V1 {
        struct Account: Entity, Equatable {
            var id: Int
            var balance: Decimal
            var total: Int128
            var mask: UInt128
            var ratio: Double
            static var entityName: String { "Account" }
        }
    }

    enum V2 {
        struct Account: Entity, Equatable {
            var id: Int
            var balance: Decimal
            var total: Int128
            var mask: UInt128
            var ratio: Double
            var label: String
            static var entityName: String { "Account" }
        }

        static let migrations = [SchemaMigration(from: 1, to: 2, [.addField("label", in: "Account", default: .string("none"))])]
    }

    static func decimal(_ text: String) -> Decimal { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))! }

    /// Values no `Double` holds, and two that one does (a ratio and a short decimal).
    static let accounts: [V1.Account] = [
        V1.Account(id: 1, balance: decimal("12345678901234567890.123456789"), total: .min, mask: .max, ratio: 0.1),
        V1.Account(id: 2, balance: decimal("0.30000000000000000001"), total: Int128(Int64.max) * 1_000, mask: UInt128(UInt64.max) + 2, ratio: 1e-300),
        V1.Account(id: 3, balance: decimal("19.99"), total: -5, mask: 7, ratio: 0.30000000000000004),
        // Only the decimal loses digits in a double: before, it was rounded without a word.
        V1.Account(id: 4, balance: decimal("3.1415926535897932384626433832795"), total: 1, mask: 1, ratio: 2),
    ]

    static func expected(_ account: V1.Account) -> V2.Account {
        V2.Account(id: account.id, balance: account.balance, total: account.total, mask: account.mask, ratio: account.ratio, label: "none")
    }

    /// A version-1 JSON store holding `accounts`: closed (snapshot only), or left open with
    /// the saves in its journal (a crash copy).
    static func versionOneStore(in directory: TemporaryDirectory, crashed: Bool, format: SnapshotFormat = .json) async throws -> URL {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("accounts.\(format.fileExtension).gz")
        let container = try GraphContainer(
            for: [V1.Account.self], store: .file(url, format: format, coalescingInterval: .seconds(3600)), version: 1)
        for account in accounts {
            container.mainContext.insert(account)
            try container.mainContext.save()
        }
        if crashed {
            let copy = try JournalStoreTests.crashCopy(of: url, into: directory)
            try await container.close()
            return copy
        }
        try await container.close()
        let copy = directory.file(url.lastPathComponent)
        try FileManager.default.copyItem(at: url, to: copy)
        return copy
    }

    @Test(arguments: [false, true])
    func aModelMigrationKeepsEveryDigit(crashed: Bool) async throws {
        let format = SnapshotFormat.json
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.versionOneStore(in: directory, crashed: crashed, format: format)
        let container = try GraphContainer(for: [V2.Account.self], store: .file(url, format: format), version: 2, migrations: V2.migrations)
        let migrated = try container.mainContext.fetch(FetchDescriptor<V2.Account>(sortBy: [SortDescriptor(\.id)]))
        #expect(migrated == Self.accounts.map(Self.expected))
        try await container.close()
        // The migrated snapshot holds the digits too.
        let reopened = try GraphContainer(for: [V2.Account.self], store: .file(url, format: format), version: 2, migrations: V2.migrations)
        #expect(try reopened.mainContext.fetch(FetchDescriptor<V2.Account>(sortBy: [SortDescriptor(\.id)])) == Self.accounts.map(Self.expected))
        try await reopened.close()
    }

    /// A property list holds a decimal as its parts: a model migration reads the parts as the
    /// JSON number they stand for, with every digit. (Its 128-bit integers: see
    /// `BPlistWideIntegerTests`.)
    @Test func aPropertyListModelMigrationKeepsEveryDigit() async throws {
        struct Old: Entity, Equatable {
            var id: Int
            var balance: Decimal
            static var entityName: String { "Account" }
        }
        struct New: Entity, Equatable {
            var id: Int
            var balance: Decimal
            var label: String
            static var entityName: String { "Account" }
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("accounts.plist.gz")
        let accounts = Self.accounts.map { Old(id: $0.id, balance: $0.balance) }
        let old = try GraphContainer(for: [Old.self], store: .file(url, format: .binaryPropertyList), version: 1)
        old.mainContext.insert(contentsOf: accounts)
        try old.mainContext.save()
        try await old.close()
        let container = try GraphContainer(
            for: [New.self], store: .file(url, format: .binaryPropertyList), version: 2, migrations: V2.migrations)
        #expect(try container.mainContext.fetch(FetchDescriptor<New>(sortBy: [SortDescriptor(\.id)]))
            == accounts.map { New(id: $0.id, balance: $0.balance, label: "none") })
        try await container.close()
    }

    /// Numbers of different objects that read as the same double (two long ones, a short one
    /// and a long one) each keep their own digits: the numbers are the object's.
    @Test func numbersOfOneDoubleInDifferentObjectsKeepTheirOwnDigits() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("accounts.json.gz")
        let accounts = [
            V1.Account(id: 1, balance: Self.decimal("0.10000000000000000001"), total: 0, mask: 0, ratio: 0),
            V1.Account(id: 2, balance: Self.decimal("0.10000000000000000002"), total: 0, mask: 0, ratio: 0),
            V1.Account(id: 3, balance: 2.5, total: 0, mask: 0, ratio: 0),
            V1.Account(id: 4, balance: Self.decimal("2.50000000000000000001"), total: 0, mask: 0, ratio: 0),
        ]
        let first = try GraphContainer(for: [V1.Account.self], store: .file(url), version: 1)
        first.mainContext.insert(contentsOf: accounts)
        try first.mainContext.save()
        try await first.close()
        let container = try GraphContainer(for: [V2.Account.self], store: .file(url), version: 2, migrations: V2.migrations)
        #expect(try container.mainContext.fetch(FetchDescriptor<V2.Account>(sortBy: [SortDescriptor(\.id)])) == accounts.map(Self.expected))
        try await container.close()
    }

    /// Two numbers of one object that read as the same double cannot both be written from it:
    /// the migration is refused, naming the numbers and the object, the store is left as it
    /// was, and a conversion to a property list is refused too.
    @Test func twoNumbersOfOneDoubleInOneObjectAreRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("accounts.json.gz")
        let first = try GraphContainer(for: [V1.Account.self], store: .file(url), version: 1)
        first.mainContext.insert(V1.Account(id: 1, balance: Self.decimal("2.50000000000000000001"), total: 0, mask: 0, ratio: 2.5))
        try first.mainContext.save()
        try await first.close()
        let before = try Data(contentsOf: url)
        let error = #expect(throws: GraphStoreError.self) {
            _ = try GraphContainer(for: [V2.Account.self], store: .file(url), version: 2, migrations: V2.migrations)
        }
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("the numbers 2.5 and 2.50000000000000000001 of one object all read as the double 2.5"))
        #expect(message.contains("Account"))
        #expect(try Data(contentsOf: url) == before)
        #expect(!FileManager.default.fileExists(atPath: url.path + ".v1"))
        let conversion = #expect(throws: GraphStoreError.self) {
            try GenericSnapshot.read(from: url).write(to: directory.file("accounts.plist"), format: .binaryPropertyList, compression: .none)
        }
        guard case .codingFailed(let path, let entity, let id, let reason)? = conversion else {
            Issue.record("not a coding failure: \(String(describing: conversion))")
            return
        }
        #expect(path == directory.file("accounts.plist").path)
        #expect(entity == "Account")
        #expect(id == "1")
        #expect(reason.contains("2.50000000000000000001"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("accounts.plist").path))
    }

    /// A long number that a crash's journal replaced leaves nothing behind: the migration
    /// writes the replacing number, even when both read as the same double.
    @Test func aValueTheJournalReplacedLeavesNoDigitsBehind() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let url = live.file("accounts.json.gz")
        var account = V1.Account(id: 1, balance: Self.decimal("1.234567890123456789"), total: 0, mask: 0, ratio: 0)
        let first = try GraphContainer(for: [V1.Account.self], store: .file(url), version: 1)
        first.mainContext.insert(account)
        first.mainContext.insert(V1.Account(id: 2, balance: Self.decimal("7.000000000000000001"), total: 0, mask: 0, ratio: 0))
        try first.mainContext.save()
        try await first.close()
        let second = try GraphContainer(for: [V1.Account.self], store: .file(url, coalescingInterval: .seconds(3600)), version: 1)
        account.balance = Self.decimal("1.234567890123456790")
        second.mainContext.insert(account)
        try second.mainContext.delete(model: V1.Account.self, where: #Predicate { $0.id == 2 })
        try second.mainContext.save()
        let copy = try JournalStoreTests.crashCopy(of: url, into: directory)
        try await second.close()

        let container = try GraphContainer(for: [V2.Account.self], store: .file(copy), version: 2, migrations: V2.migrations)
        #expect(try container.mainContext.fetch(FetchDescriptor<V2.Account>()) == [Self.expected(account)])
        try await container.close()
    }

    @Test func aGenericReadAndWriteKeepsEveryDigit() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = try await Self.versionOneStore(in: directory, crashed: false)
        let snapshot = try GenericSnapshot.read(from: url)
        let copy = directory.file("copy.json")
        try snapshot.write(to: copy, format: .json, compression: .none)
        let container = try GraphContainer(for: [V1.Account.self], store: .file(copy, compression: .none), version: 1)
        #expect(try container.mainContext.fetch(FetchDescriptor<V1.Account>(sortBy: [SortDescriptor(\.id)])) == Self.accounts)
        try await container.close()
    }
}
