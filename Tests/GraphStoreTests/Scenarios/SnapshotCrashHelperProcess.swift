import Foundation

@testable import GraphStore
import GraphStoreTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - The crash helper

/// The `graphstore-crash-helper` executable saving in a loop to a store, printing
/// "acked N" after each flush that made saves 1...N durable, or (`reportsEverySave`) "saved N"
/// after each save that returned.
final class CrashHelperProcess: @unchecked Sendable {
    // @unchecked Sendable: `killed`, `isReady` and `lastSeen` are read and written only with
    // `lock` held; `child` and `errorURL` never change.
    private let child: ChildProcess
    private let errorURL: URL
    private let lock = NSLock()
    private var killed = false
    private var isReady = false
    /// The last "saved N" seen so far.
    private var lastSeen: Int?

    /// Starts the helper on `store` (`format` json|plist|sqlite, `compression` gzip|none),
    /// numbering its saves from `start + 1` (`nil`: after the notes the store holds).
    init(store: URL, format: String, compression: String, start: Int?, reportsEverySave: Bool = false) throws {
        errorURL = store.deletingLastPathComponent().appendingPathComponent("helper-\(UUID().uuidString).stderr")
        child = try ChildProcess(
            productsDirectory(containing: "graphstore-crash-helper").appendingPathComponent("graphstore-crash-helper"),
            [store.path, format, compression, start.map(String.init) ?? "auto", reportsEverySave ? "saves" : "acks"],
            standardInput: .nullDevice, standardOutput: .pipe, standardError: .file(errorURL))
    }

    /// Reads until `count` more acknowledgements arrived and returns the last acknowledged
    /// number, or `nil` when the helper's output ended first or nothing came for `timeout`
    /// seconds.
    func waitForAcks(_ count: Int, timeout: Int32 = 30) async throws -> Int? {
        try await SnapshotTestKit.offload { self.readAcks(count, timeout: timeout) }
    }

    private func readAcks(_ count: Int, timeout: Int32) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        var seen = 0
        var last: Int?
        while seen < count {
            guard let line = child.readLine(until: .now + .seconds(timeout)) else { return nil }
            if line.hasPrefix("acked "), let number = Int(line.dropFirst(6)) {
                last = number
                seen += 1
            }
        }
        return last
    }

    /// Reads the helper's output until it says "ready" (its store is open) and reports its
    /// first save; returns whether it did within `timeout`.
    func waitForFirstSave(timeout: Duration = .seconds(60)) async throws -> Bool {
        try await SnapshotTestKit.offload {
            let deadline = ContinuousClock.now + timeout
            while !self.hasSaved, ContinuousClock.now < deadline {
                _ = self.readSaves(until: min(deadline, ContinuousClock.now + .milliseconds(20)))
            }
            return self.hasSaved
        }
    }

    private var hasSaved: Bool {
        lock.lock()
        defer { lock.unlock() }
        return isReady && lastSeen != nil
    }

    /// Reads "saved N" lines for `duration` (or until the output ends) and returns the last N.
    func lastSaveReported(within duration: Duration) async throws -> Int? {
        try await SnapshotTestKit.offload { self.readSaves(until: ContinuousClock.now + duration) }
    }

    /// Every "saved N" line the helper wrote before it died: call after ``kill()``. Returns
    /// the last N (also one read earlier).
    func lastSaveReportedBeforeDeath() async throws -> Int? {
        try await SnapshotTestKit.offload {
            _ = self.readSaves(until: nil)
            self.lock.lock()
            defer { self.lock.unlock() }
            return self.lastSeen
        }
    }

    /// Reads "saved N" lines until `deadline` (`nil`: until the output ends, or nothing came
    /// for 30 seconds) and returns the last N among them.
    private func readSaves(until deadline: ContinuousClock.Instant?) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        var last: Int?
        while let line = child.readLine(until: deadline ?? .now + .seconds(30)) {
            if line.hasPrefix("saved "), let number = Int(line.dropFirst(6)) {
                last = number
                lastSeen = number
            }
            if line == "ready" { isReady = true }
        }
        return last
    }

    /// Kills the helper as soon as a temporary file of `store` appears (that is, in the middle
    /// of a write), or after `deadline` when none does; returns whether it caught a write.
    func killDuringWrite(of store: URL, deadline: Duration = .seconds(5)) async throws -> Bool {
        let caught = try await SnapshotTestKit.offload {
            let clock = ContinuousClock()
            let end = clock.now + deadline
            let directory = store.deletingLastPathComponent().path
            let prefix = AtomicFile.temporaryPrefix(for: store) + "\(self.child.processIdentifier)-"
            while clock.now < end {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                if names.contains(where: { $0.hasPrefix(prefix) }) { return true }
                // Look again soon, without spinning a core the writer and other tests need.
                usleep(100)
            }
            return false
        }
        try await kill()
        return caught
    }

    /// Kills the helper with `SIGKILL` (if it still runs) and waits, off the cooperative pool,
    /// until it is gone.
    func kill() async throws {
        try await SnapshotTestKit.offload { self.killAndWait() }
    }

    /// ``kill()`` on the calling thread, for `deinit` (which finds the helper gone already
    /// when a test killed it).
    private func killAndWait() {
        lock.lock()
        defer { lock.unlock() }
        if !killed {
            killed = true
            child.terminate()
        }
        _ = try? child.waitUntilExit()
    }

    /// Whether the helper ended by `SIGKILL` (rather than exiting by itself).
    var diedOfSIGKILL: Bool {
        child.termination == .signalled(SIGKILL)
    }

    /// What the helper wrote to standard error.
    func standardError() -> String {
        (try? String(contentsOf: errorURL, encoding: .utf8)) ?? ""
    }

    deinit {
        killAndWait()
        try? FileManager.default.removeItem(at: errorURL)
    }
}
