import CGraphStoreTestSupport
import Foundation
import GraphStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process for tests, started with `posix_spawn`: what the tests use instead of
/// `Foundation.Process`.
///
/// On Linux, `Process.run()` reads past the end of a heap buffer while it looks for the highest
/// open descriptor (to close every other one in the child); now and then that crashed the whole
/// test process.
///
/// Like `Process`, this gives the child a process group of its own, none of this process's
/// descriptors but the standard input, output and error chosen here, and this process's
/// environment unless given another. Unlike it, nothing watches the child in the background:
/// ``waitUntilExit()`` reaps it, and a child still running when the last reference to its
/// `ChildProcess` goes is killed and reaped then.
///
/// ```swift
/// let child = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script], standardInput: .pipe)
/// #expect(child.waitForLine("locked"))
/// child.closeStandardInput()
/// #expect(try child.waitUntilExit() == .exited(0))
/// ```
///
/// Starting, reading and waiting block the calling thread: from an async test, call them through
/// ``offCooperativePool(_:)``.
public final class ChildProcess: Sendable {
    /// Where the child's standard input comes from.
    public enum Input: Sendable {
        /// `/dev/null`: the child reads the end of its input at once.
        case nullDevice
        /// A pipe from this process that stays open until ``ChildProcess/closeStandardInput()``.
        case pipe
    }

    /// Where the child's standard output or standard error goes.
    public enum Output: Sendable {
        /// A pipe this process reads: ``ChildProcess/readLine(until:)``,
        /// ``ChildProcess/readAllOutput()``.
        case pipe
        /// `/dev/null`.
        case nullDevice
        /// This process's own standard output or standard error.
        case inherit
        /// The file at the URL, created or truncated.
        case file(URL)
    }

    /// How a child ended.
    public enum Termination: Sendable, Equatable {
        /// It exited with this status.
        case exited(Int32)
        /// This signal ended it.
        case signalled(Int32)

        /// The exit status, or the number of the signal: what `Process.terminationStatus` says.
        public var status: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): signal
            }
        }

        /// Decodes a status from `waitpid` by hand, as `WIFEXITED`, `WEXITSTATUS` and `WTERMSIG`
        /// would: C macros that Swift does not import. (A stopped child, whose low seven bits
        /// are 0x7f, is never reported: nothing here waits with `WUNTRACED`.)
        init(waitStatus: Int32) {
            let signal = waitStatus & 0x7f
            self = signal == 0 ? .exited((waitStatus >> 8) & 0xff) : .signalled(signal)
        }
    }

    /// The child's process identifier.
    public let processIdentifier: pid_t

    private struct State {
        /// The write end of the pipe to the child's standard input; -1 without one, or once closed.
        var standardInput: Int32
        /// Set when the child is reaped: from then on its process identifier may be another's.
        var termination: Termination?
    }

    private let state: Guarded<State>
    /// The read end of the pipe from the child's standard output, if it is one.
    private let standardOutput: Guarded<PipeReader>?
    /// The read end of the pipe from the child's standard error, if it is one.
    private let standardError: Guarded<PipeReader>?

    /// Starts `executable` with `arguments` (its `argv[0]` is the executable's path) and
    /// `environment` (`nil`: this process's own).
    ///
    /// - Throws: ``ChildProcessFailure`` when a pipe cannot be made or the spawn fails (say,
    ///   for an executable that is not there).
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
        standardInput: Input = .nullDevice, standardOutput: Output = .pipe, standardError: Output = .pipe
    ) throws {
        let path = executable.path
        // The child's ends of the pipes are closed here once it has its copies; this process's
        // ends are kept, unless the spawn fails.
        var childEnds: [Int32] = []
        var parentEnds: [Int32] = []
        var spawned = false
        defer {
            for descriptor in childEnds { _ = close(descriptor) }
            if !spawned {
                for descriptor in parentEnds { _ = close(descriptor) }
            }
        }

        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        try Self.check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init", path)
        defer { posix_spawn_file_actions_destroy(&actions) }

        var inputEnd: Int32 = -1
        switch standardInput {
        case .nullDevice:
            try Self.check(posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0), "posix_spawn_file_actions_addopen", path)
        case .pipe:
            let pipe = try Self.makePipe(path)
            childEnds.append(pipe.read)
            parentEnds.append(pipe.write)
            inputEnd = pipe.write
            try Self.check(posix_spawn_file_actions_adddup2(&actions, pipe.read, STDIN_FILENO), "posix_spawn_file_actions_adddup2", path)
        }
        var outputEnds: [Int32] = []
        for (target, output) in [(STDOUT_FILENO, standardOutput), (STDERR_FILENO, standardError)] {
            switch output {
            case .pipe:
                let pipe = try Self.makePipe(path)
                childEnds.append(pipe.write)
                parentEnds.append(pipe.read)
                outputEnds.append(pipe.read)
                try Self.check(posix_spawn_file_actions_adddup2(&actions, pipe.write, target), "posix_spawn_file_actions_adddup2", path)
            case .nullDevice:
                outputEnds.append(-1)
                try Self.check(posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0), "posix_spawn_file_actions_addopen", path)
            case .inherit:
                outputEnds.append(-1)
            case .file(let url):
                outputEnds.append(-1)
                try Self.check(posix_spawn_file_actions_addopen(&actions, target, url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644), "posix_spawn_file_actions_addopen", url.path)
            }
        }

        try Self.check(posix_spawnattr_init(&attributes), "posix_spawnattr_init", path)
        defer { posix_spawnattr_destroy(&attributes) }
        // Every descriptor of this process but the three above stays out of the child, as
        // `Process` has it: the pipes' own ends are close-on-exec, and so is every descriptor
        // GraphStore opens, but not necessarily every one of the libraries and the test runner.
        #if canImport(Darwin)
        try Self.check(posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_CLOEXEC_DEFAULT)), "posix_spawnattr_setflags", path)
        #else
        try Self.check(posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP)), "posix_spawnattr_setflags", path)
        let closed = graphstore_spawn_close_from(&actions, STDERR_FILENO + 1)
        if closed == ENOSYS {
            // An older C library: at least the child's ends of the pipes, which it has as 0, 1
            // and 2 by now.
            for descriptor in childEnds {
                try Self.check(posix_spawn_file_actions_addclose(&actions, descriptor), "posix_spawn_file_actions_addclose", path)
            }
        } else {
            try Self.check(closed, "posix_spawn_file_actions_addclosefrom_np", path)
        }
        #endif

        // The C strings of the arguments and environment, freed once the child has its copies.
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] =
            (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for string in argv + envp { free(string) }
        }

        var pid: pid_t = 0
        try Self.check(posix_spawn(&pid, path, &actions, &attributes, argv, envp), "posix_spawn", path)
        spawned = true
        processIdentifier = pid
        state = Guarded(State(standardInput: inputEnd, termination: nil))
        self.standardOutput = outputEnds[0] >= 0 ? Guarded(PipeReader(descriptor: outputEnds[0])) : nil
        self.standardError = outputEnds[1] >= 0 ? Guarded(PipeReader(descriptor: outputEnds[1])) : nil
    }

    /// A pipe with both ends close-on-exec from the start, so that no child another thread
    /// starts meanwhile inherits one (and keeps it open).
    private static func makePipe(_ path: String) throws -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        guard graphstore_pipe_cloexec(&descriptors) == 0 else {
            throw ChildProcessFailure(call: "pipe2", path: path, code: errno)
        }
        return (descriptors[0], descriptors[1])
    }

    /// Throws for a non-zero `result`: the error number the `posix_spawn` calls return.
    private static func check(_ result: Int32, _ call: String, _ path: String) throws {
        guard result == 0 else { throw ChildProcessFailure(call: call, path: path, code: result) }
    }

    // MARK: - Standard input

    /// Closes the pipe to the child's standard input, so that it reads the end of its input.
    /// Does nothing the second time, or without a pipe.
    public func closeStandardInput() {
        state.withLock { state in
            guard state.standardInput >= 0 else { return }
            _ = close(state.standardInput)
            state.standardInput = -1
        }
    }

    // MARK: - Output

    /// The next line the child writes to its standard output (a pipe), without the newline.
    ///
    /// `nil` once the output ended, or when no whole line came by `deadline` (`nil`: however
    /// long it takes). A last line without a newline is never returned: the child may have
    /// died in the middle of writing it. Blocks the calling thread.
    public func readLine(until deadline: ContinuousClock.Instant? = nil) -> String? {
        guard let standardOutput else { preconditionFailure("the child's standard output is not a pipe") }
        return standardOutput.withLock { $0.nextLine(until: deadline) }
    }

    /// Reads the child's standard output line by line until the line `expected`; returns
    /// whether it came before the output ended or `deadline` (`nil`: however long it takes)
    /// passed. Blocks the calling thread.
    public func waitForLine(_ expected: String, until deadline: ContinuousClock.Instant? = nil) -> Bool {
        while let line = readLine(until: deadline) {
            if line == expected { return true }
        }
        return false
    }

    /// Everything the child writes to its standard output and standard error (those that are
    /// pipes; empty for the others), read to their ends: both at once, standard error on a
    /// thread of its own, so that a child that fills one pipe while this waits on the other
    /// cannot stall. Blocks the calling thread until the child closed both (normally: exited).
    public func readAllOutput() -> (output: Data, errorOutput: Data) {
        let errorData = Guarded(Data())
        let errorRead = DispatchSemaphore(value: 0)
        if let standardError {
            let reader = Thread {
                let data = standardError.withLock { $0.readToEnd() }
                errorData.withLock { $0 = data }
                errorRead.signal()
            }
            reader.start()
        } else {
            errorRead.signal()
        }
        let outputData = standardOutput?.withLock { $0.readToEnd() } ?? Data()
        errorRead.wait()
        return (outputData, errorData.value)
    }

    // MARK: - Ending

    /// How the child ended, once ``waitUntilExit()`` reaped it; `nil` before.
    public var termination: Termination? {
        state.withLock { $0.termination }
    }

    /// Waits until the child ends, reaps it and returns how it ended (at once when it was
    /// reaped already). Blocks the calling thread.
    ///
    /// - Throws: ``ChildProcessFailure`` when the system cannot wait for it.
    @discardableResult
    public func waitUntilExit() throws -> Termination {
        if let termination { return termination }
        // Wait for the end without reaping, outside the lock, so that `terminate()` can still
        // signal the child meanwhile; then reap under the lock, where `terminate()` checks that
        // the process identifier is still the child's.
        var info = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) != 0 {
            let error = errno
            if error == EINTR { continue }
            if error == ECHILD { break }  // Another thread reaped it meanwhile.
            throw ChildProcessFailure(call: "waitid", path: "process \(processIdentifier)", code: error)
        }
        return try state.withLock { state in
            if let termination = state.termination { return termination }
            var status: Int32 = 0
            while waitpid(processIdentifier, &status, 0) == -1 {
                let error = errno
                if error == EINTR { continue }
                throw ChildProcessFailure(call: "waitpid", path: "process \(processIdentifier)", code: error)
            }
            let termination = Termination(waitStatus: status)
            state.termination = termination
            return termination
        }
    }

    /// Sends the child `SIGKILL`, unless it was reaped already (its process identifier may be
    /// another process's by then). Does not wait for it: ``waitUntilExit()`` does.
    public func terminate() {
        state.withLock { state in
            guard state.termination == nil else { return }
            _ = kill(processIdentifier, SIGKILL)
        }
    }

    deinit {
        closeStandardInput()
        if termination == nil {
            terminate()
            _ = try? waitUntilExit()
        }
        standardOutput?.withLock { $0.closeDescriptor() }
        standardError?.withLock { $0.closeDescriptor() }
    }
}

/// A ``ChildProcess`` that could not be started or waited for.
public struct ChildProcessFailure: Error, CustomStringConvertible {
    /// The system call that failed.
    public let call: String
    /// The executable, file or process it was about.
    public let path: String
    /// The error number.
    public let code: Int32

    public var description: String { "\(call) failed for \(path): \(String(cString: strerror(code)))" }
}

/// The read end of a pipe from a child, with what was read from it and not returned yet.
private struct PipeReader {
    private var descriptor: Int32
    private var pending: [UInt8] = []
    /// Whether the pipe has nothing more: the child closed it, reading failed, or it is closed.
    private var ended = false

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next whole line, without its newline; `nil` at the end, or when none came by
    /// `deadline`.
    mutating func nextLine(until deadline: ContinuousClock.Instant?) -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            guard !ended else { return nil }
            if let deadline, !isReadable(by: deadline) { return nil }
            readMore()
        }
    }

    /// Everything not returned yet, up to the end.
    mutating func readToEnd() -> Data {
        while !ended { readMore() }
        defer { pending = [] }
        return Data(pending)
    }

    mutating func closeDescriptor() {
        if descriptor >= 0 { _ = close(descriptor) }
        descriptor = -1
        ended = true
    }

    /// Whether reading would not block, waiting until `deadline` at most: there is data, or
    /// the end. Once `deadline` passed, `false` even when there is (a child that writes without
    /// a pause would keep a reader forever).
    private func isReadable(by deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let (seconds, attoseconds) = left.components
            // Milliseconds, rounded up so that the wait does not end a little before `deadline`.
            let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: milliseconds))
            if ready < 0 && errno == EINTR { continue }
            // A failed poll counts as readable: the read then says what the matter is.
            return ready != 0
        }
    }

    /// One read of what is there (blocking until there is something); at the end, or on an
    /// error, `ended`.
    private mutating func readMore() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count > 0 {
                pending.append(contentsOf: buffer[0..<count])
            } else {
                ended = true
            }
            return
        }
    }
}
