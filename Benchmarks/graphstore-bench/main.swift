// graphstore-bench: GraphStore side by side with raw SQLite (GRDB) in one process run.
//
//   swift run -c release graphstore-bench [--json PATH] [--scale X] [--repetitions N] [--only 1,2,...,11] [--cpu-time]
//   graphstore-bench --open-loop items|posts|posts-newest|posts-journal PATH N   (N cold opens of one file, for a profiler)
//   graphstore-bench --save-loop N   (N one-object journaled saves, for a profiler)
//   graphstore-bench --bulk-save-loop N   (N new stores, each saving 50,000 items journaled, for a profiler)
//   graphstore-bench --write-loop json|plist N   (N snapshot writes of 50,000 posts, for a profiler)
//   graphstore-bench --indexed-save-loop N   (N saves of one post with three sorted indexes, for a profiler)
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

if let index = arguments.firstIndex(of: "--memory-probe") {
    try await memoryProbe(arguments[index + 1], arguments[index + 2])
    exit(0)
}

if let index = arguments.firstIndex(of: "--open-loop") {
    try await openLoop(arguments[index + 1], arguments[index + 2], Int(arguments[index + 3]) ?? 100)
    exit(0)
}

if let index = arguments.firstIndex(of: "--save-loop") {
    try await saveLoop(Int(arguments[index + 1]) ?? 100_000)
    exit(0)
}

if let index = arguments.firstIndex(of: "--bulk-save-loop") {
    try await bulkSaveLoop(Int(arguments[index + 1]) ?? 20)
    exit(0)
}

if let index = arguments.firstIndex(of: "--write-loop") {
    try await writeLoop(arguments[index + 1], Int(arguments[index + 2]) ?? 20)
    exit(0)
}

if let index = arguments.firstIndex(of: "--indexed-save-loop") {
    try indexedSaveLoop(Int(arguments[index + 1]) ?? 100_000)
    exit(0)
}

let scale = option("--scale").flatMap(Double.init) ?? 1
let repetitions = option("--repetitions").flatMap(Int.init) ?? 5
let only = Set((option("--only") ?? "1,2,3,4,5,6,7,8,9,10,11").split(separator: ",").compactMap { Int($0) })
let scenarios = Scenarios(harness: Harness(repetitions: repetitions, warmups: 1), scale: scale)
var rows: [Row] = []

@MainActor func run(_ number: Int, _ name: String, _ body: () async throws -> [Row]) async throws {
    guard only.contains(number) else { return }
    FileHandle.standardError.write(Data("running \(number). \(name)…\n".utf8))
    rows += try await body()
}

try await run(1, "write and delete items") { try await scenarios.writeAndDelete() }
try await run(2, "cold open") { try await scenarios.coldOpen() }
try await run(3, "fetch") { try scenarios.fetch() }
try await run(4, "small saves") { try scenarios.smallSaves() }
try await run(5, "main-context latency") { try await scenarios.latency() }
try await run(6, "coalescing") { try await scenarios.coalescing() }
try await run(7, "size and memory") { try await scenarios.sizeAndMemory(executable: CommandLine.arguments[0]) }
try await run(8, "snapshot files") { try await scenarios.snapshotFiles() }
try await run(9, "durability") { try await scenarios.durability() }
try await run(10, "saves with sorted indexes") { try scenarios.indexedSaves() + (try await scenarios.indexMemory(executable: CommandLine.arguments[0])) }
try await run(11, "migration") { try await scenarios.migration() }

print(markdown(rows))
if let path = option("--json") {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(rows).write(to: URL(fileURLWithPath: path))
}
