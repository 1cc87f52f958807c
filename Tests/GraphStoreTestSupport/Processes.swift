import Foundation

/// The output of a finished process.
public struct ProcessResult: Sendable {
    public let status: Int32
    public let standardOutput: String
    public let standardError: String
}

/// Runs the product `name` (an executable built next to the test runner) with `arguments`.
public func runProduct(_ name: String, _ arguments: [String]) throws -> ProcessResult {
    try runProcess(productsDirectory(containing: name).appendingPathComponent(name), arguments)
}

/// Runs `executable` with `arguments` and waits for it; both output streams are read fully.
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
    let errorData = LockedData()
    let errorRead = DispatchSemaphore(value: 0)
    let errorHandle = error.fileHandleForReading
    DispatchQueue.global().async {
        errorData.set(errorHandle.readDataToEndOfFile())
        errorRead.signal()
    }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    errorRead.wait()
    return ProcessResult(
        status: process.terminationStatus, standardOutput: String(decoding: outputData, as: UTF8.self),
        standardError: String(decoding: errorData.value, as: UTF8.self))
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



/// Data handed from a reader thread.
private final class LockedData: Sendable {
    private let state = Locked<Data?>(nil)
    func set(_ data: Data) { state.withLock { $0 = data } }
    var value: Data { state.withLock { $0 ?? Data() } }
}
