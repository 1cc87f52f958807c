import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - FaultInjectingFileSystem

/// A ``FileSystem`` that forwards to another one but can be told to fail,
/// for tests: a disk that fills up after N bytes, an `open` refused with
/// `EACCES`, a failing `fsync` or `rename`, short writes and `EINTR`.
///
/// Faults stay active until ``clearFaults()``. The fault list and counters
/// live behind a lock, so one instance may be shared across tasks.
package final class FaultInjectingFileSystem: FileSystem {

    // MARK: - Fault

    /// One kind of misbehaviour. Several may be active at once.
    package enum Fault: Sendable, Equatable {
        /// Every `open` fails with `errno`.
        case open(errno: Int32)
        /// Writes succeed for `bytes` more bytes (the write that crosses the
        /// budget is cut short, like a filling disk), then fail with `errno`.
        case writesAfter(bytes: Int, errno: Int32)
        /// Every `read` fails with `errno`.
        case read(errno: Int32)
        /// Every `fsync` of a file fails with `errno`.
        case fsync(errno: Int32)
        /// Every `close` fails with `errno` (the descriptor is still closed).
        case close(errno: Int32)
        /// Every `rename` fails with `errno`.
        case rename(errno: Int32)
        /// Every ``FileSystem/syncDirectory(_:)`` fails with `errno`.
        case syncDirectory(errno: Int32)
        /// Each `write` transfers at most `maxBytesPerCall` bytes.
        case shortWrites(maxBytesPerCall: Int)
        /// Every other `write`, `read` and `fsync` fails with `EINTR` first.
        case interruptions
    }

    // MARK: - Statistics

    /// Counters of what the wrapped file system was asked to do.
    package struct Statistics: Sendable, Equatable {
        /// `write` calls that reached the wrapped file system.
        package var writeCalls = 0
        /// Bytes written through the wrapped file system.
        package var bytesWritten = 0
        /// Calls that failed with an injected error (including `EINTR`).
        package var injectedFailures = 0
        /// Paths passed to `open`, in order.
        package var openedPaths: [String] = []
    }

    // MARK: - State

    fileprivate struct State {
        var faults: [Fault] = []
        /// Bytes written since the `writesAfter` fault was injected.
        var bytesSinceInjection = 0
        var interruptNext = true
        var statistics = Statistics()
        var beforeFsync: (@Sendable () -> Void)?
    }

    private let base: any FileSystem
    private let state = Guarded(State())

    /// Wraps `base` (the real file system by default), with no faults active.
    package init(wrapping base: any FileSystem = PosixFileSystem()) {
        self.base = base
    }

    // MARK: - Control

    /// Adds `fault`; it applies to every later call until cleared.
    ///
    /// - Complexity: O(1).
    package func inject(_ fault: Fault) {
        state.withLock { state in
            if case .writesAfter = fault { state.bytesSinceInjection = 0 }
            state.faults.append(fault)
        }
    }

    /// Removes all faults; later calls behave like the wrapped file system.
    ///
    /// - Complexity: O(1).
    package func clearFaults() {
        state.withLock { $0.faults.removeAll() }
    }

    /// Runs `body` at the start of every later `fsync` of a file, before any injected fault
    /// (`nil`: stops): for a test that makes something happen while an fsync is under way.
    ///
    /// - Complexity: O(1).
    package func beforeEachFsync(_ body: (@Sendable () -> Void)?) {
        state.withLock { $0.beforeFsync = body }
    }

    /// A snapshot of the counters.
    package var statistics: Statistics {
        state.withLock { $0.statistics }
    }

    // MARK: - FileSystem

    package func open(_ path: String, flags: Int32, permissions: mode_t) throws(SystemCallError) -> Int32 {
        try failIfInjected { state in
            state.statistics.openedPaths.append(path)
            return state.faults.lazy.compactMap { if case .open(let code) = $0 { code } else { nil } }.first
        }
        return try base.open(path, flags: flags, permissions: permissions)
    }

    package func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        try failIfInjected { state in
            state.interruption() ?? state.faults.lazy.compactMap {
                if case .read(let code) = $0 { code } else { nil }
            }.first
        }
        return try base.read(descriptor, into: buffer)
    }

    package func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        let allowed: Result<Int, SystemCallError> = state.withLock { state in
            if let code = state.interruption() {
                state.statistics.injectedFailures += 1
                return .failure(SystemCallError(code))
            }
            var allowed = buffer.count
            for fault in state.faults {
                switch fault {
                case .shortWrites(let limit):
                    allowed = min(allowed, max(limit, 1))
                case .writesAfter(let budget, let code):
                    let remaining = budget - state.bytesSinceInjection
                    guard remaining > 0 || buffer.isEmpty else {
                        state.statistics.injectedFailures += 1
                        return .failure(SystemCallError(code))
                    }
                    allowed = min(allowed, remaining)
                default:
                    break
                }
            }
            return .success(allowed)
        }
        let count = try base.write(descriptor, from: UnsafeRawBufferPointer(rebasing: buffer[0..<allowed.get()]))
        state.withLock { state in
            state.bytesSinceInjection += count
            state.statistics.writeCalls += 1
            state.statistics.bytesWritten += count
        }
        return count
    }

    package func status(_ descriptor: Int32) throws(SystemCallError) -> FileStatus {
        try base.status(descriptor)
    }

    package func fsync(_ descriptor: Int32) throws(SystemCallError) {
        state.withLock { $0.beforeFsync }?()
        try failIfInjected { state in
            state.interruption() ?? state.faults.lazy.compactMap {
                if case .fsync(let code) = $0 { code } else { nil }
            }.first
        }
        try base.fsync(descriptor)
    }

    package func close(_ descriptor: Int32) throws(SystemCallError) {
        let injected = state.withLock { state in
            state.faults.lazy.compactMap { if case .close(let code) = $0 { code } else { nil } }.first
        }
        try base.close(descriptor)
        if let injected {
            state.withLock { $0.statistics.injectedFailures += 1 }
            throw SystemCallError(injected)
        }
    }

    package func rename(_ source: String, to destination: String) throws(SystemCallError) {
        try failIfInjected { state in
            state.faults.lazy.compactMap { if case .rename(let code) = $0 { code } else { nil } }.first
        }
        try base.rename(source, to: destination)
    }

    package func unlink(_ path: String) throws(SystemCallError) {
        try base.unlink(path)
    }

    package func syncDirectory(_ path: String) throws(SystemCallError) {
        try failIfInjected { state in
            state.faults.lazy.compactMap { if case .syncDirectory(let code) = $0 { code } else { nil } }.first
        }
        try base.syncDirectory(path)
    }

    // MARK: - Private helpers

    /// Runs `decide` under the lock; throws the errno it returns, if any.
    private func failIfInjected(_ decide: (inout State) -> Int32?) throws(SystemCallError) {
        let code = state.withLock { state -> Int32? in
            let code = decide(&state)
            if code != nil { state.statistics.injectedFailures += 1 }
            return code
        }
        if let code { throw SystemCallError(code) }
    }
}

// MARK: - Interruptions

extension FaultInjectingFileSystem.State {
    /// `EINTR` on every other call while `.interruptions` is active.
    fileprivate mutating func interruption() -> Int32? {
        guard faults.contains(.interruptions) else { return nil }
        defer { interruptNext.toggle() }
        return interruptNext ? EINTR : nil
    }
}
