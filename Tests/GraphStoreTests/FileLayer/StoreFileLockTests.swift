import Foundation
import Testing

@testable import GraphStore
import GraphStoreTestSupport

// MARK: - StoreFileLock

@Suite("StoreFileLock excludes other holders")
struct StoreFileLockTests {

    @Test("The lock file sits beside the store and is created")
    func lockFileLocation() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let store = scratch.file("graph.store")
        #expect(StoreFileLock.lockFileURL(forStoreAt: store).path == store.path + ".lock")
        let lock = try StoreFileLock(forStoreAt: store)
        #expect(lock.path == store.path + ".lock")
        #expect(FileManager.default.fileExists(atPath: store.path + ".lock"))
        #expect(lock.isHeld)
    }

    @Test("A second lock in the same process is refused until the first is released")
    func secondLockInProcessIsRefused() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let store = scratch.file("graph.store")
        let first = try StoreFileLock(forStoreAt: store)

        #expect(throws: FileLayerError.locked(path: store.path + ".lock")) {
            try StoreFileLock(forStoreAt: store)
        }
        first.unlock()
        #expect(!first.isHeld)
        first.unlock()  // Idempotent.

        let second = try StoreFileLock(forStoreAt: store)
        #expect(second.isHeld)
    }

    @Test("Releasing the last reference releases the lock")
    func deinitReleases() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let store = scratch.file("graph.store")
        var first: StoreFileLock? = try StoreFileLock(forStoreAt: store)
        #expect(first?.isHeld == true)
        first = nil
        let second = try StoreFileLock(forStoreAt: store)
        #expect(second.isHeld)
    }

    @Test("Different stores do not conflict")
    func independentStores() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let one = try StoreFileLock(forStoreAt: scratch.file("one.store"))
        let two = try StoreFileLock(forStoreAt: scratch.file("two.store"))
        #expect(one.isHeld && two.isHeld)
    }

    @Test("A lock held by another process makes ours throw until that process exits")
    func lockHeldByChildProcessKeepsUsOut() async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let store = scratch.file("graph.store")
        let lockPath = store.path + ".lock"
        let script = """
            import fcntl,sys
            f=open(sys.argv[1],'w'); fcntl.flock(f, fcntl.LOCK_EX)
            print('locked', flush=True); sys.stdin.read()
            """
        // Starting it, reading from it and waiting for it happen off the cooperative pool.
        let (child, locked) = try await offCooperativePool {
            let child = try ChildProcess(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, lockPath],
                standardInput: .pipe, standardError: .inherit)
            return (child, child.waitForLine("locked"))
        }
        try #require(locked, "child never took the lock")

        #expect(throws: FileLayerError.locked(path: lockPath)) {
            try StoreFileLock(forStoreAt: store)
        }
        child.closeStandardInput()
        let termination = try await offCooperativePool { try child.waitUntilExit() }
        #expect(termination == .exited(0))

        let lock = try StoreFileLock(forStoreAt: store)
        #expect(lock.isHeld)
    }

    @Test("Our lock is visible to another process, and its release too")
    func childProcessSeesOurLock() async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let store = scratch.file("graph.store")
        let lockPath = store.path + ".lock"
        let probe = """
            import fcntl,sys
            f=open(sys.argv[1],'a')
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB); print('free')
            except BlockingIOError:
                print('busy')
            """
        let lock = try StoreFileLock(forStoreAt: store)
        let whileHeld = try await runPython(probe, [lockPath])
        #expect(String(decoding: whileHeld.output, as: UTF8.self) == "busy\n")

        lock.unlock()
        let afterRelease = try await runPython(probe, [lockPath])
        #expect(String(decoding: afterRelease.output, as: UTF8.self) == "free\n")
    }
}
