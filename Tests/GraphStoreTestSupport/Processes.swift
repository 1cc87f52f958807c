import Foundation
import GraphStore

/// The output of a finished process.
public struct ProcessResult: Sendable {
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

/// Runs `executable` with `arguments` and waits for it; standard input is empty and both output
/// streams are read fully.
///
/// Blocks the calling thread until the process exits: from async code that must not hold a
/// thread of the cooperative pool, run it on a thread of its own.
public func runProcess(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = Pipe(), error = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read both pipes concurrently so a chatty process cannot fill one and block.
    let errorData = Guarded(Data())
    let errorRead = DispatchSemaphore(value: 0)
    let errorHandle = error.fileHandleForReading
    DispatchQueue.global().async {
        let data = errorHandle.readDataToEndOfFile()
        errorData.withLock { $0 = data }
        errorRead.signal()
    }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    errorRead.wait()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus, output: outputData, errorOutput: errorData.value)
}

/// Runs the command `arguments[0]`, found on the `PATH`, with the rest of `arguments`.
public func runCommand(_ arguments: [String]) throws -> ProcessResult {
    try runProcess(URL(fileURLWithPath: "/usr/bin/env"), arguments)
}

/// Runs `python3 -c script arguments…`; `arguments` are `sys.argv[1...]`.
public func runPython(_ script: String, _ arguments: [String] = []) throws -> ProcessResult {
    try runCommand(["python3", "-c", script] + arguments)
}

/// Runs `python3 -c script arguments…` and returns its standard output.
///
/// - Throws: ``ProcessFailure`` with Python's standard error when it exits non-zero.
public func pythonOutput(_ script: String, _ arguments: [String] = []) throws -> Data {
    let result = try runPython(script, arguments)
    guard result.status == 0 else {
        throw ProcessFailure(command: "python3", status: result.status, standardError: result.standardError)
    }
    return result.output
}

/// Runs the product `name` (an executable built next to the test runner) with `arguments`.
public func runProduct(_ name: String, _ arguments: [String]) throws -> ProcessResult {
    try runProcess(productsDirectory(containing: name).appendingPathComponent(name), arguments)
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
