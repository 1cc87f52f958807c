import Foundation
import GraphStoreSQLite
import GraphStoreTestSupport
import KillTrialModel
import Testing

@testable import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process opening a store of model version 1 with version 2 (so that the open migrates it)
/// and then saving, killed with SIGKILL at random moments: before, during and after the
/// migration, in the middle of its writes, and while it saves.
///
/// The version-1 store holds thousands of objects in its snapshot file or database and more
/// saves only in its journal (the version-1 process was killed before it wrote them anywhere
/// else). After every kill:
/// - the store opens with version 2 and holds every object of the version-1 store, migrated,
///   and every save the killed process reported as returned (with no gap);
/// - the version-1 app either opens it with all of its data (the migration did not get to
///   replace it) or is refused with ``GraphStoreError/newerModelVersion(path:found:supported:)``
///   naming the file; never anything else, and never once the killed process had opened it.
///
/// `swift test` runs a few trials per store kind; `scripts/kill-trials.sh N` runs N per kind
/// (`GRAPHSTORE_MIGRATION_KILL_TRIALS`).
@Suite(.serialized) struct MigrationKillTrialsTests {
    /// Trials per store kind: `GRAPHSTORE_MIGRATION_KILL_TRIALS`, or a few for `swift test`.
    static let trials = ProcessInfo.processInfo.environment["GRAPHSTORE_MIGRATION_KILL_TRIALS"].flatMap(Int.init) ?? 5
    /// Trials per store kind of the narrowest window: the same variable, or fewer.
    static let staleJournalTrials = ProcessInfo.processInfo.environment["GRAPHSTORE_MIGRATION_KILL_TRIALS"].flatMap(Int.init) ?? 3

    static let kinds = ["json", "plist", "sqlite"]

    /// Large enough that the migrating open takes tens of milliseconds.
    static let seed = KillTrialSeed(objects: 3000, journaled: 40)

    /// The file name of the store `kind`.
    static func storeName(_ kind: String) -> String {
        kind == "sqlite" ? "store.sqlite" : "store.\(kind).gz"
    }

    /// The version-1 store as a killed version-1 process left it, in `scratch/template`: its
    /// snapshot file or database, and a journal holding the seed's last saves.
    static func seededTemplate(_ kind: String, scratch: TemporaryDirectory) async throws -> URL {
        let template = scratch.file("template")
        let name = storeName(kind)
        try FileManager.default.createDirectory(at: template, withIntermediateDirectories: true)
        let seeding = try await run("seed-v1", store: template.appendingPathComponent(name), kind: kind, scratch: scratch, kill: .afterLine("seeded"))
        try #require(seeding.lines.contains("seeded"), "the version-1 helper did not seed the store: \(seeding.errorOutput)")
        let journal = try Data(contentsOf: template.appendingPathComponent(name + ".journal"))
        #expect(journal.count > 1000, "the version-1 store holds saves only in its journal")
        // The seed as the version-1 app reads it: every memo, the journaled saves included.
        let seedCheck = scratch.file("seed-check")
        try copyDirectory(template, to: seedCheck)
        defer { try? FileManager.default.removeItem(at: seedCheck) }
        let seedOpen = try await openWithVersionOne(seedCheck.appendingPathComponent(name), kind: kind)
        try #require(seedOpen == nil, "the version-1 app does not open its own store: \(seedOpen.map { "\($0)" } ?? "")")
        return template
    }

    @Test(arguments: kinds)
    func aMigratingOpenKilledAnywhereLosesNothing(kind: String) async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let name = Self.storeName(kind)
        // Copied for every trial.
        let template = try await Self.seededTemplate(kind, scratch: scratch)

        var openTime: Duration = .milliseconds(200)
        var reported = 0
        var killedBeforeOpened = 0
        var leftForVersionOne = 0
        var killedOnWrite = 0
        var failures = 0
        for trial in 0..<Self.trials {
            let trialDirectory = scratch.file("trial-\(trial)")
            try Self.copyDirectory(template, to: trialDirectory)
            let url = trialDirectory.appendingPathComponent(name)
            let plan = Self.plan(trial: trial, kind: kind, store: url, openTime: openTime)
            var runs = [try await Self.run("open-v2", store: url, kind: kind, scratch: scratch, kill: plan)]
            if trial % 3 == 2 {
                // A second process opens what the first left and is killed too.
                runs.append(try await Self.run(
                    "open-v2", store: url, kind: kind, scratch: scratch,
                    kill: .afterDelay(.microseconds(Int.random(in: 0...Int(openTime.microseconds * 6 / 5))))))
            }
            for run in runs {
                #expect(run.termination == .signalled(SIGKILL), "trial \(trial): the helper was not killed (\(run.termination)): \(run.errorOutput)")
                if run.killedOnFile { killedOnWrite += 1 }
                if !run.opened { killedBeforeOpened += 1 }
            }
            if trial == 0, let measured = runs[0].openedAfter { openTime = measured }
            let last = runs.compactMap(\.lastSaved).max() ?? 0
            reported += runs.map { $0.savedCount }.reduce(0, +)

            let outcome = try await Self.check(
                url, kind: kind, reported: last, migrationFinished: runs.contains { $0.opened }, trial: trial, scratch: scratch)
            if outcome.failed {
                failures += 1
                let kept = FileManager.default.temporaryDirectory.appendingPathComponent("migration-kill-trial-\(kind)-\(trial)-\(UUID().uuidString)")
                try? FileManager.default.copyItem(at: outcome.crashState, to: kept)
                Issue.record("trial \(trial) (\(plan)): the crash state is kept in \(kept.path)")
            }
            if outcome.versionOneOpened { leftForVersionOne += 1 }
            try? FileManager.default.removeItem(at: trialDirectory)
        }
        print("migration kill trials (\(kind)): \(Self.trials) trials, \(killedBeforeOpened) kills before the open returned, \(killedOnWrite) kills on a write of the migration, \(leftForVersionOne) stores left in version 1, \(reported) saves reported, \(failures) failed (open took \(openTime))")
    }

    /// The moment the windows of the first test are narrowest in: the migrated store is in
    /// place, and the old journal (in the old model, its records all in the migrated store) is
    /// not removed (snapshot) or replaced (SQLite) yet. Made here by putting the old journal
    /// back beside a migrated store; then a version-2 process opens it, saves and is killed.
    @Test(arguments: kinds)
    func aKillBeforeTheOldJournalIsGoneLosesNothing(kind: String) async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let name = Self.storeName(kind)
        let template = try await Self.seededTemplate(kind, scratch: scratch)
        let migrated = scratch.file("migrated")
        try Self.copyDirectory(template, to: migrated)
        let migratedURL = migrated.appendingPathComponent(name)
        let container = try GraphContainer(
            for: KillTrialModelV2.types, store: Self.configuration(migratedURL, kind: kind), version: 2, migrations: KillTrialModelV2.migrations)
        try await container.close()
        let journalName = name + ".journal"
        #expect(!FileManager.default.fileExists(atPath: migrated.appendingPathComponent(journalName).path))
        try FileManager.default.copyItem(at: template.appendingPathComponent(journalName), to: migrated.appendingPathComponent(journalName))

        var reported = 0
        var failures = 0
        for trial in 0..<Self.staleJournalTrials {
            let trialDirectory = scratch.file("trial-\(trial)")
            try Self.copyDirectory(migrated, to: trialDirectory)
            let url = trialDirectory.appendingPathComponent(name)
            var runs = [try await Self.run("open-v2", store: url, kind: kind, scratch: scratch, kill: .afterOpened(.milliseconds(trial == 0 ? 0 : Int.random(in: 0...100))))]
            if trial % 2 == 1 {
                // A second process opens what the first left (its saves after the old records).
                runs.append(try await Self.run("open-v2", store: url, kind: kind, scratch: scratch, kill: .afterOpened(.milliseconds(Int.random(in: 0...100)))))
            }
            for run in runs {
                #expect(run.opened && run.termination == .signalled(SIGKILL), "trial \(trial): the helper did not open the store: \(run.errorOutput)")
            }
            reported += runs.map(\.savedCount).reduce(0, +)
            let outcome = try await Self.check(
                url, kind: kind, reported: runs.compactMap(\.lastSaved).max() ?? 0, migrationFinished: true, trial: trial, scratch: scratch)
            if outcome.failed { failures += 1 }
            try? FileManager.default.removeItem(at: trialDirectory)
        }
        print("migration kill trials, old journal left (\(kind)): \(Self.staleJournalTrials) trials, \(reported) saves reported, \(failures) failed")
    }

    // MARK: - When to kill

    enum KillPlan: Sendable, CustomStringConvertible {
        /// So long after the start.
        case afterDelay(Duration)
        /// So long after the helper said "opened".
        case afterOpened(Duration)
        /// As soon as the helper printed this line.
        case afterLine(String)
        /// As soon as `happened` says so (or after 60 seconds), given the directory of the
        /// store and the names in it before the helper started; looked at every 0.1 ms.
        case when(String, @Sendable (_ directory: URL, _ before: Set<String>) -> Bool)

        var description: String {
            switch self {
            case .afterDelay(let delay): "kill \(delay) after the start"
            case .afterOpened(let delay): "kill \(delay) after the open returned"
            case .afterLine(let line): "kill after \"\(line)\""
            case .when(let what, _): "kill when \(what)"
            }
        }
    }

    /// Cycles through the moments: after the open returned (trial 0 measures how long it
    /// takes); as soon as the migrated snapshot replaced the old one (on SQLite: as soon as the
    /// write-ahead log grows, that is while the migration commits); on the first file the
    /// migration writes; once the old store's copy is in place (so: in the write of the
    /// migrated store); in the middle of the migrated snapshot's write; otherwise at a random
    /// moment up to a little past the time the open takes.
    static func plan(trial: Int, kind: String, store: URL, openTime: Duration) -> KillPlan {
        let window = Int(openTime.microseconds * 6 / 5)
        let storeName = store.lastPathComponent
        switch trial % 7 {
        case 0:
            return .afterOpened(.milliseconds(Int.random(in: 0...100)))
        case 1 where kind != "sqlite":
            let inode = try? FileStatus.of(path: store.path).get().inode
            return .when("the migrated snapshot replaced the old one") { _, _ in
                (try? FileStatus.of(path: store.path).get().inode).map { $0 != inode } ?? false
            }
        case 1:
            let log = store.path + "-wal"
            let size = FileStatus.size(atPath: log) ?? 0
            return .when("the write-ahead log grows") { _, _ in (FileStatus.size(atPath: log) ?? 0) > size }
        case 2:
            return .when("the first new file appears") { directory, before in
                newNames(in: directory, before: before).contains { name in
                    !name.hasSuffix("-shm") && !name.hasSuffix("-wal") && !name.hasSuffix("-journal") && !name.hasSuffix(".lock")
                }
            }
        case 3:
            return .when("the old store's copy is in place") { directory, before in
                newNames(in: directory, before: before).contains { $0.hasPrefix(storeName + ".v1") }
            }
        case 4 where kind != "sqlite":
            let prefix = AtomicFile.temporaryPrefix(for: store)
            return .when("the migrated snapshot's temporary file appears") { directory, before in
                newNames(in: directory, before: before).contains { $0.hasPrefix(prefix) }
            }
        default:
            return .afterDelay(.microseconds(Int.random(in: 0...window)))
        }
    }

    /// The names in `directory` that are not in `before`.
    static func newNames(in directory: URL, before: Set<String>) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { !before.contains($0) }
    }

    // MARK: - The helper

    struct Run: Sendable {
        var lines: [String]
        var termination: ChildProcess.Termination
        var errorOutput: String
        var openedAfter: Duration?
        var killedOnFile: Bool

        var opened: Bool { lines.contains("opened") }
        var savedNumbers: [Int] { lines.compactMap { $0.hasPrefix("saved ") ? Int($0.dropFirst(6)) : nil } }
        var lastSaved: Int? { savedNumbers.last }
        var savedCount: Int { savedNumbers.count }
    }

    /// Runs the crash helper in `mode` on `store` and kills it with SIGKILL as `plan` says;
    /// returns what it printed before it died.
    static func run(_ mode: String, store: URL, kind: String, scratch: TemporaryDirectory, kill plan: KillPlan) async throws -> Run {
        try await offCooperativePool {
            let errorURL = scratch.file("helper-\(UUID().uuidString).stderr")
            defer { try? FileManager.default.removeItem(at: errorURL) }
            let directory = store.deletingLastPathComponent()
            let before = Set((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            let start = ContinuousClock.now
            let child = try ChildProcess(
                productsDirectory(containing: "graphstore-crash-helper").appendingPathComponent("graphstore-crash-helper"),
                [mode, store.path, kind, "gzip", String(seed.objects), String(seed.journaled)],
                standardInput: .nullDevice, standardOutput: .pipe, standardError: .file(errorURL))
            let finished = Guarded(false)
            let caught = Guarded(false)
            let watcher = DispatchSemaphore(value: 0)
            if case .when(_, let happened) = plan {
                let thread = Thread {
                    defer { watcher.signal() }
                    let end = ContinuousClock.now + .seconds(60)
                    while !finished.withLock({ $0 }), ContinuousClock.now < end {
                        if happened(directory, before) {
                            caught.withLock { $0 = true }
                            break
                        }
                        // Look again soon, without spinning a core the helper needs.
                        usleep(100)
                    }
                    child.terminate()
                }
                thread.start()
            } else {
                watcher.signal()
            }
            var lines: [String] = []
            var openedAfter: Duration?
            // No helper may run for long: past this it is killed whatever the plan.
            var deadline = start + .seconds(120)
            if case .afterDelay(let delay) = plan { deadline = start + delay }
            while true {
                if let line = child.readLine(until: deadline) {
                    lines.append(line)
                    if line == "opened" {
                        openedAfter = ContinuousClock.now - start
                        if case .afterOpened(let delay) = plan { deadline = .now + delay }
                    }
                    if case .afterLine(let expected) = plan, line == expected { child.terminate() }
                    continue
                }
                if ContinuousClock.now >= deadline {
                    child.terminate()
                    // What it printed before it died.
                    while let line = child.readLine() { lines.append(line) }
                }
                break
            }
            finished.withLock { $0 = true }
            watcher.wait()
            let termination = try child.waitUntilExit()
            let errorOutput = (try? String(contentsOf: errorURL, encoding: .utf8)) ?? ""
            return Run(lines: lines, termination: termination, errorOutput: errorOutput, openedAfter: openedAfter, killedOnFile: caught.withLock { $0 })
        }
    }

    // MARK: - Checking

    struct Outcome {
        var failed: Bool
        var versionOneOpened: Bool
        var crashState: URL
    }

    static func configuration(_ url: URL, kind: String) -> StoreConfiguration {
        switch kind {
        case "sqlite": .sqlite(url)
        case "plist": .file(url, format: .binaryPropertyList, compression: .gzip)
        default: .file(url, format: .json, compression: .gzip)
        }
    }

    /// Checks what the kills left at `url`: a copy of it with the version-1 app, then the
    /// store itself with version 2.
    static func check(
        _ url: URL, kind: String, reported: Int, migrationFinished: Bool, trial: Int, scratch: TemporaryDirectory
    ) async throws -> Outcome {
        let crashState = scratch.file("crash-state-\(trial)")
        try copyDirectory(url.deletingLastPathComponent(), to: crashState)
        defer { try? FileManager.default.removeItem(at: crashState) }
        var failed = false

        // (c) The version-1 app: all of its data, or a clear refusal naming the file.
        let versionOne = scratch.file("version-one-\(trial)")
        try copyDirectory(url.deletingLastPathComponent(), to: versionOne)
        defer { try? FileManager.default.removeItem(at: versionOne) }
        let versionOneURL = versionOne.appendingPathComponent(url.lastPathComponent)
        var versionOneOpened = false
        switch try await openWithVersionOne(versionOneURL, kind: kind) {
        case nil:
            versionOneOpened = true
            if migrationFinished {
                Issue.record("trial \(trial): the version-1 app opened the store after the version-2 app had opened (and migrated) it")
                failed = true
            }
        case .newerModelVersion(let path, 2, 1)? where path.hasSuffix("/" + url.lastPathComponent):
            break
        case let error?:
            Issue.record("trial \(trial): the version-1 app neither opens the store nor is refused for its model version: \(error)")
            failed = true
        }

        // (a), (b) The version-2 app: every version-1 object migrated, every reported save.
        do {
            let container = try GraphContainer(
                for: KillTrialModelV2.types, store: configuration(url, kind: kind), version: 2, migrations: KillTrialModelV2.migrations)
            let notes = try container.mainContext.fetch(FetchDescriptor<KillTrialModelV2.Note>())
            let tags = try container.mainContext.fetch(FetchDescriptor<KillTrialModelV1.Tag>(sortBy: [SortDescriptor(\.name)]))
            let saved = notes.filter { $0.number > KillTrialModelV2.firstSaved }.sorted { $0.number < $1.number }
            let savedCount = saved.count
            let migrated = Dictionary(uniqueKeysWithValues: notes.filter { $0.number <= KillTrialModelV2.firstSaved }.map { ($0.id, $0) })
            let expected = seed.expected.mapValues { seed.migrated($0, afterSaves: savedCount) }
            let savesHeld = saved.map(\.number) == (0..<savedCount).map { KillTrialModelV2.firstSaved + $0 + 1 }
            let problems = [
                savedCount >= reported ? nil : "save \(reported) returned, the store holds \(savedCount) saves",
                savesHeld ? nil : "the saves in the store are not 1...\(savedCount) without gaps",
                saved == (0..<savedCount).map { KillTrialModelV2.savedNote($0 + 1, tag: KillTrialSeed.tags[($0 + 1) % KillTrialSeed.tagCount].id) }
                    ? nil : "a saved note differs from what its save inserted",
                difference(migrated, expected),
                tags == KillTrialSeed.tags.sorted { $0.name < $1.name } ? nil : "the tags are \(tags.count), not the \(KillTrialSeed.tagCount) of the version-1 store",
            ].compactMap { $0 }
            for problem in problems { Issue.record("trial \(trial): \(problem)") }
            if !problems.isEmpty { failed = true }
            try container.checkInvariants()
            try await container.close()
            if kind != "sqlite" {
                #expect(!FileManager.default.fileExists(atPath: url.path + ".journal"), "trial \(trial): close leaves no journal")
            }
        } catch {
            Issue.record("trial \(trial): the version-2 app does not open the store: \(error)")
            failed = true
        }
        if failed {
            // The files as the kill left them, for the caller to keep.
            let kept = scratch.file("failed-\(trial)")
            try? FileManager.default.moveItem(at: crashState, to: kept)
            return Outcome(failed: true, versionOneOpened: versionOneOpened, crashState: kept)
        }
        return Outcome(failed: false, versionOneOpened: versionOneOpened, crashState: crashState)
    }

    /// Opens the store at `url` with the version-1 app: `nil` when it opens and holds exactly
    /// the seed (a mismatch is recorded as an issue), or the error it throws.
    static func openWithVersionOne(_ url: URL, kind: String) async throws -> GraphStoreError? {
        let container: GraphContainer
        do {
            container = try GraphContainer(for: KillTrialModelV1.types, store: configuration(url, kind: kind))
        } catch let error as GraphStoreError {
            return error
        }
        let memos = try container.mainContext.fetch(FetchDescriptor<KillTrialModelV1.Memo>())
        let tags = try container.mainContext.fetch(FetchDescriptor<KillTrialModelV1.Tag>(sortBy: [SortDescriptor(\.name)]))
        if let problem = difference(Dictionary(uniqueKeysWithValues: memos.map { ($0.id, $0) }), seed.expected) {
            Issue.record("the version-1 app opens \(url.path) without all of its data: \(problem)")
        }
        #expect(tags == KillTrialSeed.tags.sorted { $0.name < $1.name }, "the version-1 app opens \(url.path) with all of its tags")
        try container.checkInvariants()
        try await container.close()
        return nil
    }

    /// What differs between `found` and `expected` (counts and a first example), or `nil`.
    static func difference<Value: Equatable>(_ found: [UUID: Value], _ expected: [UUID: Value]) -> String? {
        let missing = expected.keys.filter { found[$0] == nil }
        let extra = found.keys.filter { expected[$0] == nil }
        let changed = expected.keys.filter { found[$0] != nil && found[$0] != expected[$0] }
        guard !missing.isEmpty || !extra.isEmpty || !changed.isEmpty else { return nil }
        var text = "\(found.count) objects, \(expected.count) expected: \(missing.count) missing, \(extra.count) extra, \(changed.count) changed"
        if let id = missing.first { text += "; missing: \(expected[id]!)" }
        if let id = extra.first { text += "; extra: \(found[id]!)" }
        if let id = changed.first { text += "; changed: \(found[id]!), expected \(expected[id]!)" }
        return text
    }

    /// Copies every file of `source` into the new directory `destination`.
    static func copyDirectory(_ source: URL, to destination: URL) throws {
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: source.path) {
            try FileManager.default.copyItem(at: source.appendingPathComponent(name), to: destination.appendingPathComponent(name))
        }
    }
}

extension Duration {
    /// The whole microseconds in the duration.
    fileprivate var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
