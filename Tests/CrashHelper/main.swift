// A helper process for the crash-safety tests. The test kills it with SIGKILL at random moments
// and checks that the store opens and holds everything the helper reported.
//
// Usage: graphstore-crash-helper STORE json|plist|sqlite gzip|none START|auto [acks|saves]
//
// Saves are numbered from START + 1 (`auto`: after the number of notes the store holds).
// - acks (the default): saves five notes (each with its tag) at a time and prints "acked N"
//   after each flush that made saves 1...N durable.
// - saves: prints "ready" once the store is open, then saves one note (with its tag) at a time
//   and prints "saved N" as soon as each save() returned, without flushing: a journaled store
//   must keep every one of them.
//
// The migration kill trials (see KillTrialModel) use two more modes:
//
//   graphstore-crash-helper seed-v1 STORE json|plist|sqlite gzip|none OBJECTS JOURNALED
//   graphstore-crash-helper open-v2 STORE json|plist|sqlite gzip|none OBJECTS JOURNALED
//
// - seed-v1: writes a store of model version 1 as an app killed mid-run leaves it: OBJECTS
//   memos (and their tags) in its snapshot file or database, then JOURNALED saves that reach
//   only its journal (the snapshot writer waits an hour; the SQLite writer is held before its
//   transaction). Prints "seeded" once those saves are fsynced, then waits to be killed.
// - open-v2: opens the store with model version 2, which migrates a version-1 store, prints
//   "opened", then saves one new note at a time (also pinning a migrated one) and prints
//   "saved N" as soon as each save() returned; N counts every version-2 save the store holds.
import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite
import KillTrialModel

let arguments = CommandLine.arguments

/// Writes `line` to standard output with one write(2), so a kill never splits it.
func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

if arguments.count == 7, arguments[1] == "seed-v1" || arguments[1] == "open-v2" {
    do {
        try await runMigrationTrialMode(arguments)
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
    exit(0)
}

guard arguments.count == 5 || arguments.count == 6, arguments[4] == "auto" || Int(arguments[4]) != nil else {
    FileHandle.standardError.write(Data("usage: graphstore-crash-helper STORE json|plist|sqlite gzip|none START|auto [acks|saves]\n".utf8))
    exit(2)
}
let url = URL(fileURLWithPath: arguments[1])
let reportsEverySave = arguments.count == 6 && arguments[5] == "saves"
let compression: Compression = arguments[3] == "none" ? .none : .gzip
let store: StoreConfiguration
switch arguments[2] {
case "sqlite": store = .sqlite(url)
case "plist": store = .file(url, format: .binaryPropertyList, compression: compression, coalescingInterval: .milliseconds(5))
default: store = .file(url, format: .json, compression: compression, coalescingInterval: .milliseconds(5))
}

do {
    let container = try GraphContainer(for: exampleModel, store: store)
    let context = container.newBackgroundContext()
    var number = try Int(arguments[4]) ?? context.fetchCount(FetchDescriptor<Note>())
    if reportsEverySave { report("ready") }
    while true {
        for _ in 0..<(reportsEverySave ? 1 : 5) {
            number += 1
            let tag = Tag(name: "tag\(number)")
            context.insert(tag)
            context.insert(Note(text: "note \(number) " + String(repeating: "x", count: number % 200), tagIDs: [tag.id]))
            try context.save()
        }
        if reportsEverySave {
            report("saved \(number)")
        } else {
            try await container.flush()
            report("acked \(number)")
        }
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}

// MARK: - Migration kill trials

/// `seed-v1` and `open-v2` (see the top of this file).
func runMigrationTrialMode(_ arguments: [String]) async throws {
    let url = URL(fileURLWithPath: arguments[2])
    let kind = arguments[3]
    let compression: Compression = arguments[4] == "none" ? .none : .gzip
    guard let objects = Int(arguments[5]), let journaled = Int(arguments[6]) else {
        throw HelperUsage(message: "OBJECTS and JOURNALED must be numbers")
    }
    let seed = KillTrialSeed(objects: objects, journaled: journaled)

    /// The store `kind` at `url`; `holdingWrites` keeps the journaled saves out of the snapshot
    /// file or database.
    func store(holdingWrites: Bool) -> StoreConfiguration {
        let interval: Duration = holdingWrites ? .seconds(3600) : .milliseconds(5)
        switch kind {
        case "sqlite":
            var options = SQLiteStoreOptions()
            // The writer's thread waits here, inside its transaction, until the process is killed.
            if holdingWrites { options.beforeTransaction = { _ in while true { sleep(3600) } } }
            return .sqlite(url, options: options)
        case "plist":
            return .file(url, format: .binaryPropertyList, compression: compression, coalescingInterval: interval)
        default:
            return .file(url, format: .json, compression: compression, coalescingInterval: interval)
        }
    }

    if arguments[1] == "seed-v1" {
        let first = try GraphContainer(for: KillTrialModelV1.types, store: store(holdingWrites: false))
        let context = first.newBackgroundContext()
        for tag in KillTrialSeed.tags { context.insert(tag) }
        for (index, memo) in seed.stored.enumerated() {
            context.insert(memo)
            if index % 500 == 499 { try context.save() }
        }
        try context.save()
        try await first.close()

        let second = try GraphContainer(for: KillTrialModelV1.types, store: store(holdingWrites: true))
        let journaling = second.newBackgroundContext()
        for j in 0..<journaled {
            let save = seed.journaledSave(j + 1)
            for memo in save.upserts { journaling.insert(memo) }
            journaling.delete(KillTrialModelV1.Memo.self, id: save.delete)
            try journaling.save()
        }
        try await second.flush()
        report("seeded")
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    let container = try GraphContainer(
        for: KillTrialModelV2.types, store: store(holdingWrites: false), version: 2, migrations: KillTrialModelV2.migrations)
    report("opened")
    let context = container.newBackgroundContext()
    let first = KillTrialModelV2.firstSaved
    var saved = try context.fetchCount(FetchDescriptor<KillTrialModelV2.Note>(predicate: #Predicate { $0.number > first }))
    while true {
        saved += 1
        context.insert(KillTrialModelV2.savedNote(saved, tag: KillTrialSeed.tags[saved % KillTrialSeed.tagCount].id))
        let pinned = KillTrialSeed.uuid(seed.pinned(bySave: saved))
        guard var note = context.model(KillTrialModelV2.Note.self, id: pinned) else {
            throw HelperUsage(message: "the migrated note \(pinned) is missing")
        }
        note.pinned = true
        context.insert(note)
        try context.save()
        report("saved \(saved)")
    }
}

struct HelperUsage: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
