import Foundation
import GraphStore

/// The output of a finished process.
public struct ProcessResult: Sendable {
    /// The exit status, or the number of the signal that ended the process.
    public let status: Int32
    /// Everything the process wrote to standard output.
    public let output: Data
    /// Everything the process wrote to standard error.
    public let errorOutput: Data

    /// Standard output as UTF-8 text.
    public var standardOutput: String { String(decoding: output, as: UTF8.self) }
    /// Standard error as UTF-8 text.
    public var standardError: String { String(decoding: errorOutput, as: UTF8.self) }
}

/// A child process that exited with a non-zero status.
public struct ProcessFailure: Error, CustomStringConvertible {
    public let command: String
    public let status: Int32
    public let standardError: String
    public var description: String { "\(command) exited with \(status): \(standardError)" }
}

/// Runs blocking `work` on a thread of its own and returns (or throws) what it does.
///
/// The cooperative pool that runs async tests has only as many threads as the machine has
/// cores, and every suite shares it: a test that waits there for a child process, a pipe or a
/// semaphore stalls every other async test for as long. Such waits go through this instead.
public func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.stackSize = 4 << 20
        thread.start()
    }
}

/// Runs `executable` with `arguments` and waits for it; standard input is empty and both output
/// streams are read fully.
///
/// The process is started, read and waited for on a thread of its own (see
/// ``offCooperativePool(_:)``), never on a thread of the cooperative pool.
public func runProcess(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) async throws -> ProcessResult {
    try await offCooperativePool { try runProcessBlocking(executable, arguments, environment: environment) }
}

/// The body of ``runProcess(_:_:environment:)``: blocks the calling thread until the process
/// exits.
private func runProcessBlocking(_ executable: URL, _ arguments: [String], environment: [String: String]?) throws -> ProcessResult {
    let child = try ChildProcess(executable, arguments, environment: environment)
    // Both pipes at once, so that a chatty process cannot fill one and block.
    let (output, errorOutput) = child.readAllOutput()
    let termination = try child.waitUntilExit()
    return ProcessResult(status: termination.status, output: output, errorOutput: errorOutput)
}

/// Runs the command `arguments[0]`, found on the `PATH`, with the rest of `arguments`.
public func runCommand(_ arguments: [String]) async throws -> ProcessResult {
    try await runProcess(URL(fileURLWithPath: "/usr/bin/env"), arguments)
}

/// Runs `python3 -c script arguments…`; `arguments` are `sys.argv[1...]`.
public func runPython(_ script: String, _ arguments: [String] = []) async throws -> ProcessResult {
    try await runCommand(["python3", "-c", script] + arguments)
}

/// Runs `python3 -c script arguments…` and returns its standard output.
///
/// - Throws: ``ProcessFailure`` with Python's standard error when it exits non-zero.
public func pythonOutput(_ script: String, _ arguments: [String] = []) async throws -> Data {
    let result = try await runPython(script, arguments)
    guard result.status == 0 else {
        throw ProcessFailure(command: "python3", status: result.status, standardError: result.standardError)
    }
    return result.output
}

/// Runs the product `name` (an executable built next to the test runner) with `arguments`.
public func runProduct(_ name: String, _ arguments: [String]) async throws -> ProcessResult {
    try await runProcess(productsDirectory(containing: name).appendingPathComponent(name), arguments)
}

/// The build products directory that holds the executable `name`: the test runner's own
/// directory or one of its parents.
public func productsDirectory(containing name: String) throws -> URL {
    var candidate = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<6 {
        if FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent(name).path) { return candidate }
        candidate = candidate.deletingLastPathComponent()
    }
    throw ProductNotFound(name: name)
}

public struct ProductNotFound: Error, CustomStringConvertible {
    public let name: String
    public var description: String { "the executable \(name) was not found next to the test runner \(CommandLine.arguments[0])" }
}
